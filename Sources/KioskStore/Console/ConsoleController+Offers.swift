import Foundation
import Hummingbird
import KioskCore
import KioskProtocol

/// A subscription's promotional and win-back offers on its product page, and its group's names and its level on
/// the catalog page. Offer lists change in one transaction from what is stored, so two people adding offers at once
/// never lose one.
extension ConsoleController {
    func addOfferRoutes(to pages: RouterGroup<KioskRequestContext>) {
        pages.post("apps/:bundleId/products/:productId/promotional-offers") { request, context in
            let (bundleId, productId) = try Self.product(context)
            return try await action(request, context, audit: "product.promotional-offer") { form in
                let terms = try Self.offerTerms(form)
                let identifier = form["identifier"] ?? ""
                let offer = PromotionalOffer(
                    identifier: identifier, referenceName: form["referenceName"] ?? identifier,
                    schedule: OfferSchedule(
                        paymentMode: terms.mode, period: terms.period, numberOfPeriods: terms.periods,
                        pricing: terms.pricing))
                _ = try await catalog.modifyProduct(bundleId: bundleId, productId: productId) { product in
                    ProductChanges(promotionalOffers: Self.replacing(offer, in: product.promotionalOffers))
                }
                return ConsoleOutcome(
                    target: "\(bundleId)/\(productId) \(identifier)", redirect: Self.productPath(bundleId, productId),
                    notice: "Saved the promotional offer \(identifier) of \(productId).")
            }
        }
        pages.post("apps/:bundleId/products/:productId/win-back-offers") { request, context in
            let (bundleId, productId) = try Self.product(context)
            return try await action(request, context, audit: "product.win-back-offer") { form in
                let terms = try Self.offerTerms(form)
                let identifier = form["identifier"] ?? ""
                let offer = WinBackOffer(
                    identifier: identifier, referenceName: form["referenceName"] ?? identifier,
                    schedule: OfferSchedule(
                        paymentMode: terms.mode, period: terms.period, numberOfPeriods: terms.periods,
                        pricing: terms.pricing),
                    paidSubscriptionDurationInMonths: try ConsoleForm.integer(form["paidMonths"], field: "paidMonths")
                        ?? 1,
                    timeSinceLastSubscribedInMonths: WinBackOffer.MonthRange(
                        minimum: try ConsoleForm.integer(form["minimumMonths"], field: "minimumMonths") ?? 1,
                        maximum: try ConsoleForm.integer(form["maximumMonths"], field: "maximumMonths")),
                    waitBetweenOffersInMonths: try ConsoleForm.integer(form["waitMonths"], field: "waitMonths"),
                    priority: WinBackOffer.Priority(rawValue: form["priority"] ?? "") ?? .normal)
                _ = try await catalog.modifyProduct(bundleId: bundleId, productId: productId) { product in
                    ProductChanges(winBackOffers: Self.replacing(offer, in: product.winBackOffers))
                }
                return ConsoleOutcome(
                    target: "\(bundleId)/\(productId) \(identifier)", redirect: Self.productPath(bundleId, productId),
                    notice: "Saved the win-back offer \(identifier) of \(productId): \(Self.eligibility(offer)).")
            }
        }
        pages.post("apps/:bundleId/products/:productId/offers/:identifier/remove") { request, context in
            let (bundleId, productId) = try Self.product(context)
            let identifier = try context.parameters.require("identifier")
            return try await action(request, context, audit: "product.remove-offer") { _ in
                _ = try await catalog.modifyProduct(bundleId: bundleId, productId: productId) { product in
                    guard
                        product.promotionalOffers.contains(where: { $0.identifier == identifier })
                            || product.winBackOffers.contains(where: { $0.identifier == identifier })
                    else {
                        throw KioskError(
                            .offerNotFound, "\(productId) has no offer '\(identifier.prefix(64))'.",
                            field: "identifier", fix: "Reload the product's page.")
                    }
                    return ProductChanges(
                        promotionalOffers: product.promotionalOffers.filter { $0.identifier != identifier },
                        winBackOffers: product.winBackOffers.filter { $0.identifier != identifier })
                }
                return ConsoleOutcome(
                    target: "\(bundleId)/\(productId) \(identifier)", redirect: Self.productPath(bundleId, productId),
                    notice: "Removed the offer \(identifier) from \(productId).")
            }
        }
        pages.post("apps/:bundleId/products/:productId/level") { request, context in
            let (bundleId, productId) = try Self.product(context)
            return try await action(request, context, audit: "product.level") { form in
                guard let level = try ConsoleForm.integer(form["level"], field: "level") else {
                    throw KioskError(.missingField, "Give the level, 1 for the highest service.", field: "level")
                }
                let product = try await catalog.modifyProduct(bundleId: bundleId, productId: productId) { product in
                    guard let groupId = product.subscription?.groupId else {
                        throw KioskError(
                            .notASubscription, "\(productId) is in no subscription group.", field: "productId")
                    }
                    return ProductChanges(subscription: SubscriptionPlacement(groupId: groupId, level: level))
                }
                return ConsoleOutcome(
                    target: "\(bundleId)/\(product.productId) level \(level)",
                    redirect: "/console/apps/\(bundleId)/catalog",
                    notice: "Moved \(product.productId) to level \(level) of its group.")
            }
        }
        pages.post("apps/:bundleId/subscription-groups/:groupId/localizations") { request, context in
            let bundleId = try context.parameters.require("bundleId")
            let groupId = try context.parameters.require("groupId", as: Int64.self)
            return try await action(request, context, audit: "group.localization") { form in
                let group = try await catalog.group(bundleId: bundleId, id: groupId)
                let localization = SubscriptionGroupLocalization(
                    locale: form["locale"] ?? "", name: form["name"] ?? "", customAppName: form["customAppName"])
                _ = try await catalog.updateGroup(
                    bundleId: bundleId, id: groupId, referenceName: nil,
                    localizations: group.localizations.filter { $0.locale != localization.locale } + [localization])
                return ConsoleOutcome(
                    target: "\(bundleId) group \(groupId) \(localization.locale)",
                    redirect: "/console/apps/\(bundleId)/catalog",
                    notice: "Saved the \(localization.locale) name of \(group.referenceName): \(localization.name).")
            }
        }
    }

