import Foundation
import KioskCore
import KioskProtocol

extension ConnectCatalogController {
    // MARK: Subscriptions

    func addSubscriptionRoutes(to routes: ConnectRouter) {
        routes.add(.post, "/v1/subscriptions") { call in
            let body = try await call.body()
            let (group, app) = try await group(body.relationship("group") ?? "")
            guard let periodName = body.string("subscriptionPeriod") else {
                throw ConnectAPIError.entity(
                    "ENTITY_ERROR.ATTRIBUTE.REQUIRED",
                    "Kiosk needs the subscription's period when it is created: set 'subscriptionPeriod' (ONE_WEEK, "
                        + "ONE_MONTH, TWO_MONTHS, THREE_MONTHS, SIX_MONTHS or ONE_YEAR).",
                    pointer: "/data/attributes/subscriptionPeriod")
            }
            let lowest = try await members(of: group, app).compactMap(\.subscription?.level).max() ?? 0
            let product = try await catalog.createProduct(
                bundleId: app.bundleId, productId: body.string("productId") ?? "", type: .autoRenewable,
                referenceName: body.string("name") ?? "",
                changes: ProductChanges(
                    familyShareable: body.attribute("familySharable")?.boolValue,
                    subscription: SubscriptionPlacement(
                        groupId: group.id, level: body.attribute("groupLevel")?.intValue ?? lowest + 1),
                    duration: ConnectCatalogResources.duration(periodName)))
            return .created(
                call.writer.single(ConnectCatalogResources.subscription(product, group: group)),
                audit: ("product.create", "\(app.bundleId)/\(product.productId)"))
        }
        routes.add(.patch, "/v1/subscriptions/{id}") { call in
            let body = try await call.body()
            let (product, app) = try await product(call.id, .subscriptions)
            var placement: SubscriptionPlacement?
            if let level = body.attribute("groupLevel")?.intValue {
                placement = SubscriptionPlacement(groupId: try await group(of: product).id, level: level)
            }
            let updated = try await catalog.updateProduct(
                bundleId: app.bundleId, productId: product.productId,
                changes: ProductChanges(
                    referenceName: body.string("name"), familyShareable: body.attribute("familySharable")?.boolValue,
                    subscription: placement,
                    duration: body.string("subscriptionPeriod").flatMap(ConnectCatalogResources.duration)))
            return .changed(
                call.writer.single(ConnectCatalogResources.subscription(updated, group: try await group(of: updated))),
                audit: ("product.update", "\(app.bundleId)/\(product.productId)"))
        }
        addProductRoutes(.subscriptions, to: routes)
    }

    // MARK: In-app purchases

    func addInAppPurchaseRoutes(to routes: ConnectRouter) {
        routes.add(.get, "/v1/apps/{id}/inAppPurchasesV2") { call in
            let app = try await app(call.id)
            let products = try await catalog.products(bundleId: app.bundleId).filter {
                ProductFace.inAppPurchases.sells($0.type)
            }
            return .ok(try call.writer.page(products.map(ConnectCatalogResources.inAppPurchase)))
        }
        routes.add(.post, "/v2/inAppPurchases") { call in
            let body = try await call.body()
            let app = try await app(body.relationship("app") ?? "")
            let typeName = body.string("inAppPurchaseType") ?? ""
            guard let type = ConnectCatalogResources.inAppPurchaseTypes.first(where: { $0.1 == typeName })?.0 else {
                throw ConnectAPIError.entity(
                    "ENTITY_ERROR.ATTRIBUTE.INVALID", "'\(typeName.prefix(40))' is no in-app purchase type.",
                    pointer: "/data/attributes/inAppPurchaseType")
            }
            let product = try await catalog.createProduct(
                bundleId: app.bundleId, productId: body.string("productId") ?? "", type: type,
                referenceName: body.string("name") ?? "",
                changes: ProductChanges(familyShareable: body.attribute("familySharable")?.boolValue))
            return .created(
                call.writer.single(ConnectCatalogResources.inAppPurchase(product)),
                audit: ("product.create", "\(app.bundleId)/\(product.productId)"))
        }
        routes.add(.patch, "/v2/inAppPurchases/{id}") { call in
            let body = try await call.body()
            let (product, app) = try await product(call.id, .inAppPurchases)
            let updated = try await catalog.updateProduct(
                bundleId: app.bundleId, productId: product.productId,
                changes: ProductChanges(
                    referenceName: body.string("name"), familyShareable: body.attribute("familySharable")?.boolValue))
            return .changed(
                call.writer.single(ConnectCatalogResources.inAppPurchase(updated)),
                audit: ("product.update", "\(app.bundleId)/\(product.productId)"))
        }
        addProductRoutes(.inAppPurchases, to: routes)
    }

    // MARK: What both faces share

