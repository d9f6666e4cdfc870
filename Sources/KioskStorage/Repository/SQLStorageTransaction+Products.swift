import Foundation
import KioskCore
import KioskSQL
import SQLKit

/// Products are stored whole: the `products` row plus its localizations, custom prices and offers (each offer with
/// its own custom prices). Writes replace every child row; reads return children in a fixed order (localizations
/// by locale, introductory offers by storefront with "all storefronts" first, promotional and win-back offers by
/// identifier),
/// so a product read back equals the product written when its lists were in that order.
extension SQLStorageTransaction {
    func insertProduct(_ product: Product) async throws {
        try await changesCachedRows()
        try await session.run(
            """
            INSERT INTO products (app_id, product_id, reference_name, type, price_tier, cleared_for_sale,
                review_state, family_shareable, subscription_group_id, subscription_level, duration,
                created_at, updated_at, deleted_at)
            VALUES (\(bind: product.appId), \(bind: product.productId), \(bind: product.referenceName),
                \(bind: product.type.rawValue), \(bind: product.pricing.tier), \(bind: product.clearedForSale),
                \(bind: product.reviewState.rawValue), \(bind: product.familyShareable),
                \(bind: product.subscription?.groupId), \(bind: product.subscription?.level),
                \(bind: product.duration?.rawValue), \(bind: product.createdAt.millisecondsSince1970),
                \(bind: product.updatedAt.millisecondsSince1970), \(bind: product.deletedAt?.millisecondsSince1970))
            """
        )
        try await insertChildren(of: product)
    }

    func updateProduct(_ product: Product) async throws {
        try await changesCachedRows()
        let key: SQLQueryString = "app_id = \(bind: product.appId) AND product_id = \(bind: product.productId)"
        let row = try await session.first(
            """
            UPDATE products SET reference_name = \(bind: product.referenceName), type = \(bind: product.type.rawValue),
                price_tier = \(bind: product.pricing.tier), cleared_for_sale = \(bind: product.clearedForSale),
                review_state = \(bind: product.reviewState.rawValue),
                family_shareable = \(bind: product.familyShareable),
                subscription_group_id = \(bind: product.subscription?.groupId),
                subscription_level = \(bind: product.subscription?.level),
                duration = \(bind: product.duration?.rawValue),
                created_at = \(bind: product.createdAt.millisecondsSince1970),
                updated_at = \(bind: product.updatedAt.millisecondsSince1970),
                deleted_at = \(bind: product.deletedAt?.millisecondsSince1970)
            WHERE \(key)
            RETURNING product_id
            """
        )
        try requireUpdated(row, "product \(product.productId) of app \(product.appId)")
        // Offer prices go with their offers (ON DELETE CASCADE).
        let tables = [
            "product_localizations", "product_prices", "introductory_offers", "promotional_offers", "win_back_offers",
            "billing_plans", "product_territories",
        ]
        for table in tables {
            try await session.run("DELETE FROM \(ident: table) WHERE \(key)")
        }
        try await insertChildren(of: product)
    }

    func product(appId: App.ID, productId: String) async throws -> Product? {
        try await cached(.product(appId, productId)) {
            try await loadProducts(appId: appId, productId: productId).first
        }
    }

    func products(appId: App.ID) async throws -> [Product] {
        try await cached(.products(appId)) { try await loadProducts(appId: appId, productId: nil) } ?? []
    }

    func productCount(appId: App.ID) async throws -> Int {
        let row = try await session.first("SELECT COUNT(*) AS n FROM products WHERE app_id = \(bind: appId)")
        return Int(try row?.decode(column: "n", as: Int64.self) ?? 0)
    }

    // MARK: Writing children

