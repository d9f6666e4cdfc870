import Foundation
import Hummingbird
import KioskCore
import KioskProtocol

/// The App Store Connect API's catalog resources, served from Kiosk's catalog: apps and territories (read),
/// subscription groups, subscriptions, in-app purchases and their localizations. Every change goes through ``CatalogService``, as
/// the console's, the CLI's and a `.storekit` import's do, so what is created here is sold at once in the sandbox.
struct ConnectCatalogController {
    let catalog: CatalogService
    let money: MoneyService
    let clock: any KioskClock

    func addRoutes(to routes: ConnectRouter) {
        addAppRoutes(to: routes)
        addGroupRoutes(to: routes)
        addGroupLocalizationRoutes(to: routes)
        addSubscriptionRoutes(to: routes)
        addSubscriptionPriceRoutes(to: routes)
        addOfferRoutes(to: routes)
        addInAppPurchaseRoutes(to: routes)
        addInAppPurchasePriceRoutes(to: routes)
        addAvailabilityRoutes(to: routes)
    }

    // MARK: Apps and territories

    private func addAppRoutes(to routes: ConnectRouter) {
        routes.add(.get, "/v1/apps") { call in
            var resources: [ConnectResource] = []
            for app in try await catalog.apps() { resources.append(try await appResource(app, call)) }
            return .ok(try call.writer.page(resources))
        }
        routes.add(.get, "/v1/apps/{id}") { call in
            .ok(call.writer.single(try await appResource(try await app(call.id), call)))
        }
        routes.add(.get, "/v1/apps/{id}/subscriptionGroups") { call in
            let app = try await app(call.id)
            return .ok(try call.writer.page(try await groupResources(of: app)))
        }
        routes.add(.get, "/v1/apps/{id}/subscriptionGracePeriod") { call in
            .ok(call.writer.single(ConnectCatalogResources.gracePeriod(try await app(call.id))))
        }
        routes.add(.get, "/v1/subscriptionGracePeriods/{id}") { call in
            .ok(call.writer.single(ConnectCatalogResources.gracePeriod(try await gracePeriodApp(call.id))))
        }
        routes.add(.patch, "/v1/subscriptionGracePeriods/{id}") { call in
            let body = try await call.body()
            let app = try await gracePeriodApp(call.id)
            let optIn = body.attribute("optIn")?.boolValue ?? (app.billingGracePeriodDays != nil)
            if let sandbox = body.attribute("sandboxOptIn")?.boolValue, sandbox != optIn {
                throw ConnectAPIError.entity(
                    "ENTITY_ERROR.ATTRIBUTE.INVALID",
                    "Kiosk has one billing grace period for both environments: give 'sandboxOptIn' the value of "
                        + "'optIn'.", pointer: "/data/attributes/sandboxOptIn")
            }
            if body.string("renewalType") == "PAID_TO_PAID_ONLY" {
                throw ConnectAPIError.entity(
                    "ENTITY_ERROR.ATTRIBUTE.INVALID",
                    "Kiosk's grace period covers every renewal (ALL_RENEWALS), free-trial conversions included.",
                    pointer: "/data/attributes/renewalType")
            }
            let named = body.string("duration").flatMap { name in
                ConnectCatalogResources.gracePeriodDurations.first { $0.1 == name }?.0
            }
            let days = optIn ? (named ?? app.billingGracePeriodDays ?? 16) : nil
            let changed = try await catalog.setBillingGracePeriod(bundleId: app.bundleId, days: days)
            return .changed(
                call.writer.single(ConnectCatalogResources.gracePeriod(changed)),
                audit: ("app.grace-period", "\(app.bundleId) \(days.map { "\($0) days" } ?? "off")"))
        }
        routes.add(.get, "/v1/territories") { call in
            .ok(try call.writer.page(Storefront.all.map(ConnectCatalogResources.territory)))
        }
    }

    /// An app, with its groups when the request includes or filters by them.
    private func appResource(_ app: App, _ call: ConnectCall) async throws -> ConnectResource {
        var resource = ConnectCatalogResources.app(app)
        if call.query.includes("subscriptionGroups") {
            resource.relationships.append(
                ConnectRelationship(name: "subscriptionGroups", related: .many(try await groupResources(of: app))))
        }
        return resource
    }

    private func groupResources(of app: App) async throws -> [ConnectResource] {
        let products = try await catalog.products(bundleId: app.bundleId)
        return try await catalog.groups(bundleId: app.bundleId).map { group in
            ConnectCatalogResources.group(group, subscriptions: members(of: group, in: products))
        }
    }

