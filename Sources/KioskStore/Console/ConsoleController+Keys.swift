import Foundation
import Hummingbird
import KioskCore

/// Keys: each app's In-App Purchase keys (the App Store Server API) and the team's App Store Connect API keys.
/// Creating one shows its private key once, as App Store Connect does; revoking one ends its tokens.
extension ConsoleController {
    func addKeyRoutes(to pages: RouterGroup<KioskRequestContext>) {
        pages.get("keys") { _, context in
            var apps: [[String: Any]] = []
            for app in try await catalog.apps() {
                apps.append([
                    "name": app.name, "bundleId": app.bundleId,
                    "keys": try await catalog.keys(bundleId: app.bundleId).map(Self.keyRow),
                ])
            }
            let team = try await team.teamKeys()
            return renderer.page(
                "keys", title: "Keys", section: "Keys",
                values: [
                    "apps": apps, "issuerId": team.issuerId, "vendorNumber": team.vendorNumber,
                    "teamKeys": team.keys.map { key in
                        [
                            "id": key.id, "name": key.name, "roles": key.roles.map(\.rawValue).joined(separator: ", "),
                            "created": Self.time(key.createdAt), "revoked": key.revokedAt.map(Self.time) ?? "",
                        ]
                    },
                    "roles": TeamRole.allCases.map { ["value": $0.rawValue] },
                ], session: context.consoleSession)
        }
        pages.post("keys/apps/:bundleId") { request, context in
            let bundleId = try context.parameters.require("bundleId")
            let form = try await ConsoleForm.read(request, context: context)
            let created = try await catalog.createKey(bundleId: bundleId, name: form["name"])
            try await audit(context.consoleSession, "key.create", "\(bundleId) \(created.key.id)")
            return createdKeyPage(
                id: created.key.id, issuerId: created.issuerId, privateKey: created.privateKeyPEM,
                kind: "In-App Purchase key for \(bundleId)", context)
        }
        pages.post("keys/apps/:bundleId/:keyId/revoke") { request, context in
            let bundleId = try context.parameters.require("bundleId")
            let keyId = try context.parameters.require("keyId")
            return try await action(request, context, audit: "key.revoke") { _ in
                _ = try await catalog.revokeKey(bundleId: bundleId, keyId: keyId)
                return ("\(bundleId) \(keyId)", "/console/keys")
            }
        }
        pages.post("keys/team") { request, context in
            let form = try await ConsoleForm.read(request, context: context)
            guard let role = TeamRole(rawValue: form["role"] ?? "") else {
                throw KioskError(.invalidRole, "Choose the key's role.", field: "role")
            }
            let created = try await team.createTeamKey(name: form["name"], roles: [role])
            try await audit(context.consoleSession, "team-key.create", "\(created.key.id) \(role.rawValue)")
            return createdKeyPage(
                id: created.key.id, issuerId: created.issuerId, privateKey: created.privateKeyPEM,
                kind: "App Store Connect API key (\(role.rawValue))", context)
        }
        pages.post("keys/team/:keyId/revoke") { request, context in
            let keyId = try context.parameters.require("keyId")
            return try await action(request, context, audit: "team-key.revoke") { _ in
                _ = try await team.revokeTeamKey(id: keyId)
                return (keyId, "/console/keys")
            }
        }
    }

    static func keyRow(_ key: InAppPurchaseKey) -> [String: Any] {
        [
            "id": key.id, "name": key.name, "created": time(key.createdAt),
            "revoked": key.revokedAt.map(time) ?? "",
        ]
    }

    /// The one page that ever shows a key's private half.
    func createdKeyPage(id: String, issuerId: String, privateKey: String, kind: String, _ context: KioskRequestContext)
        -> Response
    {
        var response = renderer.page(
            "key-created", title: "Key \(id) created", section: "Keys",
            values: ["id": id, "issuerId": issuerId, "privateKey": privateKey, "kind": kind],
            session: context.consoleSession, status: .created)
        response.headers[.cacheControl] = "no-store"
        return response
    }
}