    private func insertChildren(of product: Product) async throws {
        let appId = product.appId
        let productId = product.productId
        if !product.localizations.isEmpty {
            try await session.run(
                """
                INSERT INTO product_localizations (app_id, product_id, locale, display_name, description)
                VALUES \(product.localizations.valuesList { localization in
                    """
                    (\(bind: appId), \(bind: productId), \(bind: localization.locale),
                        \(bind: localization.displayName), \(bind: localization.description))
                    """
                })
                """
            )
        }
        try await insertPrices(product.pricing, table: "product_prices", key: [], appId: appId, productId: productId)
        let introductory = product.introductoryOffers
        if !introductory.isEmpty {
            try await session.run(
                """
                INSERT INTO introductory_offers (app_id, product_id, offer_storefront, payment_mode, period,
                    number_of_periods, price_tier)
                VALUES \(introductory.valuesList { offer in
                    """
                    (\(bind: appId), \(bind: productId), \(bind: offer.storefront ?? ""),
                        \(bind: offer.paymentMode.rawValue), \(bind: offer.period.iso8601),
                        \(bind: offer.numberOfPeriods), \(bind: offer.pricing.tier))
                    """
                })
                """
            )
            for offer in introductory {
                try await insertPrices(
                    offer.pricing, table: "introductory_offer_prices",
                    key: [("offer_storefront", offer.storefront ?? "")], appId: appId, productId: productId
                )
            }
        }
        let promotional = product.promotionalOffers
        if !promotional.isEmpty {
            try await session.run(
                """
                INSERT INTO promotional_offers (app_id, product_id, identifier, reference_name, payment_mode,
                    period, number_of_periods, price_tier)
                VALUES \(promotional.valuesList { offer in
                    """
                    (\(bind: appId), \(bind: productId), \(bind: offer.identifier), \(bind: offer.referenceName),
                        \(bind: offer.paymentMode.rawValue), \(bind: offer.period.iso8601),
                        \(bind: offer.numberOfPeriods), \(bind: offer.pricing.tier))
                    """
                })
                """
            )
            for offer in promotional {
                try await insertPrices(
                    offer.pricing, table: "promotional_offer_prices",
                    key: [("offer_identifier", offer.identifier)], appId: appId, productId: productId
                )
            }
        }
        try await insertWinBackOffers(of: product)
        if let availability = product.territoryAvailability {
            try await session.run(
                """
                INSERT INTO product_territories (app_id, product_id, territories, available_in_new_territories)
                VALUES (\(bind: appId), \(bind: productId), \(bind: availability.territories.sorted().joined(separator: ",")),
                    \(bind: availability.availableInNewTerritories))
                """
            )
        }
        if let plan = product.monthlyPlan {
            let type = BillingPlanType.monthly.rawValue
            try await session.run(
                """
                INSERT INTO billing_plans (app_id, product_id, plan_type, price_tier)
                VALUES (\(bind: appId), \(bind: productId), \(bind: type), \(bind: plan.pricing.tier))
                """
            )
            try await insertPrices(
                plan.pricing, table: "billing_plan_prices", key: [("plan_type", type)], appId: appId,
                productId: productId)
        }
    }

    private func insertWinBackOffers(of product: Product) async throws {
        let (appId, productId) = (product.appId, product.productId)
        let offers = product.winBackOffers
        guard !offers.isEmpty else { return }
        try await session.run(
            """
            INSERT INTO win_back_offers (app_id, product_id, identifier, reference_name, payment_mode, period,
                number_of_periods, price_tier, paid_months, minimum_months_since, maximum_months_since, wait_months,
                start_date, end_date, priority)
            VALUES \(offers.valuesList { offer in
                """
                (\(bind: appId), \(bind: productId), \(bind: offer.identifier), \(bind: offer.referenceName),
                    \(bind: offer.paymentMode.rawValue), \(bind: offer.period.iso8601),
                    \(bind: offer.numberOfPeriods), \(bind: offer.pricing.tier),
                    \(bind: offer.paidSubscriptionDurationInMonths),
                    \(bind: offer.timeSinceLastSubscribedInMonths.minimum),
                    \(bind: offer.timeSinceLastSubscribedInMonths.maximum), \(bind: offer.waitBetweenOffersInMonths),
                    \(bind: offer.startDate?.millisecondsSince1970), \(bind: offer.endDate?.millisecondsSince1970),
                    \(bind: offer.priority.rawValue))
                """
            })
            """
        )
        for offer in offers {
            try await insertPrices(
                offer.pricing, table: "win_back_offer_prices", key: [("offer_identifier", offer.identifier)],
                appId: appId, productId: productId)
        }
    }