    /// The app whose grace period `id` names (a grace period's id is its app's).
    private func gracePeriodApp(_ id: String) async throws -> App {
        do {
            return try await app(id)
        } catch is ConnectAPIError {
            throw ConnectAPIError.notFound("subscriptionGracePeriods", id)
        }
    }

    /// The app `id` names; 404 when none.
    func app(_ id: String) async throws -> App {
        guard let app = try await catalog.apps().first(where: { String($0.id) == id }) else {
            throw ConnectAPIError.notFound("apps", id)
        }
        return app
    }

    // MARK: Subscription groups

    private func addGroupRoutes(to routes: ConnectRouter) {
        routes.add(.post, "/v1/subscriptionGroups") { call in
            let body = try await call.body()
            let app = try await app(body.relationship("app") ?? "")
            let group = try await catalog.createGroup(
                bundleId: app.bundleId, referenceName: body.string("referenceName") ?? "", localizations: [])
            return .created(
                call.writer.single(ConnectCatalogResources.group(group, subscriptions: [])),
                audit: ("group.create", "\(app.bundleId)/\(group.id)"))
        }
        routes.add(.get, "/v1/subscriptionGroups/{id}") { call in
            .ok(call.writer.single(try await groupResource(call.id)))
        }
        routes.add(.patch, "/v1/subscriptionGroups/{id}") { call in
            let body = try await call.body()
            let (group, app) = try await group(call.id)
            let updated = try await catalog.updateGroup(
                bundleId: app.bundleId, id: group.id, referenceName: body.string("referenceName"), localizations: nil)
            return .changed(
                call.writer.single(
                    ConnectCatalogResources.group(updated, subscriptions: try await members(of: updated, app))),
                audit: ("group.update", "\(app.bundleId)/\(group.id)"))
        }
        routes.add(.delete, "/v1/subscriptionGroups/{id}") { call in
            let (group, app) = try await group(call.id)
            try await catalog.deleteGroup(bundleId: app.bundleId, id: group.id)
            return .deleted(audit: ("group.delete", "\(app.bundleId)/\(group.id)"))
        }
        routes.add(.post, "/v1/subscriptionGroupSubmissions") { call in
            let body = try await call.body()
            let (group, app) = try await group(body.relationship("subscriptionGroup") ?? "")
            let members = try await members(of: group, app)
            let incomplete = members.filter { $0.reviewState == .missingMetadata }.map(\.productId)
            guard incomplete.isEmpty else {
                throw ConnectAPIError.entity(
                    "ENTITY_ERROR",
                    "Nothing was submitted: \(incomplete.joined(separator: ", ")) "
                        + (incomplete.count == 1 ? "is" : "are") + " missing metadata (a localization and a price).",
                    pointer: "/data/relationships/subscriptionGroup")
            }
            let ready = members.filter { [.readyToSubmit, .rejected].contains($0.reviewState) }
            guard !ready.isEmpty else {
                throw ConnectAPIError.entity(
                    "ENTITY_ERROR",
                    "Nothing was submitted: subscription group \(group.id) has no subscription ready to submit.",
                    pointer: "/data/relationships/subscriptionGroup")
            }
            for product in ready {
                _ = try await catalog.review(bundleId: app.bundleId, productId: product.productId, action: .submit)
            }
            return .created(
                call.writer.single(
                    ConnectResource(type: "subscriptionGroupSubmissions", id: String(group.id), attributes: [:])),
                audit: (
                    "group.review", "\(app.bundleId)/\(group.id): \(ready.map(\.productId).joined(separator: ", "))"
                ))
        }
        routes.addRelated("/v1/subscriptionGroups", "subscriptions") { call in
            let (group, app) = try await group(call.id)
            return .many(
                try await members(of: group, app).map { ConnectCatalogResources.subscription($0, group: group) })
        }
    }

    private func groupResource(_ id: String) async throws -> ConnectResource {
        let (group, app) = try await group(id)
        return ConnectCatalogResources.group(group, subscriptions: try await members(of: group, app))
    }

    /// The group `id` names and its app; 404 when none.
    func group(_ id: String) async throws -> (SubscriptionGroup, App) {
        guard let number = SubscriptionGroup.ID(id), number > 0 else {
            throw ConnectAPIError.notFound("subscriptionGroups", id)
        }
        do {
            return try await catalog.groupAndApp(id: number)
        } catch let error as KioskError where error.code == .groupNotFound {
            throw ConnectAPIError.notFound("subscriptionGroups", id)
        }
    }

    func members(of group: SubscriptionGroup, _ app: App) async throws -> [Product] {
        members(of: group, in: try await catalog.products(bundleId: app.bundleId))
    }

    /// The group's live products, highest level of service first.
    private func members(of group: SubscriptionGroup, in products: [Product]) -> [Product] {
        products.filter { $0.subscription?.groupId == group.id }.sorted {
            ($0.subscription?.level ?? 0, $0.productId) < ($1.subscription?.level ?? 0, $1.productId)
        }
    }

