import ArgumentParser
import Foundation
import KioskCore
import KioskProtocol

/// `kiosk products …`: in-app purchases as App Store Connect's "In-App Purchases" page.
struct ProductsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "products", abstract: "Create, change, review and inspect in-app purchase products.",
        subcommands: [
            Create.self, List.self, Show.self, Update.self, Localize.self, Delete.self, Review.self,
            Availability.self, Prices.self,
        ])

    /// Options that set a product's fields, shared by `create` and `update`.
    struct Fields: ParsableArguments {
        /// The flag that sets each field of the API's product, for errors that name a field.
        static let flagNames = [
            "productId": "--id", "type": "--type", "referenceName": "--reference-name", "pricing": "--tier/--price",
            "pricing.tier": "--tier", "pricing.customPrices": "--price", "localizations": "--locale",
            "localizations[].locale": "--locale", "localizations[].displayName": "--display-name",
            "localizations[].description": "--description", "subscription": "--group", "subscription.group": "--group",
            "subscription.level": "--level", "duration": "--duration", "clearedForSale": "--cleared-for-sale",
            "familyShareable": "--family-shareable", "monthlyPlan": "--monthly-price",
            "monthlyPlan.pricing": "--monthly-price",
        ]

        @Option(help: "Reference name (internal, 1–64 characters).") var referenceName: String?
        @OptionGroup var prices: PriceOptions
        @Option(help: "Locale of the display name and description, e.g. en_US.") var locale: String?
        @Option(help: "Display name customers see (with --locale).") var displayName: String?
        @Option(help: "Description customers see (with --locale).") var description: String?
        @Option(help: "Subscription group (reference name or id), for auto-renewable products.") var group: String?
        @Option(help: "Level in the group, 1 = highest service.") var level: Int?
        @Option(help: "Subscription duration: P1W, P1M, P2M, P3M, P6M or P1Y.") var duration: String?
        @Option(help: "Cleared for sale: true or false.") var clearedForSale: Bool?
        @Option(help: "Family shareable: true or false.") var familyShareable: Bool?
        @Option(
            help: "The monthly plan's payment STOREFRONT=AMOUNT (a P1Y subscription's 12-month commitment; repeatable)."
        )
        var monthlyPrice: [String] = []
        @Option(help: "The monthly plan's payment as a price tier 1–20.") var monthlyTier: Int?
        @Flag(help: "Remove the monthly plan: the subscription is billed up front only.") var noMonthlyPlan = false

        func body(current: ProductResource?) throws -> [String: Any] {
            var body: [String: Any] = [:]
            if let referenceName { body["referenceName"] = referenceName }
            if let pricing = try prices.pricing(over: current?.pricing) {
                var fields: [String: Any] = [:]
                if let tier = pricing.tier { fields["tier"] = tier }
                if !pricing.customPrices.isEmpty { fields["customPrices"] = pricing.customPrices }
                body["pricing"] = fields
            }
            if let locale {
                guard let displayName, let description else {
                    throw CLIError(message: "--locale needs --display-name and --description.", field: "--locale")
                }
                var localizations = (current?.localizations ?? []).filter { $0.locale != locale }.map {
                    ["locale": $0.locale, "displayName": $0.displayName, "description": $0.description]
                }
                localizations.append(["locale": locale, "displayName": displayName, "description": description])
                body["localizations"] = localizations
            } else if displayName != nil || description != nil {
                throw CLIError(
                    message: "--display-name and --description need --locale.", field: "--locale",
                    fix: "Add e.g. --locale en_US.")
            }
            if group != nil || level != nil {
                var placement: [String: Any] = ["level": level ?? current?.subscription?.level ?? 1]
                if let group {
                    if let id = Int64(group) { placement["groupId"] = id } else { placement["group"] = group }
                } else if let groupId = current?.subscription?.groupId {
                    placement["groupId"] = groupId
                }
                body["subscription"] = placement
            }
            if let duration { body["duration"] = duration }
            if let clearedForSale { body["clearedForSale"] = clearedForSale }
            if let familyShareable { body["familyShareable"] = familyShareable }
            if noMonthlyPlan {
                body["monthlyPlan"] = ["pricing": ["customPrices": [String: Int]()]]
            } else if !monthlyPrice.isEmpty || monthlyTier != nil {
                var pricing = current?.monthlyPlan?.pricing ?? Pricing()
                if let monthlyTier { pricing.tier = monthlyTier }
                for entry in monthlyPrice {
                    let (code, amount) = try PriceOptions.customPrice(entry)
                    pricing.customPrices[code] = amount
                }
                var fields: [String: Any] = ["customPrices": pricing.customPrices]
                if let tier = pricing.tier { fields["tier"] = tier }
                body["monthlyPlan"] = ["pricing": fields]
            }
            return body
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a product.")
        @Option(help: "The app's bundle id.") var app: String
        @Option(name: .customLong("id"), help: "The product id (permanent: never reusable, even after deletion).")
        var productId: String
        @Option(help: "consumable, non_consumable, auto_renewable or non_renewing.") var type: String
        @OptionGroup var fields: Fields
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors(flags: Fields.flagNames) {
                var body = try fields.body(current: nil)
                body["productId"] = productId
                body["type"] = type
                if body["referenceName"] == nil { body["referenceName"] = productId }
                let answer = try await connection.client.post(
                    AdminRoutes.products.path(app), raw: try JSONBody(body))
                try connection.print(answer) { try ProductsCommand.describe($0.decode(ProductResource.self)) }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List an app's products.")
        @Option(help: "The app's bundle id.") var app: String
        @Flag(help: "Include deleted products (their ids stay reserved).") var includeDeleted = false
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.get(
                    AdminRoutes.products.path(app), query: includeDeleted ? ["includeDeleted": "true"] : [:])
                try connection.print(answer) { answer in
                    let products = try answer.decode(ProductList.self).products
                    guard !products.isEmpty else {
                        return ["No products yet. Create one with `kiosk products create`."]
                    }
                    var table = TextTable("PRODUCT ID", "TYPE", "TIER", "STATE", "CLEARED", "NAME")
                    for product in products {
                        table.add(
                            product.productId, product.type.rawValue, product.pricing.tier.map(String.init) ?? "-",
                            product.deletedAt == nil ? product.reviewState.rawValue : "deleted",
                            product.clearedForSale ? "yes" : "no", product.referenceName)
                    }
                    return table.lines
                }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a product and whether clients get it.")
        @Option(help: "The app's bundle id.") var app: String
        @Argument(help: "The product id.") var productId: String
        @Option(help: "Storefront for the availability check (default USA).") var storefront: String?
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.get(
                    AdminRoutes.product.path(app, productId),
                    query: storefront.map { ["storefront": $0] } ?? [:])
                try connection.print(answer) { try ProductsCommand.describe($0.decode(ProductResource.self)) }
            }
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change a product's fields.")
        @Option(help: "The app's bundle id.") var app: String
        @Argument(help: "The product id.") var productId: String
        @OptionGroup var fields: Fields
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors(flags: Fields.flagNames) {
                let client = connection.client
                let path = AdminRoutes.product.path(app, productId)
                let current = try await client.get(path).decode(ProductResource.self)
                let body = try fields.body(current: current)
                guard !body.isEmpty else {
                    throw CLIError(message: "Nothing to change.", fix: "See `kiosk products update --help`.")
                }
                let answer = try await client.patch(path, raw: try JSONBody(body))
                try connection.print(answer) { try ProductsCommand.describe($0.decode(ProductResource.self)) }
            }
        }
    }

    struct Localize: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add or replace a product's texts in one locale.")
        @Option(help: "The app's bundle id.") var app: String
        @Argument(help: "The product id.") var productId: String
        @Option(help: "Locale, e.g. en_US or zh_CN.") var locale: String
        @Option(help: "Display name (1–35 characters).") var displayName: String
        @Option(help: "Description (1–55 characters).") var description: String
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.put(
                    AdminRoutes.productLocalization.path(app, productId, locale),
                    raw: try JSONBody(LocalizationBody(displayName: displayName, description: description)))
                try connection.print(answer) { try ProductsCommand.describe($0.decode(ProductResource.self)) }
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a product. Its id can never be used again in this app.")
        @Option(help: "The app's bundle id.") var app: String
        @Argument(help: "The product id.") var productId: String
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.delete(
                    AdminRoutes.product.path(app, productId))
                try connection.print(answer) { _ in ["Deleted \(productId). Its id stays reserved forever."] }
            }
        }
    }

    struct Review: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move a product through review: submit, approve, reject, remove_from_sale, restore_to_sale.")
        @Option(help: "The app's bundle id.") var app: String
        @Argument(help: "The product id.") var productId: String
        @Option(help: "submit, approve, reject, remove_from_sale or restore_to_sale.") var action: String
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.post(
                    AdminRoutes.productReview.path(app, productId),
                    raw: try JSONBody(["action": action]))
                try connection.print(answer) { try ProductsCommand.describe($0.decode(ProductResource.self)) }
            }
        }
    }

    struct Availability: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Say whether clients get a product, and every reason why not (seed 002's \"zero products\").")
        @Option(help: "The app's bundle id.") var app: String
        @Argument(help: "The product id.") var productId: String
        @Option(help: "sandbox or production (default sandbox).") var environment: String = "sandbox"
        @Option(help: "Storefront (default USA).") var storefront: String = "USA"
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.get(
                    AdminRoutes.productAvailability.path(app, productId),
                    query: ["environment": environment, "storefront": storefront])
                try connection.print(answer) { answer in
                    ProductsCommand.describe(try answer.decode(AvailabilityResource.self))
                }
            }
        }
    }

    struct Prices: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a product's price in every storefront.")
        @Option(help: "The app's bundle id.") var app: String
        @Argument(help: "The product id.") var productId: String
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.get(
                    AdminRoutes.productPrices.path(app, productId))
                try connection.print(answer) { answer in
                    var table = TextTable("STOREFRONT", "CURRENCY", "PRICE", "SOURCE", "TAX", "PROCEEDS")
                    let prices = try answer.decode(PriceList.self).prices
                    for price in prices {
                        let tax = price.taxRateBasisPoints.map {
                            TaxCommand.percent($0) + (price.pricesIncludeTax == false ? " on top" : "")
                        }
                        table.add(
                            price.storefront, price.currency, price.price, price.source, tax ?? "", price.proceeds ?? ""
                        )
                    }
                    let commission = prices.first?.commissionBasisPoints
                    return table.lines + [
                        "Proceeds: what a first sale earns after the storefront's tax and a "
                            + "\(commission.map(TaxCommand.percent) ?? "30%") commission (`kiosk tax list`)."
                    ]
                }
            }
        }
    }

    static func describe(_ availability: AvailabilityResource) -> [String] {
        let head = "\(availability.environment.rawValue) \(availability.storefront): "
        guard !availability.available else { return [head + "available"] }
        var lines = [head + "NOT available"]
        for reason in availability.reasons {
            lines.append("  - \(reason.message)")
            if let fix = reason.fix { lines.append("    fix: \(fix)") }
        }
        return lines
    }

    static func describe(_ product: ProductResource) -> [String] {
        var lines = [
            "Product id:      \(product.productId)",
            "Reference name:  \(product.referenceName)",
            "Type:            \(product.type.rawValue)",
            "Review state:    \(product.deletedAt == nil ? product.reviewState.rawValue : "deleted")",
            "Cleared:         \(product.clearedForSale ? "yes" : "no")   family shareable: \(product.familyShareable ? "yes" : "no")",
            "Price:           \(PriceOptions.describe(product.pricing))",
        ]
        if let subscription = product.subscription {
            lines.append(
                "Subscription:    group \(subscription.groupId), level \(subscription.level), \(product.duration?.rawValue ?? "no duration")"
            )
        }
        if let plan = product.monthlyPlan {
            lines.append(
                "Monthly plan:    \(PriceOptions.describe(plan.pricing)) each month, \(MonthlyPlan.billingPeriods)-month "
                    + "commitment")
        }
        lines += OffersCommand.Row.rows(of: product).map(\.line)
        for localization in product.localizations {
            lines.append("  \(localization.locale): \(localization.displayName) — \(localization.description)")
        }
        for availability in product.availability ?? [] { lines += describe(availability) }
        return lines
    }
}
