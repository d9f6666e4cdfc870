import Foundation
import KioskCore
import KioskProtocol

/// A subscription's introductory and promotional offers as App Store Connect's resources. They are the product's
/// own offers (`kiosk offers`): an introductory offer per territory (or for all of them), a promotional offer per
/// offer code, each priced per territory by price points.
extension ConnectCatalogController {
    func addOfferRoutes(to routes: ConnectRouter) {
        addIntroductoryOfferRoutes(to: routes)
        addPromotionalOfferRoutes(to: routes)
        addWinBackOfferRoutes(to: routes)
        addOfferCodeRoutes(to: routes)
    }

    /// A subscription's offers, prices and availability, as relationships, for the ones `query` includes (built only then).
    func includedRelationships(of product: Product, _ query: ConnectQuery) async throws -> [ConnectRelationship] {
        var relationships: [ConnectRelationship] = []
        if query.includes("introductoryOffers") {
            relationships.append(
                ConnectRelationship(
                    name: "introductoryOffers", related: .many(try await introductoryOffers(of: product))))
        }
        if query.includes("promotionalOffers") {
            relationships.append(
                ConnectRelationship(name: "promotionalOffers", related: .many(try await promotionalOffers(of: product)))
            )
        }
        if query.includes("prices") {
            relationships.append(ConnectRelationship(name: "prices", related: .many(try await prices(of: product))))
        }
        if query.includes("winBackOffers") {
            relationships.append(
                ConnectRelationship(name: "winBackOffers", related: .many(try await winBackOffers(of: product))))
        }
        if query.includes("offerCodes") {
            let app = try await app(String(product.appId))
            var campaigns: [ConnectResource] = []
            for campaign in try await catalog.offerCodeCampaigns(bundleId: app.bundleId, productId: product.productId) {
                campaigns.append(try await campaignResource(campaign, product, .subscriptions))
            }
            relationships.append(ConnectRelationship(name: "offerCodes", related: .many(campaigns)))
        }
        if query.includes("subscriptionAvailability") {
            relationships.append(
                ConnectRelationship(
                    name: "subscriptionAvailability",
                    related: .one(Self.availability(of: product, type: "subscriptionAvailabilities"))))
        }
        return relationships
    }

    // MARK: Introductory offers

    private func addIntroductoryOfferRoutes(to routes: ConnectRouter) {
        routes.addRelated("/v1/subscriptions", "introductoryOffers") { call in
            .many(try await introductoryOffers(of: try await product(call.id, .subscriptions).0))
        }
        routes.add(.post, "/v1/subscriptionIntroductoryOffers") { call in
            let body = try await call.body()
            let (product, app) = try await product(body.relationship("subscription") ?? "", .subscriptions)
            try Self.refuseDates(body)
            let schedule = try Self.schedule(body)
            var territory = try body.relationship("territory").map { try Self.territory($0, pointer: "territory") }
            var offered = schedule
            if schedule.paymentMode != .freeTrial {
                let point = try pricePoint(of: body, for: product)
                guard territory == nil || territory?.code == point.storefront.code else {
                    throw ConnectAPIError.entity(
                        "ENTITY_ERROR.RELATIONSHIP.INVALID",
                        "The price point is for \(point.storefront.code), not for \(territory?.code ?? "").",
                        pointer: "/data/relationships/territory")
                }
                territory = point.storefront
                offered.pricing = Pricing(customPrices: [point.storefront.code: point.minorUnits])
            }
            let offer = IntroductoryOffer(storefront: territory?.code, schedule: offered)
            let changed = try await catalog.modifyProduct(bundleId: app.bundleId, productId: product.productId) {
                stored in
                if stored.introductoryOffers.contains(where: { $0.storefront == offer.storefront }) {
                    throw ConnectAPIError.entity(
                        "ENTITY_ERROR",
                        "\(product.productId) already has an introductory offer for \(offer.storefront ?? "every territory"); "
                            + "delete it first.")
                }
                return ProductChanges(introductoryOffers: stored.introductoryOffers + [offer])
            }
            let created = try await introductoryOffers(of: changed).named(
                Self.introductoryOfferId(changed, offer.storefront), type: "subscriptionIntroductoryOffers")
            return .created(
                call.writer.single(created),
                audit: ("product.introductory-offer", "\(app.bundleId)/\(product.productId)"))
        }
        routes.add(.patch, "/v1/subscriptionIntroductoryOffers/{id}") { call in
            let body = try await call.body()
            try Self.refuseDates(body)
            let (product, _, storefront) = try await introductoryOffer(call.id)
            let offer = try await introductoryOffers(of: product).named(
                Self.introductoryOfferId(product, storefront), type: "subscriptionIntroductoryOffers")
            return .ok(call.writer.single(offer))
        }
        routes.add(.delete, "/v1/subscriptionIntroductoryOffers/{id}") { call in
            let (product, app, storefront) = try await introductoryOffer(call.id)
            _ = try await catalog.modifyProduct(bundleId: app.bundleId, productId: product.productId) { stored in
                ProductChanges(introductoryOffers: stored.introductoryOffers.filter { $0.storefront != storefront })
            }
            return .deleted(audit: ("product.remove-offer", "\(app.bundleId)/\(product.productId)/introductory"))
        }
    }

