import Foundation
import KioskCore
import KioskProtocol

/// Offer codes as App Store Connect's resources, for subscriptions and for in-app purchases: the offer code
/// (``OfferCodeCampaign``: its terms, prices and the customers it is for), then batches of one-time codes, downloaded
/// as a file, and custom codes that many customers type. A code redeemed in a purchase is sold as Apple's offer type
/// 3: an offer period of a subscription, or one price (`ONE_TIME`) of an in-app purchase.
extension ConnectCatalogController {
    /// The names one product kind's offer codes go by.
    struct OfferCodeFace: Sendable {
        let product: ProductFace
        /// `subscriptionOfferCodes`, `inAppPurchaseOfferCodes`.
        let type: String
        let oneTimeType: String
        let customType: String
        let priceType: String
        /// The relationship naming the product in a create request: `subscription`, `inAppPurchase`.
        let productRelationship: String

        var isSubscription: Bool { product.type == ProductFace.subscriptions.type }

        static let subscriptions = OfferCodeFace(
            product: .subscriptions, type: "subscriptionOfferCodes",
            oneTimeType: "subscriptionOfferCodeOneTimeUseCodes", customType: "subscriptionOfferCodeCustomCodes",
            priceType: "subscriptionOfferCodePrices", productRelationship: "subscription")
        static let inAppPurchases = OfferCodeFace(
            product: .inAppPurchases, type: "inAppPurchaseOfferCodes",
            oneTimeType: "inAppPurchaseOfferCodeOneTimeUseCodes", customType: "inAppPurchaseOfferCodeCustomCodes",
            priceType: "inAppPurchaseOfferPrices", productRelationship: "inAppPurchase")
    }

    func addOfferCodeRoutes(to routes: ConnectRouter) {
        for face in [OfferCodeFace.subscriptions, .inAppPurchases] {
            addCampaignRoutes(face, to: routes)
            addOneTimeCodeRoutes(face, to: routes)
            addCustomCodeRoutes(face, to: routes)
        }
    }

    // MARK: Offer codes

    private func addCampaignRoutes(_ face: OfferCodeFace, to routes: ConnectRouter) {
        routes.addRelated(face.product.path, "offerCodes", handledFilters: ["territory"]) { call in
            let (product, app) = try await product(call.id, face.product)
            let territories = call.query.list("filter[territory]").map { Set($0.compactMap(Storefront.named)) }
            var resources: [ConnectResource] = []
            for campaign in try await catalog.offerCodeCampaigns(bundleId: app.bundleId, productId: product.productId)
            where territories.map({ Self.isPriced(campaign, inAnyOf: $0) }) ?? true {
                resources.append(try await campaignResource(campaign, product, face))
            }
            return .many(resources)
        }
        routes.add(.post, "/v1/\(face.type)") { call in
            let body = try await call.body()
            let (product, app) = try await product(body.relationship(face.productRelationship) ?? "", face.product)
            if body.string("targetSubscriptionPlanType") == "MONTHLY" {
                throw ConnectAPIError.entity(
                    "ENTITY_ERROR.ATTRIBUTE.INVALID",
                    "Kiosk sells offer codes under the up-front price only; leave 'targetSubscriptionPlanType' out "
                        + "or give UPFRONT.", pointer: "/data/attributes/targetSubscriptionPlanType")
            }
            if body.attribute("autoRenewEnabled")?.boolValue == false {
                throw ConnectAPIError.entity(
                    "ENTITY_ERROR.ATTRIBUTE.INVALID",
                    "Kiosk's offer codes start a subscription that renews; 'autoRenewEnabled' false is not sold.",
                    pointer: "/data/attributes/autoRenewEnabled")
            }
            // An in-app purchase's offer code is one price: a schedule paying up front once, whose period is unused.
            var schedule =
                face.isSubscription
                ? try Self.schedule(body)
                : OfferSchedule(paymentMode: .payUpFront, period: OfferPeriod(count: 1, unit: .day))
            schedule.pricing = try offerPricing(body, schedule, for: product, face.priceType, face: face.product)
            let eligibilities = (body.attribute("customerEligibilities")?.arrayValue ?? []).compactMap {
                $0.stringValue.flatMap(OfferCodeCampaign.Eligibility.init(rawValue:))
            }
            let campaign = try await catalog.createOfferCodeCampaign(
                bundleId: app.bundleId, productId: product.productId, name: body.string("name") ?? "",
                eligibilities: Set(eligibilities),
                introductoryOfferRule: body.string("offerEligibility").flatMap(
                    OfferCodeCampaign.IntroductoryOfferRule.init(rawValue:)) ?? .replaceIntroductoryOffers,
                schedule: schedule)
            return .created(
                call.writer.single(try await campaignResource(campaign, product, face)),
                audit: ("product.offer-code", "\(app.bundleId)/\(product.productId)/\(campaign.id) \(campaign.name)"))
        }
        routes.add(.get, "/v1/\(face.type)/{id}") { call in
            let (campaign, product) = try await campaign(call.id, face)
            return .ok(call.writer.single(try await campaignResource(campaign, product, face)))
        }
        routes.add(.patch, "/v1/\(face.type)/{id}") { call in
            let body = try await call.body()
            var (campaign, product) = try await campaign(call.id, face)
            if let active = body.attribute("active")?.boolValue {
                campaign = try await catalog.setOfferCodeCampaignActive(id: campaign.id, active: active)
            }
            return .changed(
                call.writer.single(try await campaignResource(campaign, product, face)),
                audit: ("product.offer-code", "\(campaign.id) \(campaign.active ? "active" : "inactive")"))
        }
        routes.addRelated("/v1/\(face.type)", "prices") { call in
            let (campaign, product) = try await campaign(call.id, face)
            return .many(
                Self.offerPrices(
                    face.priceType, of: String(campaign.id), campaign.schedule, product, try await connectMoney(),
                    face: face.product))
        }
        for (name, custom) in [("oneTimeUseCodes", false), ("customCodes", true)] {
            routes.addRelated("/v1/\(face.type)", name) { call in
                let (campaign, _) = try await campaign(call.id, face)
                let batches = try await catalog.offerCodeBatches(campaignId: campaign.id)
                return .many(batches.filter { ($0.customCode != nil) == custom }.map { Self.batchResource($0, face) })
            }
        }
    }

