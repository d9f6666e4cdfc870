import Foundation
import KioskCore
import KioskProtocol

/// An in-app purchase's price schedule as App Store Connect sets it: a base territory's price, from which every
/// other territory's price follows (automatic prices), and manual prices that override it in some territories.
///
/// Kiosk's pricing is the same thing in its own words: the base price is a tier, which prices every territory, and
/// manual prices are custom prices. So the base price must be one of the base territory's price points (a tier), and
/// Kiosk reports the United States as the base territory whenever a tier prices the product: a tier is one price
/// across territories, whichever territory named it.
extension ConnectCatalogController {
    func addInAppPurchasePriceRoutes(to routes: ConnectRouter) {
        addPricePointRoutes(.inAppPurchases, to: routes)
        routes.add(.post, "/v1/inAppPurchasePriceSchedules") { call in
            let body = try await call.body()
            let (product, app) = try await product(body.relationship("inAppPurchase") ?? "", .inAppPurchases)
            let base = try Self.territory(body.relationship("baseTerritory") ?? "", pointer: "baseTerritory")
            let manual = try includedPrices(
                body, named: "manualPrices", pricePoint: "inAppPurchasePricePoint", for: product)
            guard let basePrice = manual[base.code] else {
                throw ConnectAPIError.entity(
                    "ENTITY_ERROR.RELATIONSHIP.REQUIRED",
                    "The manual prices need one in the base territory, \(base.code).",
                    pointer: "/data/relationships/manualPrices")
            }
            guard let tier = PriceTable.tier(matching: basePrice, in: base) else {
                throw ConnectAPIError.entity(
                    "ENTITY_ERROR.RELATIONSHIP.INVALID",
                    "The base price must be one of \(base.code)'s price points (GET /v2/inAppPurchases/{id}/pricePoints).",
                    pointer: "/data/relationships/manualPrices")
            }
            let others = manual.filter { $0.key != base.code }
            let changed = try await catalog.modifyProduct(bundleId: app.bundleId, productId: product.productId) { _ in
                ProductChanges(pricing: Pricing(tier: tier, customPrices: others))
            }
            return .created(
                call.writer.single(try await schedule(of: changed)),
                audit: ("product.update", "\(app.bundleId)/\(product.productId) price schedule"))
        }
        routes.add(.get, "/v1/inAppPurchasePriceSchedules/{id}") { call in
            .ok(call.writer.single(try await schedule(of: try await scheduledProduct(call.id))))
        }
        routes.addRelated("/v2/inAppPurchases", "iapPriceSchedule") { call in
            .one(try await schedule(of: try await product(call.id, .inAppPurchases).0))
        }
        routes.addRelated("/v1/inAppPurchasePriceSchedules", "baseTerritory") { call in
            .one(Self.baseTerritory(of: try await scheduledProduct(call.id)).map(ConnectCatalogResources.territory))
        }
        for (name, manual) in [("manualPrices", true), ("automaticPrices", false)] {
            routes.addRelated("/v1/inAppPurchasePriceSchedules", name) { call in
                .many(try await prices(of: try await scheduledProduct(call.id), manual: manual))
            }
        }
    }

    /// The schedule: its base territory, manual prices and automatic prices.
    private func schedule(of product: Product) async throws -> ConnectResource {
        ConnectResource(
            type: "inAppPurchasePriceSchedules", id: ConnectID.product(product), attributes: [:],
            relationships: [
                ConnectRelationship(
                    name: "baseTerritory",
                    related: .one(Self.baseTerritory(of: product).map(ConnectCatalogResources.territory))),
                ConnectRelationship(name: "manualPrices", related: .many(try await prices(of: product, manual: true))),
                ConnectRelationship(
                    name: "automaticPrices", related: .many(try await prices(of: product, manual: false))),
            ])
    }