    private func introductoryOffers(of product: Product) async throws -> [ConnectResource] {
        let money = try await connectMoney()
        let owner = ConnectID.product(product)
        return product.introductoryOffers.map { offer in
            let storefront = offer.storefront.flatMap(Storefront.named)
            var relationships = [
                ConnectRelationship(
                    name: "subscription", related: .one(ConnectCatalogResources.subscription(product, group: nil))),
                ConnectRelationship(
                    name: "territory", related: .one(storefront.map(ConnectCatalogResources.territory))),
            ]
            if let storefront, offer.paymentMode != .freeTrial, let amount = offer.pricing.price(in: storefront) {
                relationships.append(
                    ConnectRelationship(
                        name: "subscriptionPricePoint",
                        related: .one(
                            ConnectCatalogResources.pricePoint(
                                type: "subscriptionPricePoints", product: owner, storefront: storefront,
                                minorUnits: amount, money: money))))
            }
            return ConnectResource(
                type: "subscriptionIntroductoryOffers", id: Self.introductoryOfferId(product, offer.storefront),
                attributes: Self.scheduleAttributes(offer.schedule), relationships: relationships)
        }
    }

    /// `1400000001-com.example.plus~intro~USA`, `…~intro~ALL` for the offer of every territory.
    private static func introductoryOfferId(_ product: Product, _ storefront: String?) -> String {
        "\(ConnectID.product(product))~intro~\(storefront ?? "ALL")"
    }

    private func introductoryOffer(_ id: String) async throws -> (Product, App, String?) {
        let notFound = ConnectAPIError.notFound("subscriptionIntroductoryOffers", id)
        let parts = id.components(separatedBy: "~intro~")
        guard parts.count == 2 else { throw notFound }
        let (product, app): (Product, App)
        do {
            (product, app) = try await self.product(parts[0], .subscriptions)
        } catch is ConnectAPIError {
            throw notFound
        }
        let storefront = parts[1] == "ALL" ? nil : parts[1]
        guard product.introductoryOffers.contains(where: { $0.storefront == storefront }) else { throw notFound }
        return (product, app, storefront)
    }

    // MARK: Promotional offers

