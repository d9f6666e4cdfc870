import Foundation
import KioskCore
import KioskProtocol

/// A subscription's win-back offers as App Store Connect's resources: the product's own win-back offers (the ones
/// `.storekit` files and the admin API set), each priced per territory by price points, for customers whose
/// subscription in the group ended within a window of months.
extension ConnectCatalogController {
    func addWinBackOfferRoutes(to routes: ConnectRouter) {
        routes.addRelated("/v1/subscriptions", "winBackOffers") { call in
            .many(try await winBackOffers(of: try await product(call.id, .subscriptions).0))
        }
        routes.add(.post, "/v1/winBackOffers") { call in
            let body = try await call.body()
            let (product, app) = try await product(body.relationship("subscription") ?? "", .subscriptions)
            try Self.refuseWhatKioskDoesNotSell(body)
            var schedule = try Self.schedule(body, periods: "periodCount")
            schedule.pricing = try offerPricing(body, schedule, for: product, "winBackOfferPrices")
            let range = body.attribute("customerEligibilityTimeSinceLastSubscribedInMonths")
            let offer = WinBackOffer(
                identifier: body.string("offerId") ?? "", referenceName: body.string("referenceName") ?? "",
                schedule: schedule,
                paidSubscriptionDurationInMonths: body.attribute("customerEligibilityPaidSubscriptionDurationInMonths")?
                    .intValue ?? 1,
                timeSinceLastSubscribedInMonths: WinBackOffer.MonthRange(
                    minimum: range?["minimum"]?.intValue ?? 1, maximum: range?["maximum"]?.intValue),
                waitBetweenOffersInMonths: body.attribute("customerEligibilityWaitBetweenOffersInMonths")?.intValue,
                startDate: try body.string("startDate").map {
                    try ConnectDay.date($0, pointer: Self.pointer("startDate"))
                },
                endDate: try body.string("endDate").map { try ConnectDay.date($0, pointer: Self.pointer("endDate")) },
                priority: body.string("priority") == "HIGH" ? .high : .normal)
            try Self.checkDates(offer)
            let changed = try await catalog.modifyProduct(bundleId: app.bundleId, productId: product.productId) {
                stored in
                ProductChanges(winBackOffers: stored.winBackOffers + [offer])
            }
            let created = try await winBackOffers(of: changed).named(
                Self.winBackOfferId(changed, offer.identifier), type: "winBackOffers")
            return .created(
                call.writer.single(created),
                audit: ("product.win-back-offer", "\(app.bundleId)/\(product.productId)/\(offer.identifier)"))
        }
        routes.add(.get, "/v1/winBackOffers/{id}") { call in
            let (product, _, _) = try await winBackOffer(call.id)
            let offer = try await winBackOffers(of: product).named(call.id, type: "winBackOffers")
            return .ok(call.writer.single(offer))
        }
        routes.add(.patch, "/v1/winBackOffers/{id}") { call in
            let body = try await call.body()
            try Self.refuseWhatKioskDoesNotSell(body)
            let (product, app, identifier) = try await winBackOffer(call.id)
            let changed = try await catalog.modifyProduct(bundleId: app.bundleId, productId: product.productId) {
                stored in
                ProductChanges(
                    winBackOffers: try stored.winBackOffers.map { offer in
                        offer.identifier == identifier ? try Self.changed(offer, by: body) : offer
                    })
            }
            let offer = try await winBackOffers(of: changed).named(call.id, type: "winBackOffers")
            return .changed(
                call.writer.single(offer),
                audit: ("product.win-back-offer", "\(app.bundleId)/\(product.productId)/\(identifier)"))
        }
        routes.add(.delete, "/v1/winBackOffers/{id}") { call in
            let (product, app, identifier) = try await winBackOffer(call.id)
            _ = try await catalog.modifyProduct(bundleId: app.bundleId, productId: product.productId) { stored in
                ProductChanges(winBackOffers: stored.winBackOffers.filter { $0.identifier != identifier })
            }
            return .deleted(audit: ("product.remove-offer", "\(app.bundleId)/\(product.productId)/\(identifier)"))
        }
        routes.addRelated("/v1/winBackOffers", "prices") { call in
            let (product, _, identifier) = try await winBackOffer(call.id)
            guard let offer = product.winBackOffers.first(where: { $0.identifier == identifier }) else {
                throw ConnectAPIError.notFound("winBackOffers", call.id)
            }
            return .many(
                Self.offerPrices(
                    "winBackOfferPrices", of: call.id, offer.schedule, product, try await connectMoney(),
                    face: .subscriptions))
        }
    }