    /// The United States when a tier prices the product; else the first territory with a custom price.
    private static func baseTerritory(of product: Product) -> Storefront? {
        if product.pricing.tier != nil { return Storefront.named("USA") }
        return product.pricing.customPrices.keys.sorted().lazy.compactMap(Storefront.named).first
    }

    /// The manual prices (the base territory's and the custom ones) or the automatic ones (the tier's elsewhere).
    private func prices(of product: Product, manual: Bool) async throws -> [ConnectResource] {
        let money = try await connectMoney()
        let owner = ConnectID.product(product)
        let base = Self.baseTerritory(of: product)?.code
        return Storefront.all.compactMap { storefront in
            let isManual = storefront.code == base || product.pricing.customPrices[storefront.code] != nil
            guard isManual == manual, let amount = product.pricing.price(in: storefront) else { return nil }
            return ConnectResource(
                type: "inAppPurchasePrices",
                id: ConnectID.price(product: owner, territory: storefront.code, monthly: false),
                attributes: ["manual": .bool(manual)],
                relationships: [
                    ConnectRelationship(
                        name: "territory", related: .one(ConnectCatalogResources.territory(storefront))),
                    ConnectRelationship(
                        name: "inAppPurchasePricePoint",
                        related: .one(
                            ConnectCatalogResources.pricePoint(
                                type: "inAppPurchasePricePoints", product: owner, storefront: storefront,
                                minorUnits: amount, money: money))),
                ])
        }
    }

    /// The in-app purchase whose schedule `id` names (a schedule's id is its in-app purchase's).
    private func scheduledProduct(_ id: String) async throws -> Product {
        do {
            return try await product(id, .inAppPurchases).0
        } catch is ConnectAPIError {
            throw ConnectAPIError.notFound("inAppPurchasePriceSchedules", id)
        }
    }

    /// The prices a body creates with it: the `included` resources its relationship `named` lists (`${local-id}`
    /// ids, as Apple's clients write them), each with the price point its `pricePoint` relationship names, which
    /// must be one of `product`'s: territory → minor units. A start or end date is refused: Kiosk keeps no future
    /// prices.
    func includedPrices(
        _ body: ConnectBody, named relationship: String, pricePoint: String, for product: Product
    ) throws -> [String: Int] {
        let named = Set(
            (body.data["relationships"]?[relationship]?["data"]?.arrayValue ?? []).compactMap {
                $0["id"]?.stringValue
            })
        var prices: [String: Int] = [:]
        for (index, item) in body.included.enumerated() where named.contains(item["id"]?.stringValue ?? "") {
            if item["attributes"]?["startDate"]?.stringValue != nil
                || item["attributes"]?["endDate"]?.stringValue != nil
            {
                throw ConnectAPIError.entity(
                    "ENTITY_ERROR.ATTRIBUTE.INVALID",
                    "Kiosk changes prices at once and keeps no schedule of future prices: leave 'startDate' and "
                        + "'endDate' out.", pointer: "/included/\(index)/attributes")
            }
            let pointId = item["relationships"]?[pricePoint]?["data"]?["id"]?.stringValue ?? ""
            guard let point = ConnectID.pricePoint(pointId), point.product == ConnectID.product(product) else {
                throw ConnectAPIError.entity(
                    "ENTITY_ERROR.RELATIONSHIP.INVALID",
                    "'\(pointId.prefix(80))' is not a price point of \(product.productId).",
                    pointer: "/included/\(index)/relationships/\(pricePoint)")
            }
            prices[point.storefront.code] = point.minorUnits
        }
        return prices
    }

    /// The territory a relationship names; 409 when it names none.
    static func territory(_ code: String, pointer: String) throws -> Storefront {
        guard let storefront = Storefront.named(code) else {
            throw ConnectAPIError.entity(
                "ENTITY_ERROR.RELATIONSHIP.INVALID", "'\(code.prefix(8))' is not a territory.",
                pointer: "/data/relationships/\(pointer)")
        }
        return storefront
    }
}
