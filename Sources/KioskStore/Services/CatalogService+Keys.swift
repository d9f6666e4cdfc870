import Foundation
import KioskCore
import KioskSigning
import KioskStorage

/// A newly created In-App Purchase key: the only moment its private key exists outside the caller.
public struct CreatedKey: Sendable {
    public var key: InAppPurchaseKey
    public var issuerId: String
    /// PKCS#8 PEM, as the `.p8` file App Store Connect lets you download once.
    public var privateKeyPEM: String
}

extension CatalogService {
    static let issuerIdKey = "issuer_id"

    /// Creates an In-App Purchase key for the App Store Server API of one app.
    public func createKey(bundleId: String, name: String?) async throws -> CreatedKey {
        if let name { try CatalogRules.validateName(name, what: "key name", field: "name") }
        let now = clock.now()
        return try await database.transaction { tx in
            let app = try await Self.requireApp(bundleId, in: tx)
            var material = InAppPurchaseKeyMaterial.generate()
            while try await tx.key(id: material.keyId) != nil { material = InAppPurchaseKeyMaterial.generate() }
            let key = InAppPurchaseKey(
                id: material.keyId, appId: app.id, name: name ?? "Key \(material.keyId)",
                publicKeyPEM: material.publicKeyPEM, createdAt: now)
            try await tx.insertKey(key)
            return CreatedKey(
                key: key, issuerId: try await Self.issuerId(in: tx), privateKeyPEM: material.privateKeyPEM)
        }
    }

    public func keys(bundleId: String) async throws -> [InAppPurchaseKey] {
        try await database.transaction { tx in
            try await tx.keys(appId: try await Self.requireApp(bundleId, in: tx).id)
        }
    }

    /// Revokes a key; tokens signed with it stop working. Revoking twice changes nothing.
    public func revokeKey(bundleId: String, keyId: String) async throws -> InAppPurchaseKey {
        let now = clock.now()
        defer { serverAPIKeys.forget(keyId: keyId) }
        return try await database.transaction { tx in
            let app = try await Self.requireApp(bundleId, in: tx)
            guard var key = try await tx.key(id: keyId), key.appId == app.id else {
                throw KioskError(
                    .keyNotFound, "App '\(bundleId)' has no In-App Purchase key '\(keyId)'.", field: "keyId",
                    fix: "List the app's keys with `kiosk keys list --app \(bundleId)`.")
            }
            if key.revokedAt == nil {
                key.revokedAt = now
                try await tx.updateKey(key)
            }
            return key
        }
    }

    /// The store's issuer id, created on first use.
    public func issuerId() async throws -> String {
        try await database.transaction { tx in try await Self.issuerId(in: tx) }
    }

    static func issuerId(in tx: any StorageTransaction) async throws -> String {
        if let existing = try await tx.setting(issuerIdKey) { return existing }
        // Replicas starting at once on a new database agree on the first one committed.
        return try await tx.settingInsertingIfAbsent(issuerIdKey, value: UUID().uuidString.lowercased())
    }
}
