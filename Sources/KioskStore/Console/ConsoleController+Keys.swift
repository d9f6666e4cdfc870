import Foundation
import Hummingbird
import KioskCore

/// Keys: each app's In-App Purchase keys (the App Store Server API) and the team's App Store Connect API keys.
/// Creating one shows its private key once, as App Store Connect does; revoking one ends its tokens.
extension ConsoleController {
    func addKeyRoutes(to pages: RouterGroup<KioskRequestContext>) {
        pages.get("keys") { _, context in
            var apps: [KeysPage.App] = []
            for app in try await catalog.apps() {
                apps.append(
                    KeysPage.App(
                        name: app.name, bundleId: app.bundleId,
                        keys: try await catalog.keys(bundleId: app.bundleId).map {
                            KeysPage.Key(
                                id: $0.id, name: $0.name, created: Self.time($0.createdAt),
                                revoked: $0.revokedAt.map(Self.time))
                        }))
            }
            let team = try await team.teamKeys()
            return renderer.page(
                KeysPage(
                    apps: apps, issuerId: team.issuerId, vendorNumber: team.vendorNumber,
                    teamKeys: team.keys.map { key in
                        KeysPage.TeamKey(
                            id: key.id, name: key.name, roles: key.roles.map(\.rawValue).joined(separator: ", "),
                            created: Self.time(key.createdAt), revoked: key.revokedAt.map(Self.time))
                    },
                    roles: TeamRole.allCases.map { ConsoleOption(value: $0.rawValue) }),
                title: "Keys", section: "Keys", session: context.consoleSession)
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
                return ConsoleOutcome(
                    target: "\(bundleId) \(keyId)", redirect: "/console/keys",
                    notice:
                        "Revoked the In-App Purchase key \(keyId) of \(bundleId): tokens it signs are refused from now on."
                )
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
                return ConsoleOutcome(
                    target: keyId, redirect: "/console/keys",
                    notice: "Revoked the App Store Connect API key \(keyId): tokens it signs are refused from now on.")
            }
        }
    }

    /// The one page that ever shows a key's private half.
    func createdKeyPage(id: String, issuerId: String, privateKey: String, kind: String, _ context: KioskRequestContext)
        -> Response
    {
        var response = renderer.page(
            KeyCreatedPage(id: id, issuerId: issuerId, privateKey: privateKey, kind: kind),
            title: "Key \(id) created", section: "Keys", session: context.consoleSession, status: .created)
        response.headers[.cacheControl] = "no-store"
        return response
    }
}

/// Each app's In-App Purchase keys and the team's keys, with the forms that create and revoke them.
struct KeysPage: ConsoleView {
    static let template = "keys"

    struct App: Decodable {
        var name: String
        var bundleId: String
        var keys: [Key]
    }

    /// An app's In-App Purchase key.
    struct Key: Decodable {
        var id: String
        var name: String
        var created: String
        var revoked: String?
    }

    /// An App Store Connect API key of the team's.
    struct TeamKey: Decodable {
        var id: String
        var name: String
        var roles: String
        var created: String
        var revoked: String?
    }

    var apps: [App]
    var issuerId: String
    var vendorNumber: String
    var teamKeys: [TeamKey]
    /// The roles a new team key may have.
    var roles: [ConsoleOption]
}

/// A key just created, with the only showing of its private half.
struct KeyCreatedPage: ConsoleView {
    static let template = "key-created"
    var id: String
    var issuerId: String
    /// PKCS #8 PEM.
    var privateKey: String
    /// What kind of key it is, and for what.
    var kind: String
}
