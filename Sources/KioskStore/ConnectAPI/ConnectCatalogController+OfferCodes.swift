import Foundation
import KioskCore
import KioskProtocol

/// A subscription's offer codes as App Store Connect's resources: the offer code (``OfferCodeCampaign``: its terms,
/// prices and the customers it is for), then batches of one-time codes, downloaded as a file, and custom codes that
/// many customers type. A code redeemed in a purchase is sold as Apple's offer type 3.
extension ConnectCatalogController {
    func addOfferCodeRoutes(to routes: ConnectRouter) {
        addCampaignRoutes(to: routes)
        addOneTimeCodeRoutes(to: routes)
        addCustomCodeRoutes(to: routes)
    }

    // MARK: Offer codes

    private func addCampaignRoutes(to routes: ConnectRouter) {
        routes.addRelated("/v1/subscriptions", "offerCodes", handledFilters: ["territory"]) { call in
            let (product, app) = try await product(call.id, .subscriptions)
            let territories = call.query.list("filter[territory]").map { Set($0.compactMap(Storefront.named)) }
            var resources: [ConnectResource] = []
            for campaign in try await catalog.offerCodeCampaigns(bundleId: app.bundleId, productId: product.productId)
            where territories.map({ Self.isPriced(campaign, inAnyOf: $0) }) ?? true {
                resources.append(try await campaignResource(campaign, product))
            }
            return .many(resources)
        }
        routes.add(.post, "/v1/subscriptionOfferCodes") { call in
            let body = try await call.body()
            let (product, app) = try await product(body.relationship("subscription") ?? "", .subscriptions)
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
            var schedule = try Self.schedule(body)
            schedule.pricing = try offerPricing(body, schedule, for: product, "subscriptionOfferCodePrices")
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
                call.writer.single(try await campaignResource(campaign, product)),
                audit: ("product.offer-code", "\(app.bundleId)/\(product.productId)/\(campaign.id) \(campaign.name)"))
        }
        routes.add(.get, "/v1/subscriptionOfferCodes/{id}") { call in
            let (campaign, product) = try await campaign(call.id)
            return .ok(call.writer.single(try await campaignResource(campaign, product)))
        }
        routes.add(.patch, "/v1/subscriptionOfferCodes/{id}") { call in
            let body = try await call.body()
            var (campaign, product) = try await campaign(call.id)
            if let active = body.attribute("active")?.boolValue {
                campaign = try await catalog.setOfferCodeCampaignActive(id: campaign.id, active: active)
            }
            return .changed(
                call.writer.single(try await campaignResource(campaign, product)),
                audit: ("product.offer-code", "\(campaign.id) \(campaign.active ? "active" : "inactive")"))
        }
        routes.addRelated("/v1/subscriptionOfferCodes", "prices") { call in
            let (campaign, product) = try await campaign(call.id)
            return .many(
                Self.offerPrices(
                    "subscriptionOfferCodePrices", of: String(campaign.id), campaign.schedule, product,
                    try await connectMoney()))
        }
        for (name, custom) in [("oneTimeUseCodes", false), ("customCodes", true)] {
            routes.addRelated("/v1/subscriptionOfferCodes", name) { call in
                let (campaign, _) = try await campaign(call.id)
                let batches = try await catalog.offerCodeBatches(campaignId: campaign.id)
                return .many(batches.filter { ($0.customCode != nil) == custom }.map(Self.batchResource))
            }
        }
    }

    func campaignResource(_ campaign: OfferCodeCampaign, _ product: Product) async throws
        -> ConnectResource
    {
        let batches = try await catalog.offerCodeBatches(campaignId: campaign.id)
        let id = String(campaign.id)
        let oneTime = batches.filter { $0.customCode == nil }
        func count(_ environment: StoreEnvironment) -> Int {
            oneTime.filter { $0.environment == environment }.reduce(0) { $0 + $1.numberOfCodes }
        }
        var attributes = Self.scheduleAttributes(campaign.schedule)
        attributes["name"] = .string(campaign.name)
        attributes["customerEligibilities"] = .array(
            campaign.eligibilities.map(\.rawValue).sorted().map(JSONValue.string))
        attributes["offerEligibility"] = .string(campaign.introductoryOfferRule.rawValue)
        attributes["totalNumberOfCodes"] = .integer(batches.reduce(0) { $0 + $1.numberOfCodes })
        attributes["productionCodeCount"] = .integer(count(.production))
        attributes["sandboxCodeCount"] = .integer(count(.sandbox))
        attributes["active"] = .bool(campaign.active)
        attributes["autoRenewEnabled"] = .bool(true)
        attributes["targetSubscriptionPlanType"] = .string("UPFRONT")
        return ConnectResource(
            type: "subscriptionOfferCodes", id: id, attributes: attributes,
            relationships: [
                ConnectRelationship(
                    name: "subscription", related: .one(ConnectCatalogResources.subscription(product, group: nil))),
                ConnectRelationship(name: "oneTimeUseCodes", related: .many(oneTime.map(Self.batchResource))),
                ConnectRelationship(
                    name: "customCodes",
                    related: .many(batches.filter { $0.customCode != nil }.map(Self.batchResource))),
                ConnectRelationship(
                    name: "prices",
                    related: .many(
                        Self.offerPrices(
                            "subscriptionOfferCodePrices", of: id, campaign.schedule, product,
                            try await connectMoney()))),
            ])
    }

    /// Whether the campaign sells in one of `territories`: free everywhere, else priced there.
    private static func isPriced(_ campaign: OfferCodeCampaign, inAnyOf territories: Set<Storefront>) -> Bool {
        campaign.schedule.paymentMode == .freeTrial
            || territories.contains { campaign.schedule.pricing.price(in: $0) != nil }
    }

    /// The campaign `id` names and its product; 404 when none, or when its product is gone.
    private func campaign(_ id: String) async throws -> (OfferCodeCampaign, Product) {
        let notFound = ConnectAPIError.notFound("subscriptionOfferCodes", id)
        guard let number = OfferCodeCampaign.ID(id), number > 0 else { throw notFound }
        do {
            let (campaign, app) = try await catalog.offerCodeCampaign(id: number)
            let product = try await self.product("\(app.id)-\(campaign.productId)", .subscriptions).0
            return (campaign, product)
        } catch let error as KioskError where error.kind == .notFound {
            throw notFound
        } catch is ConnectAPIError {
            throw notFound
        }
    }

    // MARK: One-time codes and custom codes

    private func addOneTimeCodeRoutes(to routes: ConnectRouter) {
        let type = "subscriptionOfferCodeOneTimeUseCodes"
        routes.add(.post, "/v1/\(type)") { call in
            let body = try await call.body()
            let (campaign, _) = try await campaign(body.relationship("offerCode") ?? "")
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
                call.writer.single(Self.batchResource(batch)),
                audit: ("product.offer-code.codes", "\(campaign.id): \(batch.numberOfCodes) one-time codes"))
        }
        routes.add(.get, "/v1/\(type)/{id}") { call in
            .ok(call.writer.single(Self.batchResource(try await batch(call.id, type: type, custom: false).0)))
        }
        routes.add(.patch, "/v1/\(type)/{id}") { call in
            let body = try await call.body()
            let batch = try await changedBatch(call.id, type: type, custom: false, active: body.attribute("active"))
            return .changed(
                call.writer.single(Self.batchResource(batch)),
                audit: ("product.offer-code.codes", "\(batch.id) \(batch.active ? "active" : "inactive")"))
        }
        routes.add(.get, "/v1/\(type)/{id}/values") { call in
            let (_, codes) = try await batch(call.id, type: type, custom: false)
            return .file(csv: codes.map { $0.code + "\n" }.joined())
        }
    }

    private func addCustomCodeRoutes(to routes: ConnectRouter) {
        let type = "subscriptionOfferCodeCustomCodes"
        routes.add(.post, "/v1/\(type)") { call in
            let body = try await call.body()
            let (campaign, _) = try await campaign(body.relationship("offerCode") ?? "")
            let batch = try await catalog.createCustomCode(
                campaignId: campaign.id, code: body.string("customCode") ?? "",
                count: body.attribute("numberOfCodes")?.intValue ?? 0,
                expirationDate: try body.string("expirationDate").map {
                    try ConnectDay.date($0, pointer: "/data/attributes/expirationDate")
                })
            return .created(
                call.writer.single(Self.batchResource(batch)),
                audit: ("product.offer-code.codes", "\(campaign.id): custom code \(batch.customCode ?? "")"))
        }
        routes.add(.get, "/v1/\(type)/{id}") { call in
            .ok(call.writer.single(Self.batchResource(try await batch(call.id, type: type, custom: true).0)))
        }
        routes.add(.patch, "/v1/\(type)/{id}") { call in
            let body = try await call.body()
            let batch = try await changedBatch(call.id, type: type, custom: true, active: body.attribute("active"))
            return .changed(
                call.writer.single(Self.batchResource(batch)),
                audit: ("product.offer-code.codes", "\(batch.id) \(batch.active ? "active" : "inactive")"))
        }
    }

    /// A batch as Apple's one-time codes or custom code resource.
    private static func batchResource(_ batch: OfferCodeBatch) -> ConnectResource {
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
        return ConnectResource(
            type: batch.customCode == nil ? "subscriptionOfferCodeOneTimeUseCodes" : "subscriptionOfferCodeCustomCodes",
            id: String(batch.id), attributes: attributes,
            relationships: [
                ConnectRelationship(
                    name: "offerCode",
                    related: .one(
                        ConnectResource(type: "subscriptionOfferCodes", id: String(batch.campaignId), attributes: [:])))
            ])
    }

    /// The batch `id` names, of the kind `type` is, and its one-time codes; 404 otherwise.
    private func batch(_ id: String, type: String, custom: Bool) async throws -> (OfferCodeBatch, [OfferCode]) {
        let notFound = ConnectAPIError.notFound(type, id)
        guard let number = OfferCodeBatch.ID(id), number > 0 else { throw notFound }
        do {
            let (batch, codes) = try await catalog.offerCodeBatch(id: number)
            guard (batch.customCode != nil) == custom else { throw notFound }
            return (batch, codes)
        } catch let error as KioskError where error.kind == .notFound {
            throw notFound
        }
    }

    private func changedBatch(_ id: String, type: String, custom: Bool, active: JSONValue?) async throws
        -> OfferCodeBatch
    {
        let (batch, _) = try await batch(id, type: type, custom: custom)
        guard let active = active?.boolValue else { return batch }
        return try await catalog.setOfferCodeBatchActive(id: batch.id, active: active)
    }
}