    /// `GET` and `DELETE` of the product, its review submission, and its localizations: the list, the linkage and
    /// their own resources.
    private func addProductRoutes(_ face: ProductFace, to routes: ConnectRouter) {
        routes.add(.post, "/v1/\(face.submissionType)") { call in
            let body = try await call.body()
            let (product, app) = try await product(body.relationship(face.ownerRelationship) ?? "", face)
            let submitted = try await catalog.review(
                bundleId: app.bundleId, productId: product.productId, action: .submit)
            let group = face.sells(.autoRenewable) ? try await group(of: submitted) : nil
            return .created(
                call.writer.single(
                    ConnectResource(
                        type: face.submissionType, id: ConnectID.product(submitted), attributes: [:],
                        relationships: [
                            ConnectRelationship(
                                name: face.ownerRelationship, related: .one(face.resource(submitted, group: group)))
                        ])),
                audit: ("product.review", "\(app.bundleId)/\(product.productId)"))
        }
        routes.add(.get, "\(face.path)/{id}") { call in
            let (product, _) = try await product(call.id, face)
            guard face.sells(.autoRenewable) else { return .ok(call.writer.single(face.resource(product, group: nil))) }
            var resource = face.resource(product, group: try await group(of: product))
            resource.relationships += try await includedRelationships(of: product, call.query)
            return .ok(call.writer.single(resource))
        }
        routes.add(.delete, "\(face.path)/{id}") { call in
            let (product, app) = try await product(call.id, face)
            _ = try await catalog.deleteProduct(bundleId: app.bundleId, productId: product.productId)
            return .deleted(audit: ("product.delete", "\(app.bundleId)/\(product.productId)"))
        }
        routes.addRelated(face.path, face.localizationsRelationship) { call in
            .many(localizations(of: try await product(call.id, face).0, face))
        }
        let localizationPath = "/v1/\(face.localizationType)"
        routes.add(.post, localizationPath) { call in
            let body = try await call.body()
            let (product, app) = try await product(body.relationship(face.ownerRelationship) ?? "", face)
            let added = ProductLocalization(
                locale: body.string("locale") ?? "", displayName: body.string("name") ?? "",
                description: body.string("description") ?? "")
            let changed = try await catalog.modifyProduct(bundleId: app.bundleId, productId: product.productId) {
                stored in
                if stored.localizations.contains(where: { Self.sameLocale($0.locale, added.locale) }) {
                    throw ConnectAPIError.entity(
                        "ENTITY_ERROR",
                        "\(product.productId) already has a localization for '\(added.locale)'. "
                            + "Change it with PATCH \(localizationPath)/{id}.",
                        pointer: "/data/attributes/locale")
                }
                return ProductChanges(localizations: stored.localizations + [added])
            }
            return .created(
                call.writer.single(try Self.localization(added.locale, of: changed, face)),
                audit: ("product.localization", "\(app.bundleId)/\(product.productId)/\(added.locale)"))
        }
        routes.add(.get, "\(localizationPath)/{id}") { call in
            let (product, _, locale) = try await productLocalization(call.id, face)
            return .ok(call.writer.single(try Self.localization(locale, of: product, face)))
        }
        routes.add(.patch, "\(localizationPath)/{id}") { call in
            let body = try await call.body()
            let (product, app, locale) = try await productLocalization(call.id, face)
            let changed = try await catalog.modifyProduct(bundleId: app.bundleId, productId: product.productId) {
                stored in
                ProductChanges(
                    localizations: stored.localizations.map { localization in
                        guard Self.sameLocale(localization.locale, locale) else { return localization }
                        var changed = localization
                        if let name = body.string("name") { changed.displayName = name }
                        if let description = body.string("description") { changed.description = description }
                        return changed
                    })
            }
            return .changed(
                call.writer.single(try Self.localization(locale, of: changed, face)),
                audit: ("product.localization", "\(app.bundleId)/\(product.productId)/\(locale)"))
        }
        routes.add(.delete, "\(localizationPath)/{id}") { call in
            let (product, app, locale) = try await productLocalization(call.id, face)
            _ = try await catalog.deleteLocalization(
                bundleId: app.bundleId, productId: product.productId, locale: locale)
            return .deleted(audit: ("product.localization.delete", "\(app.bundleId)/\(product.productId)/\(locale)"))
        }
    }

    /// The live product `id` names, of a type `face` shows, and its app; 404 when none.
    func product(_ id: String, _ face: ProductFace) async throws -> (Product, App) {
        let notFound = ConnectAPIError.notFound(face.type, id)
        guard let (appId, productId) = ConnectID.product(id),
            let app = try await catalog.apps().first(where: { $0.id == appId })
        else { throw notFound }
        let product: Product
        do {
            product = try await catalog.product(bundleId: app.bundleId, productId: productId)
        } catch let error as KioskError where error.kind == .notFound || error.kind == .conflict {
            throw notFound
        }
        guard face.sells(product.type) else { throw notFound }
        return (product, app)
    }

    /// The group an auto-renewable product belongs to.
    private func group(of product: Product) async throws -> SubscriptionGroup {
        guard let groupId = product.subscription?.groupId else {
            throw KioskError(
                .subscriptionRecordMissing, "Subscription \(product.productId) belongs to no subscription group.")
        }
        return try await catalog.groupAndApp(id: groupId).group
    }

    private func localizations(of product: Product, _ face: ProductFace) -> [ConnectResource] {
        product.localizations.map { ConnectCatalogResources.productLocalization($0, of: product, face) }
    }

    /// The product and locale a localization's id names; 404 when the product has no such localization.
    private func productLocalization(_ id: String, _ face: ProductFace) async throws -> (Product, App, String) {
        let notFound = ConnectAPIError.notFound(face.localizationType, id)
        guard let (owner, locale) = ConnectID.localization(id) else { throw notFound }
        let (product, app): (Product, App)
        do {
            (product, app) = try await self.product(owner, face)
        } catch is ConnectAPIError {
            throw notFound
        }
        guard let stored = product.localizations.first(where: { Self.sameLocale($0.locale, locale) }) else {
            throw notFound
        }
        return (product, app, stored.locale)
    }

    private static func localization(
        _ locale: String, of product: Product, _ face: ProductFace
    ) throws -> ConnectResource {
        guard let localization = product.localizations.first(where: { sameLocale($0.locale, locale) }) else {
            throw ConnectAPIError.notFound(face.localizationType, locale)
        }
        return ConnectCatalogResources.productLocalization(localization, of: product, face)
    }
}
