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