    /// Writes `pricing.customPrices` into `table`, whose rows are keyed by the product, the extra `key`
    /// columns (which offer) and the storefront.
    private func insertPrices(
        _ pricing: Pricing, table: String, key: [(column: String, value: String)], appId: App.ID, productId: String
    ) async throws {
        guard !pricing.customPrices.isEmpty else { return }
        let keyColumns = key.map { ", \($0.column)" }.joined()
        let keyValues: SQLQueryString = key.map { ", \(bind: $0.value)" as SQLQueryString }.joined()
        try await session.run(
            """
            INSERT INTO \(ident: table) (app_id, product_id\(unsafeRaw: keyColumns), storefront, amount_minor_units)
            VALUES \(pricing.customPrices.sorted { $0.key < $1.key }.valuesList { storefront, amount in
                "(\(bind: appId), \(bind: productId)\(keyValues), \(bind: storefront), \(bind: Int64(amount)))"
            })
            """
        )
    }

    // MARK: Reading

    /// Reads the products of an app (or one of them) with all their children: one query per table.
    private func loadProducts(appId: App.ID, productId: String?) async throws -> [Product] {
        let filter: SQLQueryString =
            if let productId {
                "app_id = \(bind: appId) AND product_id = \(bind: productId)"
            } else {
                "app_id = \(bind: appId)"
            }
        return try await loadProducts(filter)
    }

    func liveProducts(appId: App.ID, limit: Int, offset: Int) async throws -> [Product] {
        try await loadProducts(
            """
            app_id = \(bind: appId) AND product_id IN (
                SELECT product_id FROM products WHERE app_id = \(bind: appId) AND deleted_at IS NULL
                ORDER BY product_id LIMIT \(bind: limit) OFFSET \(bind: offset))
            """)
    }

    func liveProductCount(appId: App.ID) async throws -> Int {
        let row = try await session.first(
            "SELECT COUNT(*) AS n FROM products WHERE app_id = \(bind: appId) AND deleted_at IS NULL")
        return Int(try row?.decode(column: "n", as: Int64.self) ?? 0)
    }

