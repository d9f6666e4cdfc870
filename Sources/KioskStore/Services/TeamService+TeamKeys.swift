import Foundation
import KioskCore
import KioskSigning
import KioskStorage

/// A newly created team key: the only moment its private key exists outside the caller.
public struct CreatedTeamKey: Sendable {
    public var key: TeamAPIKey
    public var issuerId: String
    public var privateKeyPEM: String
}

extension TeamService {
    static let vendorNumberKey = "vendor_number"

    /// Creates a team key of the App Store Connect API holding `roles` (at least one).
    public func createTeamKey(name: String?, roles: [TeamRole]) async throws -> CreatedTeamKey {
        if let name { try CatalogRules.validateName(name, what: "key name", field: "name") }
        guard !roles.isEmpty else {
            throw KioskError(
                .missingRoles, "A team key needs at least one role.", field: "roles",
                fix: "Give ADMIN, FINANCE or SALES to read reports.")
        }
        let now = clock.now()
        return try await database.transaction { tx in
            var material = InAppPurchaseKeyMaterial.generate()
            // Unique among both kinds of key, so a key id always names one key.
            while true {
                let teamKey = try await tx.teamKey(id: material.keyId)
                let inAppPurchaseKey = try await tx.key(id: material.keyId)
                if teamKey == nil, inAppPurchaseKey == nil { break }
                material = InAppPurchaseKeyMaterial.generate()
            }
            let key = TeamAPIKey(
                id: material.keyId, name: name ?? "Team key \(material.keyId)",
                roles: Array(Set(roles)).sorted { $0.rawValue < $1.rawValue }, publicKeyPEM: material.publicKeyPEM,
                createdAt: now)
            try await tx.insertTeamKey(key)
            return CreatedTeamKey(
                key: key, issuerId: try await CatalogService.issuerId(in: tx), privateKeyPEM: material.privateKeyPEM)
        }
    }

    /// Every team key, the issuer id and the vendor number.
    public func teamKeys() async throws -> (keys: [TeamAPIKey], issuerId: String, vendorNumber: String) {
        try await database.transaction { tx in
            (try await tx.teamKeys(), try await CatalogService.issuerId(in: tx), try await Self.vendorNumber(in: tx))
        }
    }

    /// Revokes a team key; its tokens stop working at once. Revoking twice changes nothing.
    public func revokeTeamKey(id: String) async throws -> TeamAPIKey {
        let now = clock.now()
        return try await database.transaction { tx in
            guard var key = try await tx.teamKey(id: id) else {
                throw KioskError(
                    .keyNotFound, "There is no team key '\(id.prefix(16))'.", field: "keyId",
                    fix: "List them with `kiosk api-keys list`.")
            }
            if key.revokedAt == nil {
                key.revokedAt = now
                try await tx.updateTeamKey(key)
            }
            return key
        }
    }

    /// The store's vendor number, assigned on first use: eight digits, as App Store Connect's.
    static func vendorNumber(in tx: any StorageTransaction) async throws -> String {
        if let existing = try await tx.setting(vendorNumberKey) { return existing }
        return try await tx.settingInsertingIfAbsent(
            vendorNumberKey, value: String(Int.random(in: 80_000_000...89_999_999)))
    }
}