    func campaignResource(_ campaign: OfferCodeCampaign, _ product: Product, _ face: OfferCodeFace) async throws
        -> ConnectResource
    {
        let batches = try await catalog.offerCodeBatches(campaignId: campaign.id)
        let id = String(campaign.id)
        let oneTime = batches.filter { $0.customCode == nil }
        func count(_ environment: StoreEnvironment) -> Int {
            oneTime.filter { $0.environment == environment }.reduce(0) { $0 + $1.numberOfCodes }
        }
        var attributes: [String: JSONValue] = [
            "name": .string(campaign.name),
            "customerEligibilities": .array(campaign.eligibilities.map(\.rawValue).sorted().map(JSONValue.string)),
            "productionCodeCount": .integer(count(.production)), "sandboxCodeCount": .integer(count(.sandbox)),
            "active": .bool(campaign.active),
        ]
        var relationships = [
            ConnectRelationship(
                name: "oneTimeUseCodes", related: .many(oneTime.map { Self.batchResource($0, face) })),
            ConnectRelationship(
                name: "customCodes",
                related: .many(batches.filter { $0.customCode != nil }.map { Self.batchResource($0, face) })),
            ConnectRelationship(
                name: "prices",
                related: .many(
                    Self.offerPrices(
                        face.priceType, of: id, campaign.schedule, product, try await connectMoney(),
                        face: face.product))),
        ]
        if face.isSubscription {
            attributes.merge(Self.scheduleAttributes(campaign.schedule)) { first, _ in first }
            attributes["offerEligibility"] = .string(campaign.introductoryOfferRule.rawValue)
            attributes["totalNumberOfCodes"] = .integer(batches.reduce(0) { $0 + $1.numberOfCodes })
            attributes["autoRenewEnabled"] = .bool(true)
            attributes["targetSubscriptionPlanType"] = .string("UPFRONT")
            relationships.insert(
                ConnectRelationship(
                    name: "subscription", related: .one(ConnectCatalogResources.subscription(product, group: nil))),
                at: 0)
        }
        return ConnectResource(type: face.type, id: id, attributes: attributes, relationships: relationships)
    }

    /// Whether the campaign sells in one of `territories`: free everywhere, else priced there.
    private static func isPriced(_ campaign: OfferCodeCampaign, inAnyOf territories: Set<Storefront>) -> Bool {
        campaign.schedule.paymentMode == .freeTrial
            || territories.contains { campaign.schedule.pricing.price(in: $0) != nil }
    }

    /// The campaign `id` names and its product, of the kind `face` is; 404 otherwise, or when its product is gone.
    private func campaign(_ id: String, _ face: OfferCodeFace) async throws -> (OfferCodeCampaign, Product) {
        let notFound = ConnectAPIError.notFound(face.type, id)
        guard let number = OfferCodeCampaign.ID(id), number > 0 else { throw notFound }
        do {
            let (campaign, app) = try await catalog.offerCodeCampaign(id: number)
            let product = try await self.product("\(app.id)-\(campaign.productId)", face.product).0
            return (campaign, product)
        } catch let error as KioskError where error.kind == .notFound {
            throw notFound
        } catch is ConnectAPIError {
            throw notFound
        }
    }

    // MARK: One-time codes and custom codes