    func winBackOffers(of product: Product) async throws -> [ConnectResource] {
        let money = try await connectMoney()
        return product.winBackOffers.map { offer in
            let id = Self.winBackOfferId(product, offer.identifier)
            var attributes = Self.scheduleAttributes(offer.schedule, periods: "periodCount")
            attributes["referenceName"] = .string(offer.referenceName)
            attributes["offerId"] = .string(offer.identifier)
            attributes["customerEligibilityPaidSubscriptionDurationInMonths"] = .integer(
                offer.paidSubscriptionDurationInMonths)
            var range: [String: JSONValue] = ["minimum": .integer(offer.timeSinceLastSubscribedInMonths.minimum)]
            range["maximum"] = offer.timeSinceLastSubscribedInMonths.maximum.map(JSONValue.integer)
            attributes["customerEligibilityTimeSinceLastSubscribedInMonths"] = .object(range)
            attributes["customerEligibilityWaitBetweenOffersInMonths"] = offer.waitBetweenOffersInMonths.map(
                JSONValue.integer)
            attributes["startDate"] = offer.startDate.map { .string(ConnectDay.text($0)) }
            attributes["endDate"] = offer.endDate.map { .string(ConnectDay.text($0)) }
            attributes["priority"] = .string(offer.priority == .high ? "HIGH" : "NORMAL")
            attributes["promotionIntent"] = .string("NOT_PROMOTED")
            attributes["targetSubscriptionPlanType"] = .string("UPFRONT")
            return ConnectResource(
                type: "winBackOffers", id: id, attributes: attributes,
                relationships: [
                    ConnectRelationship(
                        name: "prices",
                        related: .many(
                            Self.offerPrices(
                                "winBackOfferPrices", of: id, offer.schedule, product, money, face: .subscriptions)))
                ])
        }
    }

    /// The offer with what a PATCH body changes: its eligibility, dates and priority (Apple changes nothing else).
    private static func changed(_ offer: WinBackOffer, by body: ConnectBody) throws -> WinBackOffer {
        var changed = offer
        if let months = body.attribute("customerEligibilityPaidSubscriptionDurationInMonths")?.intValue {
            changed.paidSubscriptionDurationInMonths = months
        }
        if let range = body.attribute("customerEligibilityTimeSinceLastSubscribedInMonths") {
            changed.timeSinceLastSubscribedInMonths = WinBackOffer.MonthRange(
                minimum: range["minimum"]?.intValue ?? offer.timeSinceLastSubscribedInMonths.minimum,
                maximum: range["maximum"]?.intValue)
        }
        if let months = body.attribute("customerEligibilityWaitBetweenOffersInMonths")?.intValue {
            changed.waitBetweenOffersInMonths = months
        }
        if let start = body.string("startDate") {
            changed.startDate = try ConnectDay.date(start, pointer: pointer("startDate"))
        }
        if let end = body.string("endDate") {
            changed.endDate = try ConnectDay.date(end, pointer: pointer("endDate"))
        }
        if let priority = body.string("priority") { changed.priority = priority == "HIGH" ? .high : .normal }
        try checkDates(changed)
        return changed
    }

    /// An end on or before the start would make an offer no one can redeem.
    private static func checkDates(_ offer: WinBackOffer) throws {
        if let start = offer.startDate, let end = offer.endDate, end <= start {
            throw ConnectAPIError.entity(
                "ENTITY_ERROR.ATTRIBUTE.INVALID",
                "The offer's end date (\(ConnectDay.text(end))) must come after its start date "
                    + "(\(ConnectDay.text(start))).", pointer: pointer("endDate"))
        }
    }

    /// Kiosk sells offers under the up-front price only, and has no App Store page to promote them on: a monthly
    /// plan's offer or an auto-generated promotion is refused, not silently dropped.
    private static func refuseWhatKioskDoesNotSell(_ body: ConnectBody) throws {
        if body.string("targetSubscriptionPlanType") == "MONTHLY" {
            throw ConnectAPIError.entity(
                "ENTITY_ERROR.ATTRIBUTE.INVALID",
                "Kiosk sells win-back offers under the up-front price only; leave 'targetSubscriptionPlanType' out or "
                    + "give UPFRONT.", pointer: pointer("targetSubscriptionPlanType"))
        }
        if body.string("promotionIntent") == "USE_AUTO_GENERATED_ASSETS" {
            throw ConnectAPIError.entity(
                "ENTITY_ERROR.ATTRIBUTE.INVALID",
                "Kiosk has no App Store page to promote a win-back offer on; give NOT_PROMOTED or leave "
                    + "'promotionIntent' out. StoreKit still shows the offer to eligible customers.",
                pointer: pointer("promotionIntent"))
        }
    }

    private static func pointer(_ attribute: String) -> String { "/data/attributes/\(attribute)" }

    /// `1400000001-com.example.plus~winback~comeback`.
    private static func winBackOfferId(_ product: Product, _ identifier: String) -> String {
        "\(ConnectID.product(product))~winback~\(identifier)"
    }

    private func winBackOffer(_ id: String) async throws -> (Product, App, String) {
        try await identifiedOffer(id, "winBackOffers", kind: "winback") { $0.winBackOffers.map(\.identifier) }
    }
}