    /// The products `filter` selects, with their localizations, prices and offers, ordered by product id.
    private func loadProducts(_ filter: SQLQueryString) async throws -> [Product] {
        let rows = try await session.all("SELECT * FROM products WHERE \(filter)")
        guard !rows.isEmpty else { return [] }

        var localizations: [String: [ProductLocalization]] = [:]
        for row in try await session.all("SELECT * FROM product_localizations WHERE \(filter)") {
            localizations[try row.decode(column: "product_id", as: String.self), default: []].append(
                ProductLocalization(
                    locale: try row.decode(column: "locale", as: String.self),
                    displayName: try row.decode(column: "display_name", as: String.self),
                    description: try row.decode(column: "description", as: String.self)
                )
            )
        }
        let productPrices = try await prices(table: "product_prices", keyColumn: nil, filter: filter)
        let introductoryPrices = try await prices(
            table: "introductory_offer_prices", keyColumn: "offer_storefront", filter: filter)
        let promotionalPrices = try await prices(
            table: "promotional_offer_prices", keyColumn: "offer_identifier", filter: filter)

        var introductory: [String: [IntroductoryOffer]] = [:]
        for row in try await session.all("SELECT * FROM introductory_offers WHERE \(filter)") {
            let productId = try row.decode(column: "product_id", as: String.self)
            let storefront = try row.decode(column: "offer_storefront", as: String.self)
            introductory[productId, default: []].append(
                IntroductoryOffer(
                    storefront: storefront.isEmpty ? nil : storefront,
                    schedule: try Self.schedule(
                        row, customPrices: introductoryPrices[PriceOwner(productId: productId, key: storefront)] ?? [:])
                )
            )
        }
        var promotional: [String: [PromotionalOffer]] = [:]
        for row in try await session.all("SELECT * FROM promotional_offers WHERE \(filter)") {
            let productId = try row.decode(column: "product_id", as: String.self)
            let identifier = try row.decode(column: "identifier", as: String.self)
            promotional[productId, default: []].append(
                PromotionalOffer(
                    identifier: identifier,
                    referenceName: try row.decode(column: "reference_name", as: String.self),
                    schedule: try Self.schedule(
                        row, customPrices: promotionalPrices[PriceOwner(productId: productId, key: identifier)] ?? [:]))
            )
        }
        let winBack = try await loadWinBackOffers(filter: filter)
        let planPrices = try await prices(table: "billing_plan_prices", keyColumn: "plan_type", filter: filter)
        var monthlyPlans: [String: MonthlyPlan] = [:]
        for row in try await session.all("SELECT * FROM billing_plans WHERE \(filter)") {
            let productId = try row.decode(column: "product_id", as: String.self)
            let type = try row.decode(column: "plan_type", as: String.self)
            guard type == BillingPlanType.monthly.rawValue else { continue }
            monthlyPlans[productId] = MonthlyPlan(
                pricing: Pricing(
                    tier: try row.optional("price_tier", as: Int.self),
                    customPrices: planPrices[PriceOwner(productId: productId, key: type)] ?? [:]))
        }

        var territories: [String: TerritoryAvailability] = [:]
        for row in try await session.all("SELECT * FROM product_territories WHERE \(filter)") {
            let codes = try row.decode(column: "territories", as: String.self)
            territories[try row.decode(column: "product_id", as: String.self)] = TerritoryAvailability(
                territories: Set(codes.split(separator: ",").map(String.init)),
                availableInNewTerritories: try row.decode(column: "available_in_new_territories", as: Bool.self))
        }

        return try rows.map { row in
            let productId = try row.decode(column: "product_id", as: String.self)
            let groupId = try row.optional("subscription_group_id", as: Int64.self)
            let level = try row.optional("subscription_level", as: Int.self)
            let duration = try row.optional("duration", as: String.self)
            return Product(
                appId: try row.decode(column: "app_id", as: Int64.self),
                productId: productId,
                referenceName: try row.decode(column: "reference_name", as: String.self),
                type: try row.enumeration("type", as: ProductType.self),
                pricing: Pricing(
                    tier: try row.optional("price_tier", as: Int.self),
                    customPrices: productPrices[PriceOwner(productId: productId, key: "")] ?? [:]
                ),
                localizations: (localizations[productId] ?? []).sorted { $0.locale < $1.locale },
                clearedForSale: try row.decode(column: "cleared_for_sale", as: Bool.self),
                reviewState: try row.enumeration("review_state", as: ReviewState.self),
                familyShareable: try row.decode(column: "family_shareable", as: Bool.self),
                subscription: try groupId.map { groupId in
                    guard let level else {
                        throw StorageError.engine(message: "product \(productId) has a group but no level")
                    }
                    return SubscriptionMembership(groupId: groupId, level: level)
                },
                duration: try duration.map { raw in
                    guard let duration = SubscriptionDuration(rawValue: raw) else {
                        throw StorageError.engine(message: "product \(productId) has an unknown duration '\(raw)'")
                    }
                    return duration
                },
                introductoryOffers: (introductory[productId] ?? []).sorted {
                    ($0.storefront ?? "") < ($1.storefront ?? "")
                },
                promotionalOffers: (promotional[productId] ?? []).sorted { $0.identifier < $1.identifier },
                winBackOffers: (winBack[productId] ?? []).sorted { $0.identifier < $1.identifier },
                monthlyPlan: monthlyPlans[productId],
                territoryAvailability: territories[productId],
                createdAt: try row.date("created_at"),
                updatedAt: try row.date("updated_at"),
                deletedAt: try row.optionalDate("deleted_at")
            )
        }
        .sorted { $0.productId < $1.productId }
    }