    private func addPromotionalOfferRoutes(to routes: ConnectRouter) {
        routes.addRelated("/v1/subscriptions", "promotionalOffers") { call in
            .many(try await promotionalOffers(of: try await product(call.id, .subscriptions).0))
        }
        routes.add(.post, "/v1/subscriptionPromotionalOffers") { call in
            let body = try await call.body()
            let (product, app) = try await product(body.relationship("subscription") ?? "", .subscriptions)
            var schedule = try Self.schedule(body)
            schedule.pricing = try offerPricing(body, schedule, for: product, "subscriptionPromotionalOfferPrices")
            let offer = PromotionalOffer(
                identifier: body.string("offerCode") ?? "", referenceName: body.string("name") ?? "",
                schedule: schedule)
            let changed = try await catalog.modifyProduct(bundleId: app.bundleId, productId: product.productId) {
                stored in
                if stored.promotionalOffers.contains(where: { $0.identifier == offer.identifier }) {
                    throw ConnectAPIError.entity(
                        "ENTITY_ERROR",
                        "\(product.productId) already has a promotional offer '\(offer.identifier)'.",
                        pointer: "/data/attributes/offerCode")
                }
                return ProductChanges(promotionalOffers: stored.promotionalOffers + [offer])
            }
            let created = try await promotionalOffers(of: changed).named(
                Self.promotionalOfferId(changed, offer.identifier), type: "subscriptionPromotionalOffers")
            return .created(
                call.writer.single(created),
                audit: ("product.promotional-offer", "\(app.bundleId)/\(product.productId)/\(offer.identifier)"))
        }
        routes.add(.get, "/v1/subscriptionPromotionalOffers/{id}") { call in
            let (product, _, identifier) = try await promotionalOffer(call.id)
            let offer = try await promotionalOffers(of: product).named(
                Self.promotionalOfferId(product, identifier), type: "subscriptionPromotionalOffers")
            return .ok(call.writer.single(offer))
        }
        routes.add(.patch, "/v1/subscriptionPromotionalOffers/{id}") { call in
            let body = try await call.body()
            let (product, app, identifier) = try await promotionalOffer(call.id)
            let changed = try await catalog.modifyProduct(bundleId: app.bundleId, productId: product.productId) {
                stored in
                ProductChanges(
                    promotionalOffers: try stored.promotionalOffers.map { offer in
                        guard offer.identifier == identifier, body.data["relationships"]?["prices"] != nil else {
                            return offer
                        }
                        var changed = offer
                        changed.schedule.pricing = try offerPricing(
                            body, offer.schedule, for: stored, "subscriptionPromotionalOfferPrices")
                        return changed
                    })
            }
            let offer = try await promotionalOffers(of: changed).named(call.id, type: "subscriptionPromotionalOffers")
            return .changed(
                call.writer.single(offer),
                audit: ("product.promotional-offer", "\(app.bundleId)/\(product.productId)/\(identifier) prices"))
        }
        routes.addRelated("/v1/subscriptionPromotionalOffers", "prices") { call in
            let (product, _, identifier) = try await promotionalOffer(call.id)
            guard let offer = product.promotionalOffers.first(where: { $0.identifier == identifier }) else {
                throw ConnectAPIError.notFound("subscriptionPromotionalOffers", call.id)
            }
            return .many(
                Self.offerPrices(
                    "subscriptionPromotionalOfferPrices", of: call.id, offer.schedule, product,
                    try await connectMoney(), face: .subscriptions))
        }
        routes.add(.delete, "/v1/subscriptionPromotionalOffers/{id}") { call in
            let (product, app, identifier) = try await promotionalOffer(call.id)
            _ = try await catalog.modifyProduct(bundleId: app.bundleId, productId: product.productId) { stored in
                ProductChanges(promotionalOffers: stored.promotionalOffers.filter { $0.identifier != identifier })
            }
            return .deleted(audit: ("product.remove-offer", "\(app.bundleId)/\(product.productId)/\(identifier)"))
        }
    }

