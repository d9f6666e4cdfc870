import Foundation
import KioskCore
import KioskProtocol

/// Subscription prices as App Store Connect sets them: a script picks a price point in one territory, reads its
/// equalizations (the same price in every other territory), and posts a price per territory.
///
/// Kiosk's price points are its price table's 20 tiers in each territory (a custom amount is a price point too);
/// the equalizations of a tier's price are that tier's prices elsewhere. A price posted here is the product's custom
/// price in that territory, the one the console and `.storekit` files set, charged from the next purchase on.
extension ConnectCatalogController {
    /// A product's price points in each territory, and a price point's equalizations, for both faces.
    func addPricePointRoutes(_ face: ProductFace, to routes: ConnectRouter) {
        routes.addRelated(face.path, "pricePoints", handledFilters: ["territory", "planType"]) { call in
            let (product, _) = try await product(call.id, face)
            let money = try await connectMoney()
            let points = storefronts(call.query.list("filter[territory]")).flatMap { storefront in
                PriceTable.tiers.compactMap { tier in
                    PriceTable.price(tier: tier, in: storefront).map {
                        ConnectCatalogResources.pricePoint(
                            type: face.pricePointType, product: ConnectID.product(product), storefront: storefront,
                            minorUnits: $0, money: money)
                    }
                }
            }
            return .many(points)
        }
        routes.addRelated(
            "/v1/\(face.pricePointType)", "equalizations",
            handledFilters: ["territory", face.ownerRelationship, "planType"]
        ) { call in
            let (product, storefront, amount) = try await pricePoint(call.id, face)
            let money = try await connectMoney()
            let owner = call.query.list("filter[\(face.ownerRelationship)]")?.first ?? ConnectID.product(product)
            let tier = PriceTable.tier(matching: amount, in: storefront)
            let points = storefronts(call.query.list("filter[territory]")).compactMap { other -> ConnectResource? in
                guard other.code != storefront.code, let tier, let price = PriceTable.price(tier: tier, in: other)
                else { return nil }
                return ConnectCatalogResources.pricePoint(
                    type: face.pricePointType, product: owner, storefront: other, minorUnits: price, money: money)
            }
            return .many(points)
        }
    }

    func addSubscriptionPriceRoutes(to routes: ConnectRouter) {
        addPricePointRoutes(.subscriptions, to: routes)
        routes.add(.get, "/v1/subscriptionPricePoints/{id}") { call in
            let (product, storefront, amount) = try await pricePoint(call.id, .subscriptions)
            return .ok(
                call.writer.single(
                    ConnectCatalogResources.pricePoint(
                        type: "subscriptionPricePoints", product: ConnectID.product(product), storefront: storefront,
                        minorUnits: amount, money: try await connectMoney())))
        }
        routes.add(.post, "/v1/subscriptionPrices") { call in
            let body = try await call.body()
            let (product, app) = try await product(body.relationship("subscription") ?? "", .subscriptions)
            let pointId = body.relationship("subscriptionPricePoint") ?? ""
            guard let point = ConnectID.pricePoint(pointId), point.product == ConnectID.product(product) else {
                throw ConnectAPIError.entity(
                    "ENTITY_ERROR.RELATIONSHIP.INVALID",
                    "'\(pointId.prefix(80))' is not a price point of \(product.productId); take one from "
                        + "GET /v1/subscriptions/{id}/pricePoints.",
                    pointer: "/data/relationships/subscriptionPricePoint")
            }
            if let territory = body.relationship("territory"), territory != point.storefront.code {
                throw ConnectAPIError.entity(
                    "ENTITY_ERROR.RELATIONSHIP.INVALID",
                    "The price point is for \(point.storefront.code), not for '\(territory.prefix(8))'.",
                    pointer: "/data/relationships/territory")
            }
            try checkStartsNow(body.string("startDate"))
            let monthly = body.string("planType") == "MONTHLY"
            let code = point.storefront.code
            let changed = try await catalog.modifyProduct(bundleId: app.bundleId, productId: product.productId) {
                stored in
                if monthly {
                    var plan = stored.monthlyPlan ?? MonthlyPlan(pricing: Pricing())
                    plan.pricing.customPrices[code] = point.minorUnits
                    return ProductChanges(monthlyPlan: plan)
                }
                var pricing = stored.pricing
                pricing.customPrices[code] = point.minorUnits
                return ProductChanges(pricing: pricing)
            }
            let price = try await prices(of: changed).first {
                $0.id == ConnectID.price(product: ConnectID.product(changed), territory: code, monthly: monthly)
            }
            guard let price else { throw ConnectAPIError.notFound("subscriptionPrices", code) }
            return .created(
                call.writer.single(price),
                audit: ("product.price", "\(app.bundleId)/\(product.productId)/\(code)"))
        }
        routes.addRelated("/v1/subscriptions", "prices") { call in
            .many(try await prices(of: try await product(call.id, .subscriptions).0))
        }
        routes.add(.delete, "/v1/subscriptionPrices/{id}") { call in
            let notFound = ConnectAPIError.notFound("subscriptionPrices", call.id)
            guard let named = ConnectID.price(call.id) else { throw notFound }
            let (product, app): (Product, App)
            do {
                (product, app) = try await self.product(named.product, .subscriptions)
            } catch is ConnectAPIError {
                throw notFound
            }
            let code = named.storefront.code
            let pricing = named.monthly ? product.monthlyPlan?.pricing : product.pricing
            guard let pricing, pricing.price(in: named.storefront) != nil else { throw notFound }
            guard pricing.customPrices[code] != nil else {
                throw ConnectAPIError.entity(
                    "ENTITY_ERROR",
                    "\(product.productId)'s price in \(code) comes from its price tier, which covers every territory; "
                        + "Kiosk deletes only a price set for one territory.")
            }
            _ = try await catalog.modifyProduct(bundleId: app.bundleId, productId: product.productId) { stored in
                if named.monthly, var plan = stored.monthlyPlan {
                    plan.pricing.customPrices[code] = nil
                    return ProductChanges(monthlyPlan: plan)
                }
                var pricing = stored.pricing
                pricing.customPrices[code] = nil
                return ProductChanges(pricing: pricing)
            }
            return .deleted(audit: ("product.price.delete", "\(app.bundleId)/\(product.productId)/\(code)"))
        }
    }