    private func addOneTimeCodeRoutes(_ face: OfferCodeFace, to routes: ConnectRouter) {
        let type = face.oneTimeType
        routes.add(.post, "/v1/\(type)") { call in
            let body = try await call.body()
            let (campaign, _) = try await campaign(body.relationship("offerCode") ?? "", face)
            let expiration = try ConnectDay.date(
                body.string("expirationDate") ?? "", pointer: "/data/attributes/expirationDate")
            guard expiration.addingTimeInterval(86_400) > clock.now() else {
                throw ConnectAPIError.entity(
                    "ENTITY_ERROR.ATTRIBUTE.INVALID", "The expiration date is in the past.",
                    pointer: "/data/attributes/expirationDate")
            }
            let batch = try await catalog.createOneTimeCodes(
                campaignId: campaign.id, count: body.attribute("numberOfCodes")?.intValue ?? 0,
                expirationDate: expiration,
                environment: body.string("environment") == "SANDBOX" ? .sandbox : .production)
            return .created(
                call.writer.single(Self.batchResource(batch, face)),
                audit: ("product.offer-code.codes", "\(campaign.id): \(batch.numberOfCodes) one-time codes"))
        }
        routes.add(.get, "/v1/\(type)/{id}/values") { call in
            let (_, codes) = try await batch(call.id, face, custom: false)
            return .file(csv: codes.map { $0.code + "\n" }.joined())
        }
        addBatchRoutes(face, custom: false, to: routes)
    }

    private func addCustomCodeRoutes(_ face: OfferCodeFace, to routes: ConnectRouter) {
        routes.add(.post, "/v1/\(face.customType)") { call in
            let body = try await call.body()
            let (campaign, _) = try await campaign(body.relationship("offerCode") ?? "", face)
            let batch = try await catalog.createCustomCode(
                campaignId: campaign.id, code: body.string("customCode") ?? "",
                count: body.attribute("numberOfCodes")?.intValue ?? 0,
                expirationDate: try body.string("expirationDate").map {
                    try ConnectDay.date($0, pointer: "/data/attributes/expirationDate")
                })
            return .created(
                call.writer.single(Self.batchResource(batch, face)),
                audit: ("product.offer-code.codes", "\(campaign.id): custom code \(batch.customCode ?? "")"))
        }
        addBatchRoutes(face, custom: true, to: routes)
    }

    /// `GET` and `PATCH` (`active`) of one kind of batch.
    private func addBatchRoutes(_ face: OfferCodeFace, custom: Bool, to routes: ConnectRouter) {
        let path = "/v1/\(custom ? face.customType : face.oneTimeType)/{id}"
        routes.add(.get, path) { call in
            .ok(call.writer.single(Self.batchResource(try await batch(call.id, face, custom: custom).0, face)))
        }
        routes.add(.patch, path) { call in
            let body = try await call.body()
            var (batch, _) = try await batch(call.id, face, custom: custom)
            if let active = body.attribute("active")?.boolValue {
                batch = try await catalog.setOfferCodeBatchActive(id: batch.id, active: active)
            }
            return .changed(
                call.writer.single(Self.batchResource(batch, face)),
                audit: ("product.offer-code.codes", "\(batch.id) \(batch.active ? "active" : "inactive")"))
        }
    }

    /// A batch as Apple's one-time codes or custom code resource (a subscription's relates to its offer code).
    private static func batchResource(_ batch: OfferCodeBatch, _ face: OfferCodeFace) -> ConnectResource {
        var attributes: [String: JSONValue?] = [
            "numberOfCodes": .integer(batch.numberOfCodes),
            "createdDate": .string(batch.createdAt.formatted(.iso8601)),
            "expirationDate": batch.expirationDate.map { .string(ConnectDay.text($0)) }, "active": .bool(batch.active),
        ]
        if let code = batch.customCode {
            attributes["customCode"] = .string(code)
        } else {
            attributes["environment"] = .string(batch.environment == .sandbox ? "SANDBOX" : "PRODUCTION")
        }
        let offerCode = ConnectResource(type: face.type, id: String(batch.campaignId), attributes: [:])
        return ConnectResource(
            type: batch.customCode == nil ? face.oneTimeType : face.customType, id: String(batch.id),
            attributes: attributes,
            relationships: face.isSubscription ? [ConnectRelationship(name: "offerCode", related: .one(offerCode))] : []
        )
    }

    /// The batch `id` names, of the kind `face` and `custom` say, and its one-time codes; 404 otherwise.
    private func batch(_ id: String, _ face: OfferCodeFace, custom: Bool) async throws -> (OfferCodeBatch, [OfferCode])
    {
        let notFound = ConnectAPIError.notFound(custom ? face.customType : face.oneTimeType, id)
        guard let number = OfferCodeBatch.ID(id), number > 0 else { throw notFound }
        do {
            let (batch, codes) = try await catalog.offerCodeBatch(id: number)
            guard (batch.customCode != nil) == custom else { throw notFound }
            _ = try await campaign(String(batch.campaignId), face)
            return (batch, codes)
        } catch let error as KioskError where error.kind == .notFound {
            throw notFound
        } catch is ConnectAPIError {
            throw notFound
        }
    }
}
