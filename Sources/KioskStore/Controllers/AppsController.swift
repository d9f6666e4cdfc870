import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskProtocol

/// `/admin/v1/apps`: apps, their shared secret and notification URLs, and their In-App Purchase keys.
struct AppsController {
    let catalog: CatalogService

    func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.get(AdminRoutes.apps.routerPath) { _, _ in
            AppList(apps: try await catalog.apps().map(AppResource.init))
        }
        group.post(AdminRoutes.apps.routerPath) { request, context in
            let body = try await request.decodeJSON(as: AppCreateBody.self, context: context)
            let app = try await catalog.createApp(bundleId: body.bundleId, name: body.name)
            return EditedResponse(status: .created, response: AppResource(app))
        }
        group.get(AdminRoutes.app.routerPath) { _, context in
            AppResource(try await catalog.app(bundleId: try context.parameters.require("bundleId")))
        }
        group.patch(AdminRoutes.app.routerPath) { request, context in
            let body = try await request.decodeJSON(as: AppUpdateBody.self, context: context)
            return AppResource(
                try await catalog.updateApp(
                    bundleId: try context.parameters.require("bundleId"), name: body.name,
                    productionNotificationURLs: body.productionNotificationURLs,
                    sandboxNotificationURLs: body.sandboxNotificationURLs,
                    sandboxNotificationRetries: body.sandboxNotificationRetries))
        }
        group.post(AdminRoutes.sharedSecret.routerPath) { _, context in
            AppResource(try await catalog.regenerateSharedSecret(bundleId: try context.parameters.require("bundleId")))
        }
        group.get(AdminRoutes.keys.routerPath) { _, context in
            let bundleId = try context.parameters.require("bundleId")
            return KeyList(
                issuerId: try await catalog.issuerId(),
                keys: try await catalog.keys(bundleId: bundleId).map { KeyResource($0, bundleId: bundleId) })
        }
        group.post(AdminRoutes.keys.routerPath) { request, context in
            let bundleId = try context.parameters.require("bundleId")
            let body = try await request.optionalJSON(as: KeyCreateBody.self, context: context)
            let created = try await catalog.createKey(bundleId: bundleId, name: body?.name)
            return EditedResponse(
                status: .created,
                response: KeyResource(
                    created.key, bundleId: bundleId, issuerId: created.issuerId, privateKey: created.privateKeyPEM))
        }
        group.delete(AdminRoutes.key.routerPath) { _, context in
            let bundleId = try context.parameters.require("bundleId")
            return KeyResource(
                try await catalog.revokeKey(bundleId: bundleId, keyId: try context.parameters.require("keyId")),
                bundleId: bundleId)
        }
    }
}

extension Request {
    /// Decodes a JSON body when there is one; an empty body is nil.
    func optionalJSON<T: Decodable>(as type: T.Type, context: KioskRequestContext) async throws -> T? {
        let data = try await collectBody(context: context)
        return data.isEmpty ? nil : try JSONBody.decode(type, from: data)
    }
}
