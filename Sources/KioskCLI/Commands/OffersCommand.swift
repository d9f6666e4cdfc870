import ArgumentParser
import Foundation
import KioskCore
import KioskProtocol

/// `kiosk offers …`: an auto-renewable subscription's introductory, promotional and win-back offers. Each change reads the
/// product and sends back the offer list it changed, as App Store Connect's "Subscription Prices" page does.
struct OffersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "offers",
        abstract: "Set and list the introductory, promotional and win-back offers of a subscription.",
        subcommands: [
            List.self, SetIntroductory.self, RemoveIntroductory.self, AddPromotional.self, UpdatePromotional.self,
            RemovePromotional.self, AddWinBack.self, UpdateWinBack.self, RemoveWinBack.self,
        ])

    /// `--app`, `--product` and the connection: the subscription every offers command works on.
    struct ProductOptions: ParsableArguments {
        @Option(help: "The app's bundle id.") var app: String
        @Option(help: "The auto-renewable product id.") var product: String
        @OptionGroup var connection: ConnectionOptions

        var path: String { AdminRoutes.product.path(app, product) }

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
            if changed.winBackOffers != current.winBackOffers { body.winBackOffers = changed.winBackOffers }
            guard body.introductoryOffers != nil || body.promotionalOffers != nil || body.winBackOffers != nil else {
                throw CLIError(message: "Nothing to change.", fix: "See `kiosk offers --help`.")
            }
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601
            let answer = try await client.patch(path, raw: try encoder.encode(body))
            try connection.print(answer) { [done] + OffersCommand.table(try $0.decode(ProductResource.self)) }
        }
    }

    /// The offer lists a PATCH of the product replaces; a list left nil stays as it is.
    struct OfferLists: Encodable {
        var introductoryOffers: [IntroductoryOffer]?
        var promotionalOffers: [PromotionalOffer]?
        var winBackOffers: [WinBackOffer]?
    }

    static let paymentModeHelp = ArgumentHelp("free_trial, pay_as_you_go or pay_up_front.")
    static let periodHelp = ArgumentHelp("The offer period, an ISO 8601 duration such as P3D, P1W, P1M or P1Y.")
    static let periodsHelp = ArgumentHelp(
        "How many periods: 1–12 for pay_as_you_go; otherwise 1 (the period is the whole offer).")

    /// What every offer has: a payment mode, a period × a number of periods, and a price unless it is a free trial.
    /// The flags of an offer's terms where `set-introductory` and `add-promotional` need them all.
    struct NewTerms: ParsableArguments {
        @Option(help: OffersCommand.paymentModeHelp) var paymentMode: String
        @Option(help: OffersCommand.periodHelp) var period: String
        @Option(help: OffersCommand.periodsHelp) var periods = 1
        @OptionGroup var prices: PriceOptions

        func schedule() throws -> OfferSchedule {
            try OfferSchedule(
                paymentMode: OfferSchedule.paymentMode(paymentMode), period: OfferSchedule.period(period),
                numberOfPeriods: periods
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
                let offer = IntroductoryOffer(
                    storefront: scope,
                    schedule: try terms.schedule())
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
                let offer = PromotionalOffer(
                    identifier: id, referenceName: referenceName ?? id,
                    schedule: try terms.schedule())
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
                    offer.schedule = try offer.schedule.applying(
                        paymentMode: paymentMode, period: period, periods: periods, prices: prices)
                    offer.referenceName = referenceName ?? offer.referenceName
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

    /// The eligibility flags of a win-back offer; `add-win-back` defaults the ones not given, `update-win-back`
    /// keeps them. `none` clears an optional rule.
    struct Eligibility: ParsableArguments, FieldFlags {
        static let fieldFlags = [
            "paidSubscriptionDurationInMonths": "--paid-months",
            "timeSinceLastSubscribedInMonths": "--min-months-since",
            "timeSinceLastSubscribedInMonths.minimum": "--min-months-since",
            "timeSinceLastSubscribedInMonths.maximum": "--max-months-since",
            "waitBetweenOffersInMonths": "--wait-months",
        ]

        @Option(help: "The fewest months the customer paid for in the group (1–120; new offers: 1).")
        var paidMonths: Int?
        @Option(help: "The fewest months since their subscription in the group ended (1–120; new offers: 1).")
        var minMonthsSince: Int?
        @Option(help: "The most months since it ended (1–120), or none for no limit.") var maxMonthsSince: String?
        @Option(help: "Months between two win-back offers of the group (1–120), or none.") var waitMonths: String?
        @Option(help: "When the offer starts (2026-01-31 or 2026-01-31T12:00:00Z), or none.") var startDate: String?
        @Option(help: "When the offer ends (the first instant it is not redeemable), or none.") var endDate: String?
        @Option(help: "high or normal (new offers: normal).") var priority: String?

        /// `offer` with the flags that were given applied.
        func applied(to offer: WinBackOffer) throws -> WinBackOffer {
            var offer = offer
            if let paidMonths { offer.paidSubscriptionDurationInMonths = paidMonths }
            if let minMonthsSince { offer.timeSinceLastSubscribedInMonths.minimum = minMonthsSince }
            if let maxMonthsSince {
                offer.timeSinceLastSubscribedInMonths.maximum = try Self.months(maxMonthsSince, "--max-months-since")
            }
            if let waitMonths { offer.waitBetweenOffersInMonths = try Self.months(waitMonths, "--wait-months") }
            if let startDate { offer.startDate = try Self.date(startDate, "--start-date") }
            if let endDate { offer.endDate = try Self.date(endDate, "--end-date") }
            if let priority {
                guard let value = WinBackOffer.Priority(rawValue: priority.lowercased()) else {
                    throw CLIError(
                        message: "'\(priority)' is not a priority.", field: "--priority", fix: "Use high or normal.")
                }
                offer.priority = value
            }
            return offer
        }

        /// A number of months, or nil for `none`.
        static func months(_ text: String, _ flag: String) throws -> Int? {
            if text.lowercased() == "none" { return nil }
            guard let months = Int(text) else {
                throw CLIError(
                    message: "'\(text)' is not a number of months.", field: flag, fix: "Give 1–120, or none.")
            }
            return months
        }

        /// A date, or nil for `none`.
        static func date(_ text: String, _ flag: String) throws -> Date? {
            if text.lowercased() == "none" { return nil }
            guard let date = Date(iso8601DateOrDateTime: text) else {
                throw CLIError(
                    message: "'\(text)' is not a date.", field: flag,
                    fix: "Give a date such as 2026-01-31 or a date-time such as 2026-01-31T12:00:00Z, or none.")
            }
            return date
        }
    }

    struct AddWinBack: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add-win-back",
            abstract: "Add a win-back offer, for customers whose subscription in the group ended.")
        @OptionGroup var options: ProductOptions
        @Option(help: "The offer identifier apps pass (permanent within the product).") var id: String
        @Option(help: "Reference name (internal, 1–64 characters; default the identifier).") var referenceName: String?
        @OptionGroup var terms: NewTerms
        @OptionGroup var eligibility: Eligibility

        func run() async throws {
            try await reportingErrors {
                let offer = try eligibility.applied(
                    to: WinBackOffer(
                        identifier: id, referenceName: referenceName ?? id,
                        schedule: try terms.schedule()))
                try await options.change("Added the win-back offer '\(id)' to \(options.product).") { product in
                    guard !product.winBackOffers.contains(where: { $0.identifier == id }) else {
                        throw CLIError(
                            message: "\(options.product) already has a win-back offer '\(id)'.", field: "--id",
                            fix: "Change it with `kiosk offers update-win-back`, or choose another --id.")
                    }
                    product.winBackOffers.append(offer)
                }
            }
        }
    }

    struct UpdateWinBack: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "update-win-back",
            abstract: "Change a win-back offer's fields; the ones not given stay as they are.")
        @OptionGroup var options: ProductOptions
        @Option(help: "The offer identifier.") var id: String
        @Option(help: "Reference name (internal, 1–64 characters).") var referenceName: String?
        @Option(help: OffersCommand.paymentModeHelp) var paymentMode: String?
        @Option(help: OffersCommand.periodHelp) var period: String?
        @Option(help: OffersCommand.periodsHelp) var periods: Int?
        @OptionGroup var prices: PriceOptions
        @OptionGroup var eligibility: Eligibility

        func run() async throws {
            try await reportingErrors {
                try await options.change("Updated the win-back offer '\(id)' of \(options.product).") { product in
                    let index = try OffersCommand.winBackIndex(id, in: product)
                    var offer = try eligibility.applied(to: product.winBackOffers[index])
                    offer.schedule = try offer.schedule.applying(
                        paymentMode: paymentMode, period: period, periods: periods, prices: prices)
                    offer.referenceName = referenceName ?? offer.referenceName
                    product.winBackOffers[index] = offer
                }
            }
        }
    }

    struct RemoveWinBack: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove-win-back", abstract: "Remove a win-back offer.")
        @OptionGroup var options: ProductOptions
        @Option(help: "The offer identifier.") var id: String

        func run() async throws {
            try await reportingErrors {
                try await options.change("Removed the win-back offer '\(id)' of \(options.product).") { product in
                    product.winBackOffers.remove(at: try OffersCommand.winBackIndex(id, in: product))
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

    /// Where the win-back offer `id` is in the product's list.
    static func winBackIndex(_ id: String, in product: ProductResource) throws -> Int {
        guard let index = product.winBackOffers.firstIndex(where: { $0.identifier == id }) else {
            let ids = product.winBackOffers.map(\.identifier)
            throw CLIError(
                message: "\(product.productId) has no win-back offer '\(id)'.", field: "--id",
                fix: ids.isEmpty
                    ? "It has none; add one with `kiosk offers add-win-back`."
                    : "Its win-back offers: \(ids.joined(separator: ", ")).")
        }
        return index
    }

    /// One offer of a product as the CLI prints it.
    struct Row {
        var kind: String
        var identifier: String?
        var storefront: String?
        var referenceName: String?
        var schedule: OfferSchedule
        /// A win-back offer's rules, e.g. `paid ≥ 1 mo, ended 1–3 mo ago, wait 6 mo, high priority`.
        var eligibility: String?

        var periodText: String { "\(schedule.numberOfPeriods) × \(schedule.period)" }
        var priceText: String {
            schedule.paymentMode == .freeTrial
                ? "free" : schedule.pricing.isEmpty ? "-" : PriceOptions.describe(schedule.pricing)
        }

        /// One line of `kiosk products show`.
        var line: String {
            let label = kind.prefix(1).uppercased() + kind.dropFirst() + ":"
            let name = identifier.map { "\($0) (\(referenceName ?? $0))" } ?? (storefront ?? "every storefront")
            return label.padding(toLength: 17, withPad: " ", startingAt: 0)
                + "\(name): \(schedule.paymentMode.rawValue), \(periodText), \(priceText)"
                + (eligibility.map { "; \($0)" } ?? "")
        }

        /// A product's offers: its introductory offers, then its promotional offers, then its win-back offers.
        static func rows(of product: ProductResource) -> [Row] {
            let introductory = product.introductoryOffers.map {
                Row(kind: "introductory", storefront: $0.storefront, schedule: $0.schedule)
            }
            let promotional = product.promotionalOffers.map {
                Row(
                    kind: "promotional", identifier: $0.identifier, referenceName: $0.referenceName,
                    schedule: $0.schedule)
            }
            let winBack = product.winBackOffers.map {
                Row(
                    kind: "win-back", identifier: $0.identifier, referenceName: $0.referenceName, schedule: $0.schedule,
                    eligibility: Self.eligibility($0))
            }
            return introductory + promotional + winBack
        }

        static func eligibility(_ offer: WinBackOffer) -> String {
            let range = offer.timeSinceLastSubscribedInMonths
            var parts = [
                "paid ≥ \(offer.paidSubscriptionDurationInMonths) mo",
                "ended " + (range.maximum.map { "\(range.minimum)–\($0)" } ?? "≥ \(range.minimum)") + " mo ago",
            ]
            if let wait = offer.waitBetweenOffersInMonths { parts.append("wait \(wait) mo") }
            let formatter = ISO8601DateFormatter()
            if let start = offer.startDate { parts.append("from \(formatter.string(from: start))") }
            if let end = offer.endDate { parts.append("until \(formatter.string(from: end))") }
            parts.append("\(offer.priority.rawValue) priority")
            return parts.joined(separator: ", ")
        }
    }

    /// A product's offers as a table.
    static func table(_ product: ProductResource) -> [String] {
        let rows = Row.rows(of: product)
        guard !rows.isEmpty else {
            return [
                "\(product.productId) has no offers. Add one with `kiosk offers set-introductory`, "
                    + "`kiosk offers add-promotional` or `kiosk offers add-win-back`."
            ]
        }
        var table = TextTable("KIND", "ID", "STOREFRONT", "MODE", "PERIOD", "PRICE", "NAME")
        for row in rows {
            table.add(
                row.kind, row.identifier ?? "-", row.storefront ?? "all", row.schedule.paymentMode.rawValue,
                row.periodText, row.priceText,
                (row.referenceName ?? "-") + (row.eligibility.map { " (\($0))" } ?? ""))
        }
        return table.lines
    }
}

extension OfferSchedule {
    /// The schedule with the flags that were given applied (`--tier` and `--price` over the current pricing); a
    /// free trial has no price, so a price flag with one is refused.
    func applying(paymentMode mode: String?, period text: String?, periods: Int?, prices: PriceOptions) throws
        -> OfferSchedule
    {
        var schedule = self
        if let mode { schedule.paymentMode = try Self.paymentMode(mode) }
        if let text { schedule.period = try Self.period(text) }
        if let periods { schedule.numberOfPeriods = periods }
        if schedule.paymentMode == .freeTrial {
            guard prices.isEmpty else {
                throw CLIError(
                    message: "A free_trial offer has no price.", field: prices.tier != nil ? "--tier" : "--price",
                    fix: "Remove --tier and --price, or choose --payment-mode pay_as_you_go or pay_up_front.")
            }
            schedule.pricing = Pricing()
        } else if let pricing = try prices.pricing(over: pricing) {
            schedule.pricing = pricing
        }
        return schedule
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