    private func promotionalOffers(of product: Product) async throws -> [ConnectResource] {
        let money = try await connectMoney()
        return product.promotionalOffers.map { offer in
            let id = Self.promotionalOfferId(product, offer.identifier)
            var attributes = Self.scheduleAttributes(offer.schedule)
            attributes["name"] = .string(offer.referenceName)
            attributes["offerCode"] = .string(offer.identifier)
            return ConnectResource(
                type: "subscriptionPromotionalOffers", id: id, attributes: attributes,
                relationships: [
                    ConnectRelationship(
                        name: "subscription",
                        related: .one(ConnectCatalogResources.subscription(product, group: nil))),
                    ConnectRelationship(
                        name: "prices",
                        related: .many(
                            Self.offerPrices(
                                "subscriptionPromotionalOfferPrices", of: id, offer.schedule, product, money,
                                face: .subscriptions))),
                ])
        }
    }

    /// An offer's price in each territory that has one (none for a free trial), as `type` resources
    /// (`OFFER~USA`), each with its territory and price point (as `face` names it: a subscription's offers relate to
    /// `subscriptionPricePoint`, an in-app purchase's to `pricePoint`).
    static func offerPrices(
        _ type: String, of offerId: String, _ schedule: OfferSchedule, _ product: Product, _ money: ConnectMoney,
        face: ProductFace
    ) -> [ConnectResource] {
        guard schedule.paymentMode != .freeTrial else { return [] }
        return Storefront.all.compactMap { storefront -> ConnectResource? in
            guard let amount = schedule.pricing.price(in: storefront) else { return nil }
            return ConnectResource(
                type: type, id: "\(offerId)~\(storefront.code)", attributes: [:],
                relationships: [
                    ConnectRelationship(
                        name: "territory", related: .one(ConnectCatalogResources.territory(storefront))),
                    ConnectRelationship(
                        name: face.offerPricePointRelationship,
                        related: .one(
                            ConnectCatalogResources.pricePoint(
                                type: face.pricePointType, product: ConnectID.product(product),
                                storefront: storefront, minorUnits: amount, money: money))),
                ])
        }
    }

    /// The prices of an offer that is not a free trial, from the body's `prices` and the resources it includes;
    /// 409 when it names none.
    func offerPricing(
        _ body: ConnectBody, _ schedule: OfferSchedule, for product: Product, _ type: String,
        face: ProductFace = .subscriptions
    ) throws -> Pricing {
        guard schedule.paymentMode != .freeTrial else { return Pricing() }
        let prices = try includedPrices(
            body, named: "prices", pricePoint: face.offerPricePointRelationship, for: product)
        guard !prices.isEmpty else {
            throw ConnectAPIError.entity(
                "ENTITY_ERROR.RELATIONSHIP.REQUIRED",
                "An offer that is not a free trial needs its prices: name them in 'prices' and include each as a "
                    + "\(type) resource with its territory and price point.", pointer: "/data/relationships/prices")
        }
        return Pricing(customPrices: prices)
    }

    /// `1400000001-com.example.plus~promo~comeback`.
    private static func promotionalOfferId(_ product: Product, _ identifier: String) -> String {
        "\(ConnectID.product(product))~promo~\(identifier)"
    }

    private func promotionalOffer(_ id: String) async throws -> (Product, App, String) {
        try await identifiedOffer(id, "subscriptionPromotionalOffers", kind: "promo") {
            $0.promotionalOffers.map(\.identifier)
        }
    }

    /// The product, app and offer identifier an offer's id (`PRODUCT~kind~IDENTIFIER`) names; 404 as a `type`
    /// when the product has no offer of that identifier among `identifiers`.
    func identifiedOffer(
        _ id: String, _ type: String, kind: String, identifiers: (Product) -> [String]
    ) async throws -> (Product, App, String) {
        let notFound = ConnectAPIError.notFound(type, id)
        let parts = id.components(separatedBy: "~\(kind)~")
        guard parts.count == 2 else { throw notFound }
        let (product, app): (Product, App)
        do {
            (product, app) = try await self.product(parts[0], .subscriptions)
        } catch is ConnectAPIError {
            throw notFound
        }
        guard identifiers(product).contains(parts[1]) else { throw notFound }
        return (product, app, parts[1])
    }