    /// The offer terms every offer form has: payment mode, period, number of periods and (for paid offers) tier.
    static func offerTerms(_ form: ConsoleForm) throws -> (
        mode: OfferPaymentMode, period: OfferPeriod, periods: Int, pricing: Pricing
    ) {
        guard let mode = OfferPaymentMode(rawValue: form["paymentMode"] ?? "") else {
            throw KioskError(
                .invalidPaymentMode, "Choose how the offer is paid.", field: "paymentMode",
                fix: "Choose \(OfferPaymentMode.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
        guard let period = OfferPeriod(iso8601: form["period"] ?? "") else {
            throw KioskError(
                .invalidPeriod, "'\(form["period"]?.prefix(20) ?? "")' is not a period.", field: "period",
                fix: "Write it as P3D, P1W, P1M or P1Y.")
        }
        return (
            mode, period, try ConsoleForm.integer(form["numberOfPeriods"], field: "numberOfPeriods") ?? 1,
            Pricing(tier: try ConsoleForm.integer(form["tier"], field: "tier"))
        )
    }

    /// `offers` with `offer` in place of the one with its identifier, or added at the end.
    static func replacing<Offer: IdentifiedOffer>(_ offer: Offer, in offers: [Offer]) -> [Offer] {
        var offers = offers
        if let index = offers.firstIndex(where: { $0.identifier == offer.identifier }) {
            offers[index] = offer
        } else {
            offers.append(offer)
        }
        return offers
    }

    static func product(_ context: KioskRequestContext) throws -> (bundleId: String, productId: String) {
        (try context.parameters.require("bundleId"), try context.parameters.require("productId"))
    }

    static func productPath(_ bundleId: String, _ productId: String) -> String {
        "/console/apps/\(bundleId)/products/\(productId)"
    }
}

/// An offer a product holds by identifier.
protocol IdentifiedOffer {
    var identifier: String { get }
}

extension PromotionalOffer: IdentifiedOffer {}
extension WinBackOffer: IdentifiedOffer {}