    // MARK: Subscription group localizations

    private func addGroupLocalizationRoutes(to routes: ConnectRouter) {
        routes.addRelated("/v1/subscriptionGroups", "subscriptionGroupLocalizations") { call in
            .many(groupLocalizations(try await group(call.id).0))
        }
        routes.add(.post, "/v1/subscriptionGroupLocalizations") { call in
            let body = try await call.body()
            let (group, app) = try await group(body.relationship("subscriptionGroup") ?? "")
            let added = SubscriptionGroupLocalization(
                locale: body.string("locale") ?? "", name: body.string("name") ?? "",
                customAppName: body.string("customAppName"))
            let changed = try await catalog.modifyGroupLocalizations(bundleId: app.bundleId, id: group.id) { list in
                if list.contains(where: { Self.sameLocale($0.locale, added.locale) }) {
                    throw ConnectAPIError.entity(
                        "ENTITY_ERROR",
                        "Subscription group \(group.id) already has a localization for "
                            + "'\(added.locale)'. Change it with PATCH /v1/subscriptionGroupLocalizations/{id}.",
                        pointer: "/data/attributes/locale")
                }
                return list + [added]
            }
            let localization = try Self.localization(added.locale, in: changed.localizations, group: changed)
            return .created(
                call.writer.single(localization),
                audit: ("group.localization", "\(app.bundleId)/\(group.id)/\(added.locale)"))
        }
        routes.add(.get, "/v1/subscriptionGroupLocalizations/{id}") { call in
            let (group, _, locale) = try await groupLocalization(call.id)
            return .ok(call.writer.single(try Self.localization(locale, in: group.localizations, group: group)))
        }
        routes.add(.patch, "/v1/subscriptionGroupLocalizations/{id}") { call in
            let body = try await call.body()
            let (group, app, locale) = try await groupLocalization(call.id)
            let changed = try await catalog.modifyGroupLocalizations(bundleId: app.bundleId, id: group.id) { list in
                list.map { localization in
                    guard Self.sameLocale(localization.locale, locale) else { return localization }
                    var changed = localization
                    if let name = body.string("name") { changed.name = name }
                    if let custom = body.string("customAppName") { changed.customAppName = custom }
                    return changed
                }
            }
            return .changed(
                call.writer.single(try Self.localization(locale, in: changed.localizations, group: changed)),
                audit: ("group.localization", "\(app.bundleId)/\(group.id)/\(locale)"))
        }
        routes.add(.delete, "/v1/subscriptionGroupLocalizations/{id}") { call in
            let (group, app, locale) = try await groupLocalization(call.id)
            _ = try await catalog.modifyGroupLocalizations(bundleId: app.bundleId, id: group.id) { list in
                list.filter { !Self.sameLocale($0.locale, locale) }
            }
            return .deleted(audit: ("group.localization.delete", "\(app.bundleId)/\(group.id)/\(locale)"))
        }
    }

    private func groupLocalizations(_ group: SubscriptionGroup) -> [ConnectResource] {
        group.localizations.map { ConnectCatalogResources.groupLocalization($0, groupId: String(group.id)) }
    }

    /// The group and locale a group localization's id names; 404 when the group has no such localization.
    private func groupLocalization(_ id: String) async throws -> (SubscriptionGroup, App, String) {
        let notFound = ConnectAPIError.notFound("subscriptionGroupLocalizations", id)
        guard let (owner, locale) = ConnectID.localization(id), let number = SubscriptionGroup.ID(owner) else {
            throw notFound
        }
        let (group, app): (SubscriptionGroup, App)
        do {
            (group, app) = try await catalog.groupAndApp(id: number)
        } catch let error as KioskError where error.code == .groupNotFound {
            throw notFound
        }
        guard let stored = group.localizations.first(where: { Self.sameLocale($0.locale, locale) }) else {
            throw notFound
        }
        return (group, app, stored.locale)
    }

    private static func localization(
        _ locale: String, in list: [SubscriptionGroupLocalization], group: SubscriptionGroup
    ) throws -> ConnectResource {
        guard let localization = list.first(where: { sameLocale($0.locale, locale) }) else {
            throw ConnectAPIError.notFound("subscriptionGroupLocalizations", locale)
        }
        return ConnectCatalogResources.groupLocalization(localization, groupId: String(group.id))
    }

    /// `en-US` and `en_US` are one locale.
    static func sameLocale(_ first: String, _ second: String) -> Bool {
        CatalogRules.normalizedLocale(first) == CatalogRules.normalizedLocale(second)
    }
}