    /// The price point a body's `subscriptionPricePoint` names, which must be one of `product`'s.
    private func pricePoint(of body: ConnectBody, for product: Product) throws -> (
        product: String, storefront: Storefront, minorUnits: Int
    ) {
        let pointId = body.relationship("subscriptionPricePoint") ?? ""
        guard let point = ConnectID.pricePoint(pointId), point.product == ConnectID.product(product) else {
            throw ConnectAPIError.entity(
                "ENTITY_ERROR.RELATIONSHIP.INVALID",
                pointId.isEmpty
                    ? "An offer that is not a free trial needs 'subscriptionPricePoint': its price in a territory."
                    : "'\(pointId.prefix(80))' is not a price point of \(product.productId).",
                pointer: "/data/relationships/subscriptionPricePoint")
        }
        return point
    }

    // MARK: Offer terms

    /// Apple's `duration` names, by the offer period Kiosk stores.
    static let offerDurations: [(String, OfferPeriod)] = [
        ("THREE_DAYS", OfferPeriod(count: 3, unit: .day)), ("ONE_WEEK", OfferPeriod(count: 1, unit: .week)),
        ("TWO_WEEKS", OfferPeriod(count: 2, unit: .week)), ("ONE_MONTH", OfferPeriod(count: 1, unit: .month)),
        ("TWO_MONTHS", OfferPeriod(count: 2, unit: .month)), ("THREE_MONTHS", OfferPeriod(count: 3, unit: .month)),
        ("SIX_MONTHS", OfferPeriod(count: 6, unit: .month)), ("ONE_YEAR", OfferPeriod(count: 1, unit: .year)),
    ]

    /// Apple's `offerMode` names, by Kiosk's payment mode.
    static let offerModes: [(String, OfferPaymentMode)] = [
        ("FREE_TRIAL", .freeTrial), ("PAY_AS_YOU_GO", .payAsYouGo), ("PAY_UP_FRONT", .payUpFront),
    ]

    /// The schedule a body's `duration`, `offerMode` and `numberOfPeriods` (or what `periods` names) give; the
    /// contract has checked the names.
    static func schedule(_ body: ConnectBody, periods: String = "numberOfPeriods") throws -> OfferSchedule {
        guard let period = offerDurations.first(where: { $0.0 == body.string("duration") })?.1,
            let mode = offerModes.first(where: { $0.0 == body.string("offerMode") })?.1
        else {
            throw ConnectAPIError.entity(
                "ENTITY_ERROR.ATTRIBUTE.REQUIRED", "An offer needs 'duration' and 'offerMode'.",
                pointer: "/data/attributes")
        }
        return OfferSchedule(
            paymentMode: mode, period: period, numberOfPeriods: body.attribute(periods)?.intValue ?? 1)
    }

    static func scheduleAttributes(_ schedule: OfferSchedule, periods: String = "numberOfPeriods") -> [String:
        JSONValue]
    {
        var attributes: [String: JSONValue] = [periods: .integer(schedule.numberOfPeriods)]
        if let duration = offerDurations.first(where: { $0.1 == schedule.period })?.0 {
            attributes["duration"] = .string(duration)
        }
        if let mode = offerModes.first(where: { $0.1 == schedule.paymentMode })?.0 {
            attributes["offerMode"] = .string(mode)
        }
        return attributes
    }

    /// Kiosk's offers have no dates: they run until deleted.
    private static func refuseDates(_ body: ConnectBody) throws {
        for name in ["startDate", "endDate"] where body.attribute(name) != nil {
            throw ConnectAPIError.entity(
                "ENTITY_ERROR.ATTRIBUTE.INVALID",
                "Kiosk's introductory offers run until they are deleted; they have no '\(name)'. Leave it out, and "
                    + "delete the offer when it should end.",
                pointer: "/data/attributes/\(name)")
        }
    }
}