    /// The product's price in every territory where it has one, up front and (when it has the plan) monthly.
    func prices(of product: Product) async throws -> [ConnectResource] {
        let money = try await connectMoney()
        let owner = ConnectID.product(product)
        var prices: [ConnectResource] = []
        for (pricing, monthly) in [(product.pricing, false), (product.monthlyPlan?.pricing, true)] {
            guard let pricing else { continue }
            for storefront in Storefront.all {
                guard let amount = pricing.price(in: storefront) else { continue }
                let point = ConnectCatalogResources.pricePoint(
                    type: "subscriptionPricePoints", product: owner, storefront: storefront, minorUnits: amount,
                    money: money)
                prices.append(
                    ConnectResource(
                        type: "subscriptionPrices",
                        id: ConnectID.price(product: owner, territory: storefront.code, monthly: monthly),
                        attributes: ["preserved": .bool(false), "planType": .string(monthly ? "MONTHLY" : "UPFRONT")],
                        relationships: [
                            ConnectRelationship(
                                name: "territory", related: .one(ConnectCatalogResources.territory(storefront))),
                            ConnectRelationship(name: "subscriptionPricePoint", related: .one(point)),
                        ]))
            }
        }
        return prices
    }

    /// The product, storefront and amount a price point's id names; 404 when it names none.
    private func pricePoint(_ id: String, _ face: ProductFace) async throws -> (Product, Storefront, Int) {
        let notFound = ConnectAPIError.notFound(face.pricePointType, id)
        guard let point = ConnectID.pricePoint(id) else { throw notFound }
        do {
            let (product, _) = try await product(point.product, face)
            return (product, point.storefront, point.minorUnits)
        } catch is ConnectAPIError {
            throw notFound
        }
    }

    /// The storefronts `filter[territory]` names (every one without it); an unknown code names none.
    private func storefronts(_ codes: [String]?) -> [Storefront] {
        guard let codes else { return Storefront.all }
        return codes.compactMap(Storefront.named)
    }

    /// Kiosk changes prices at once: a start date after today (UTC) is refused, not silently brought forward.
    private func checkStartsNow(_ startDate: String?) throws {
        guard let startDate else { return }
        let date = try ConnectDay.date(startDate, pointer: "/data/attributes/startDate")
        guard date <= clock.now() else {
            throw ConnectAPIError.entity(
                "ENTITY_ERROR.ATTRIBUTE.INVALID",
                "Kiosk changes a price at once and keeps no schedule of future prices; leave 'startDate' out (or give "
                    + "today) and post the price on the day it should start.",
                pointer: "/data/attributes/startDate")
        }
    }

    /// Each storefront's tax rule in force and the commission, for proceeds.
    func connectMoney() async throws -> ConnectMoney {
        let rules = try await money.taxRules().inForce
        let agreement = try await catalog.agreement().agreement
        let smallBusiness = agreement.smallBusinessProgramSince.map { $0 <= clock.now() } ?? false
        return ConnectMoney(
            taxRules: Dictionary(rules.map { ($0.storefront, $0) }, uniquingKeysWith: { first, _ in first }),
            commissionBasisPoints: smallBusiness ? Proceeds.reducedCommission : Proceeds.standardCommission)
    }
}

extension ConnectID {
    /// A product's price in one territory: `1400000001-com.example.pro~USA`, with `~MONTHLY` for the monthly plan's.
    static func price(product: String, territory: String, monthly: Bool) -> String {
        "\(product)~\(territory)" + (monthly ? "~MONTHLY" : "")
    }

    /// The product, storefront and plan a price's id names.
    static func price(_ id: String) -> (product: String, storefront: Storefront, monthly: Bool)? {
        let parts = id.split(separator: "~", omittingEmptySubsequences: false).map(String.init)
        guard (2...3).contains(parts.count), let storefront = Storefront.named(parts[1]),
            parts.count == 2 || parts[2] == "MONTHLY"
        else { return nil }
        return (parts[0], storefront, parts.count == 3)
    }
}