    /// Reads the win-back offers of the products `filter` selects, by product id.
    private func loadWinBackOffers(filter: SQLQueryString) async throws -> [String: [WinBackOffer]] {
        let prices = try await prices(table: "win_back_offer_prices", keyColumn: "offer_identifier", filter: filter)
        var offers: [String: [WinBackOffer]] = [:]
        for row in try await session.all("SELECT * FROM win_back_offers WHERE \(filter)") {
            let productId = try row.decode(column: "product_id", as: String.self)
            let identifier = try row.decode(column: "identifier", as: String.self)
            offers[productId, default: []].append(
                WinBackOffer(
                    identifier: identifier,
                    referenceName: try row.decode(column: "reference_name", as: String.self),
                    schedule: try Self.schedule(
                        row, customPrices: prices[PriceOwner(productId: productId, key: identifier)] ?? [:]),
                    paidSubscriptionDurationInMonths: try row.decode(column: "paid_months", as: Int.self),
                    timeSinceLastSubscribedInMonths: WinBackOffer.MonthRange(
                        minimum: try row.decode(column: "minimum_months_since", as: Int.self),
                        maximum: try row.optional("maximum_months_since", as: Int.self)),
                    waitBetweenOffersInMonths: try row.optional("wait_months", as: Int.self),
                    startDate: try row.optionalDate("start_date"),
                    endDate: try row.optionalDate("end_date"),
                    priority: try row.enumeration("priority", as: WinBackOffer.Priority.self)))
        }
        return offers
    }

    /// Which product (and which of its offers, by `key`; "" for the product itself) a set of prices belongs to.
    private struct PriceOwner: Hashable {
        var productId: String
        var key: String
    }

    /// Reads custom prices from `table`, grouped by owner.
    private func prices(
        table: String, keyColumn: String?, filter: SQLQueryString
    ) async throws -> [PriceOwner: [String: Int]] {
        var prices: [PriceOwner: [String: Int]] = [:]
        for row in try await session.all("SELECT * FROM \(ident: table) WHERE \(filter)") {
            let owner = PriceOwner(
                productId: try row.decode(column: "product_id", as: String.self),
                key: try keyColumn.map { try row.decode(column: $0, as: String.self) } ?? ""
            )
            let storefront = try row.decode(column: "storefront", as: String.self)
            prices[owner, default: [:]][storefront] = try row.decode(column: "amount_minor_units", as: Int.self)
        }
        return prices
    }

    /// An offer row's schedule: its payment mode, period, number of periods and tier, with its custom prices.
    private static func schedule(_ row: any SQLRow, customPrices: [String: Int]) throws -> OfferSchedule {
        OfferSchedule(
            paymentMode: try row.enumeration("payment_mode", as: OfferPaymentMode.self), period: try period(row),
            numberOfPeriods: try row.decode(column: "number_of_periods", as: Int.self),
            pricing: Pricing(tier: try row.optional("price_tier", as: Int.self), customPrices: customPrices))
    }

    private static func period(_ row: any SQLRow) throws -> OfferPeriod {
        let text = try row.decode(column: "period", as: String.self)
        guard let period = OfferPeriod(iso8601: text) else {
            throw StorageError.engine(message: "offer period '\(text)' is not an ISO 8601 period")
        }
        return period
    }
}
