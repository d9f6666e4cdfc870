import ArgumentParser
import Foundation
import KioskCore
import KioskStore

/// `kiosk offers …`: an auto-renewable subscription's introductory and promotional offers. Each change reads the
/// product and sends back the offer list it changed, as App Store Connect's "Subscription Prices" page does.
struct OffersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "offers", abstract: "Set and list the introductory and promotional offers of a subscription.",
        subcommands: [
            List.self, SetIntroductory.self, RemoveIntroductory.self, AddPromotional.self, UpdatePromotional.self,
            RemovePromotional.self,
        ])

    /// `--app`, `--product` and the connection: the subscription every offers command works on.
    struct ProductOptions: ParsableArguments {
        @Option(help: "The app's bundle id.") var app: String
        @Option(help: "The auto-renewable product id.") var product: String
        @OptionGroup var connection: ConnectionOptions

        var path: String { "/apps/\(app.pathEscaped)/products/\(product.pathEscaped)" }

        /// Reads the product, lets `change` edit its offers and sends the lists it changed; prints `done` and the
        /// offers the store kept.
        func change(_ done: String, _ change: (inout ProductResource) throws -> Void) async throws {
            let client = connection.client
            let current = try await client.get(path).decode(ProductResource.self)
            var changed = current
            try change(&changed)
            var body = OfferLists()
            if changed.introductoryOffers != current.introductoryOffers {
                body.introductoryOffers = changed.introductoryOffers
            }
            if changed.promotionalOffers != current.promotionalOffers {
                body.promotionalOffers = changed.promotionalOffers
            }
            guard body.introductoryOffers != nil || body.promotionalOffers != nil else {
                throw CLIError(message: "Nothing to change.", fix: "See `kiosk offers --help`.")
            }
            let answer = try await client.patch(path, raw: try JSONEncoder().encode(body))
            try connection.print(answer) { [done] + OffersCommand.table(try $0.decode(ProductResource.self)) }
        }
    }

    /// The offer lists a PATCH of the product replaces; a list left nil stays as it is.
    struct OfferLists: Encodable {
        var introductoryOffers: [IntroductoryOffer]?
        var promotionalOffers: [PromotionalOffer]?
    }

    static let paymentModeHelp = ArgumentHelp("free_trial, pay_as_you_go or pay_up_front.")
    static let periodHelp = ArgumentHelp("The offer period, an ISO 8601 duration such as P3D, P1W, P1M or P1Y.")
    static let periodsHelp = ArgumentHelp(
        "How many periods: 1–12 for pay_as_you_go; otherwise 1 (the period is the whole offer).")

    /// What every offer has: a payment mode, a period × a number of periods, and a price unless it is a free trial.
    struct Terms {
        var paymentMode: OfferPaymentMode
        var period: OfferPeriod
        var numberOfPeriods: Int
        var pricing: Pricing

        /// These terms with the flags that were given applied (`--tier` and `--price` over the current pricing); a
        /// free trial has no price, so a price flag with one is refused.
        func applying(paymentMode mode: String?, period text: String?, periods: Int?, prices: PriceOptions) throws
            -> Terms
        {
            var terms = self
            if let mode { terms.paymentMode = try Self.paymentMode(mode) }
            if let text { terms.period = try Self.period(text) }
            if let periods { terms.numberOfPeriods = periods }
            if terms.paymentMode == .freeTrial {
                guard prices.isEmpty else {
                    throw CLIError(
                        message: "A free_trial offer has no price.", field: prices.tier != nil ? "--tier" : "--price",
                        fix: "Remove --tier and --price, or choose --payment-mode pay_as_you_go or pay_up_front.")
                }
                terms.pricing = Pricing()
            } else if let pricing = try prices.pricing(over: pricing) {
                terms.pricing = pricing
            }
            return terms
        }

        /// `free_trial`, also written `free-trial` or in capitals.
        static func paymentMode(_ text: String) throws -> OfferPaymentMode {
            guard let mode = OfferPaymentMode(rawValue: text.lowercased().replacingOccurrences(of: "-", with: "_"))
            else {
                throw CLIError(
                    message: "'\(text)' is not a payment mode.", field: "--payment-mode",
                    fix: "Use free_trial, pay_as_you_go or pay_up_front.")
            }
            return mode
        }

        /// `P1W`, `P1M`, …: a count and a unit of days, weeks, months or years.
        static func period(_ text: String) throws -> OfferPeriod {
            guard let period = OfferPeriod(iso8601: text.uppercased()) else {
                throw CLIError(
                    message: "'\(text)' is not an offer period.", field: "--period",
                    fix: "Use an ISO 8601 duration such as P3D, P1W, P1M or P1Y.")
            }
            return period
        }
    }

    /// The flags of an offer's terms where `set-introductory` and `add-promotional` need them all.
    struct NewTerms: ParsableArguments {
        @Option(help: OffersCommand.paymentModeHelp) var paymentMode: String
        @Option(help: OffersCommand.periodHelp) var period: String
        @Option(help: OffersCommand.periodsHelp) var periods = 1
        @OptionGroup var prices: PriceOptions

        func terms() throws -> Terms {
            try Terms(
                paymentMode: Terms.paymentMode(paymentMode), period: Terms.period(period), numberOfPeriods: periods,
                pricing: Pricing()
            ).applying(paymentMode: nil, period: nil, periods: nil, prices: prices)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a subscription's offers.")
        @OptionGroup var options: ProductOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await options.connection.client.get(options.path)
                try options.connection.print(answer) { OffersCommand.table(try $0.decode(ProductResource.self)) }
            }
        }
    }

    struct SetIntroductory: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-introductory",
            abstract: "Set the introductory offer for every storefront or one (replacing the one it has).")
        @OptionGroup var options: ProductOptions
        @Option(help: "Only this storefront (alpha-3, e.g. USA); default every storefront.") var storefront: String?
        @OptionGroup var terms: NewTerms

        func run() async throws {
            try await reportingErrors {
                let scope = try OffersCommand.storefront(storefront)
                let given = try terms.terms()
                let offer = IntroductoryOffer(
                    storefront: scope, paymentMode: given.paymentMode, period: given.period,
                    numberOfPeriods: given.numberOfPeriods, pricing: given.pricing)
                try await options.change(
                    "Set the introductory offer of \(options.product) for \(scope ?? "every storefront")."
                ) { product in
                    if let index = OffersCommand.introductoryIndex(scope, in: product) {
                        product.introductoryOffers[index] = offer
                    } else {
                        product.introductoryOffers.append(offer)
                    }
                }
            }
        }
    }

    struct RemoveIntroductory: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove-introductory", abstract: "Remove the introductory offer of every storefront or one.")
        @OptionGroup var options: ProductOptions
        @Option(help: "Only this storefront's offer (alpha-3); default the offer for every storefront.")
        var storefront: String?

        func run() async throws {
            try await reportingErrors {
                let scope = try OffersCommand.storefront(storefront)
                let label = scope ?? "every storefront"
                try await options.change("Removed the introductory offer of \(options.product) for \(label).") {
                    product in
                    guard let index = OffersCommand.introductoryIndex(scope, in: product) else {
                        let scopes = product.introductoryOffers.map { $0.storefront ?? "every storefront" }
                        throw CLIError(
                            message: "\(options.product) has no introductory offer for \(label).",
                            field: scope == nil ? "--product" : "--storefront",
                            fix: scopes.isEmpty
                                ? "It has no introductory offer at all."
                                : "It has introductory offers for: \(scopes.joined(separator: ", ")).")
                    }
                    product.introductoryOffers.remove(at: index)
                }
            }
        }
    }

    struct AddPromotional: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add-promotional",
            abstract: "Add a promotional offer, redeemed with a signature your server makes.")
        @OptionGroup var options: ProductOptions
        @Option(help: "The offer identifier apps pass (permanent within the product).") var id: String
        @Option(help: "Reference name (internal, 1–64 characters; default the identifier).") var referenceName: String?
        @OptionGroup var terms: NewTerms

        func run() async throws {
            try await reportingErrors {
                let given = try terms.terms()
                let offer = PromotionalOffer(
                    identifier: id, referenceName: referenceName ?? id, paymentMode: given.paymentMode,
                    period: given.period, numberOfPeriods: given.numberOfPeriods, pricing: given.pricing)
                try await options.change("Added the promotional offer '\(id)' to \(options.product).") { product in
                    guard !product.promotionalOffers.contains(where: { $0.identifier == id }) else {
                        throw CLIError(
                            message: "\(options.product) already has a promotional offer '\(id)'.", field: "--id",
                            fix: "Change it with `kiosk offers update-promotional`, or choose another --id.")
                    }
                    product.promotionalOffers.append(offer)
                }
            }
        }
    }

    struct UpdatePromotional: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "update-promotional",
            abstract: "Change a promotional offer's fields; the ones not given stay as they are.")
        @OptionGroup var options: ProductOptions
        @Option(help: "The offer identifier.") var id: String
        @Option(help: "Reference name (internal, 1–64 characters).") var referenceName: String?
        @Option(help: OffersCommand.paymentModeHelp) var paymentMode: String?
        @Option(help: OffersCommand.periodHelp) var period: String?
        @Option(help: OffersCommand.periodsHelp) var periods: Int?
        @OptionGroup var prices: PriceOptions

        func run() async throws {
            try await reportingErrors {
                try await options.change("Updated the promotional offer '\(id)' of \(options.product).") { product in
                    let index = try OffersCommand.promotionalIndex(id, in: product)
                    var offer = product.promotionalOffers[index]
                    let terms = try Terms(offer).applying(
                        paymentMode: paymentMode, period: period, periods: periods, prices: prices)
                    offer.referenceName = referenceName ?? offer.referenceName
                    (offer.paymentMode, offer.period, offer.numberOfPeriods, offer.pricing) = (
                        terms.paymentMode, terms.period, terms.numberOfPeriods, terms.pricing
                    )
                    product.promotionalOffers[index] = offer
                }
            }
        }
    }

    struct RemovePromotional: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove-promotional", abstract: "Remove a promotional offer.")
        @OptionGroup var options: ProductOptions
        @Option(help: "The offer identifier.") var id: String

        func run() async throws {
            try await reportingErrors {
                try await options.change("Removed the promotional offer '\(id)' of \(options.product).") { product in
                    product.promotionalOffers.remove(at: try OffersCommand.promotionalIndex(id, in: product))
                }
            }
        }
    }

    /// A `--storefront` flag as its alpha-3 code; nil stays nil (every storefront).
    static func storefront(_ text: String?) throws -> String? {
        guard let text else { return nil }
        guard let storefront = Storefront.named(text) else {
            throw CLIError(
                message: "'\(text)' is not a storefront Kiosk knows.", field: "--storefront",
                fix: "Use an alpha-3 storefront code such as USA or CHN.")
        }
        return storefront.code
    }

    /// Where the introductory offer for `storefront` (nil: every storefront) is in the product's list.
    static func introductoryIndex(_ storefront: String?, in product: ProductResource) -> Int? {
        product.introductoryOffers.firstIndex { $0.storefront?.uppercased() == storefront }
    }

    /// Where the promotional offer `id` is in the product's list.
    static func promotionalIndex(_ id: String, in product: ProductResource) throws -> Int {
        guard let index = product.promotionalOffers.firstIndex(where: { $0.identifier == id }) else {
            let ids = product.promotionalOffers.map(\.identifier)
            throw CLIError(
                message: "\(product.productId) has no promotional offer '\(id)'.", field: "--id",
                fix: ids.isEmpty
                    ? "It has none; add one with `kiosk offers add-promotional`."
                    : "Its promotional offers: \(ids.joined(separator: ", ")).")
        }
        return index
    }

    /// One offer of a product as the CLI prints it.
    struct Row {
        var kind: String
        var identifier: String?
        var storefront: String?
        var referenceName: String?
        var terms: Terms

        var periodText: String { "\(terms.numberOfPeriods) × \(terms.period)" }
        var priceText: String {
            terms.paymentMode == .freeTrial
                ? "free" : terms.pricing.isEmpty ? "-" : PriceOptions.describe(terms.pricing)
        }

        /// One line of `kiosk products show`.
        var line: String {
            let label = kind.prefix(1).uppercased() + kind.dropFirst() + ":"
            let name = identifier.map { "\($0) (\(referenceName ?? $0))" } ?? (storefront ?? "every storefront")
            return label.padding(toLength: 17, withPad: " ", startingAt: 0)
                + "\(name): \(terms.paymentMode.rawValue), \(periodText), \(priceText)"
        }

        /// A product's offers: its introductory offers, then its promotional offers.
        static func rows(of product: ProductResource) -> [Row] {
            let introductory = product.introductoryOffers.map {
                Row(kind: "introductory", storefront: $0.storefront, terms: Terms($0))
            }
            let promotional = product.promotionalOffers.map {
                Row(kind: "promotional", identifier: $0.identifier, referenceName: $0.referenceName, terms: Terms($0))
            }
            return introductory + promotional
        }
    }

    /// A product's offers as a table.
    static func table(_ product: ProductResource) -> [String] {
        let rows = Row.rows(of: product)
        guard !rows.isEmpty else {
            return [
                "\(product.productId) has no offers. Add one with `kiosk offers set-introductory` or "
                    + "`kiosk offers add-promotional`."
            ]
        }
        var table = TextTable("KIND", "ID", "STOREFRONT", "MODE", "PERIOD", "PRICE", "NAME")
        for row in rows {
            table.add(
                row.kind, row.identifier ?? "-", row.storefront ?? "all", row.terms.paymentMode.rawValue,
                row.periodText, row.priceText, row.referenceName ?? "-")
        }
        return table.lines
    }
}

extension OffersCommand.Terms {
    init(_ offer: IntroductoryOffer) {
        self.init(
            paymentMode: offer.paymentMode, period: offer.period, numberOfPeriods: offer.numberOfPeriods,
            pricing: offer.pricing)
    }

    init(_ offer: PromotionalOffer) {
        self.init(
            paymentMode: offer.paymentMode, period: offer.period, numberOfPeriods: offer.numberOfPeriods,
            pricing: offer.pricing)
    }
}
