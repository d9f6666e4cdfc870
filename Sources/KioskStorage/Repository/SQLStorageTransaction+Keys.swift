import Foundation
import KioskCore
import KioskSQL
import SQLKit

/// In-App Purchase keys (public halves only). Revoked keys stay, so their ids are never reused.
extension SQLStorageTransaction {
    func insertKey(_ key: InAppPurchaseKey) async throws {
        try await session.run(
            """
            INSERT INTO iap_keys (id, app_id, name, public_key_pem, created_at, revoked_at)
            VALUES (\(bind: key.id), \(bind: key.appId), \(bind: key.name), \(bind: key.publicKeyPEM),
                \(bind: key.createdAt.millisecondsSince1970), \(bind: key.revokedAt?.millisecondsSince1970))
            """
        )
    }

    func updateKey(_ key: InAppPurchaseKey) async throws {
        let row = try await session.first(
            """
            UPDATE iap_keys SET app_id = \(bind: key.appId), name = \(bind: key.name),
                public_key_pem = \(bind: key.publicKeyPEM), created_at = \(bind: key.createdAt.millisecondsSince1970),
                revoked_at = \(bind: key.revokedAt?.millisecondsSince1970)
            WHERE id = \(bind: key.id)
            RETURNING id
            """
        )
        try requireUpdated(row, "key \(key.id)")
    }

    func key(id: InAppPurchaseKey.ID) async throws -> InAppPurchaseKey? {
        try await session.first("SELECT * FROM iap_keys WHERE id = \(bind: id)").map(Self.decodeKey)
    }

    func keys(appId: App.ID) async throws -> [InAppPurchaseKey] {
        try await session.all("SELECT * FROM iap_keys WHERE app_id = \(bind: appId) ORDER BY created_at, id")
            .map(Self.decodeKey)
            .sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    private static func decodeKey(_ row: any SQLRow) throws -> InAppPurchaseKey {
        InAppPurchaseKey(
            id: try row.decode(column: "id", as: String.self),
            appId: try row.decode(column: "app_id", as: Int64.self),
            name: try row.decode(column: "name", as: String.self),
            publicKeyPEM: try row.decode(column: "public_key_pem", as: String.self),
            createdAt: try row.date("created_at"),
            revokedAt: try row.optionalDate("revoked_at")
        )
    }
}

/// Team keys of the App Store Connect API (public halves only); revoked ones stay, so their ids are never reused.
extension SQLStorageTransaction {
    func insertTeamKey(_ key: TeamAPIKey) async throws {
        try await session.run(
            """
            INSERT INTO team_keys (id, name, roles, public_key_pem, created_at, revoked_at)
            VALUES (\(bind: key.id), \(bind: key.name), \(bind: Self.rolesText(key.roles)), \(bind: key.publicKeyPEM),
                \(bind: key.createdAt.millisecondsSince1970), \(bind: key.revokedAt?.millisecondsSince1970))
            """
        )
    }

    func updateTeamKey(_ key: TeamAPIKey) async throws {
        let row = try await session.first(
            """
            UPDATE team_keys SET name = \(bind: key.name), roles = \(bind: Self.rolesText(key.roles)),
                revoked_at = \(bind: key.revokedAt?.millisecondsSince1970)
            WHERE id = \(bind: key.id)
            RETURNING id
            """
        )
        try requireUpdated(row, "team key \(key.id)")
    }

    func teamKey(id: TeamAPIKey.ID) async throws -> TeamAPIKey? {
        try await session.first("SELECT * FROM team_keys WHERE id = \(bind: id)").map(Self.decodeTeamKey)
    }

    func teamKeys() async throws -> [TeamAPIKey] {
        try await session.all("SELECT * FROM team_keys").map(Self.decodeTeamKey)
            .sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    static func rolesText(_ roles: [TeamRole]) -> String {
        roles.map(\.rawValue).joined(separator: ",")
    }

    /// The roles in a `roles` column of `table`.
    static func roles(_ row: any SQLRow, in table: String) throws -> [TeamRole] {
        try row.decode(column: "roles", as: String.self).split(separator: ",").map { name in
            guard let role = TeamRole(rawValue: String(name)) else {
                throw StorageError.engine(message: "\(table) holds an unknown role '\(name)'")
            }
            return role
        }
    }

    private static func decodeTeamKey(_ row: any SQLRow) throws -> TeamAPIKey {
        let roles = try roles(row, in: "team_keys")
        return TeamAPIKey(
            id: try row.decode(column: "id", as: String.self), name: try row.decode(column: "name", as: String.self),
            roles: roles, publicKeyPEM: try row.decode(column: "public_key_pem", as: String.self),
            createdAt: try row.date("created_at"), revokedAt: try row.optionalDate("revoked_at"))
    }
}
