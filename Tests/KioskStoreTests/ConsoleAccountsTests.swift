import Crypto
import Foundation
import KioskCore
import KioskTesting
import Testing

@Suite struct ConsoleAccountsTests {
    /// Sandbox testers are created with validated emails and passwords, never show their password, can change their
    /// sandbox settings and clear their purchase history, and their email is unique (case-insensitively).
    @Test(arguments: TestDatabase.available)
    func sandboxTesters(database: TestDatabase) async throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_790_000_000))
        try await withTestStore(engine: database, clock: clock) { store in
            let created = try await store.request(
                .POST, "/admin/v1/testers",
                json: [
                    "email": "Tester@Example.com", "password": "sandbox-pass", "storefront": "CHN", "askToBuy": true,
                ])
            #expect(created.status == 201, "\(created.text)")
            #expect(created.json["email"] as? String == "tester@example.com")
            #expect(created.json["storefront"] as? String == "CHN")
            #expect(created.json["askToBuy"] as? Bool == true)
            #expect(created.json["renewalRate"] as? String == "5m")
            #expect(!created.text.contains("sandbox-pass") && !created.text.contains("scrypt"))

            let duplicate = try await store.request(
                .POST, "/admin/v1/testers", json: ["email": "tester@EXAMPLE.com", "password": "another-pass"])
            #expect(duplicate.status == 409)
            #expect(duplicate.errorCode == "duplicate_tester_email")

            let badEmail = try await store.request(
                .POST, "/admin/v1/testers", json: ["email": "not-an-email", "password": "sandbox-pass"])
            #expect(badEmail.status == 400)
            #expect(badEmail.errorField == "email")
            let shortPassword = try await store.request(
                .POST, "/admin/v1/testers", json: ["email": "a@example.com", "password": "short"])
            #expect(shortPassword.errorCode == "password_too_short")
            let badStorefront = try await store.request(
                .POST, "/admin/v1/testers",
                json: ["email": "b@example.com", "password": "sandbox-pass", "storefront": "ATLANTIS"])
            #expect(badStorefront.errorCode == "unknown_storefront")

            let updated = try await store.request(
                .PATCH, "/admin/v1/testers/tester@example.com",
                json: ["interruptPurchases": true, "renewalRate": "3m", "storefront": "JPN"])
            #expect(updated.json["interruptPurchases"] as? Bool == true)
            #expect(updated.json["renewalRate"] as? String == "3m")
            #expect(updated.json["storefront"] as? String == "JPN")

            clock.advance(by: 90)
            let cleared = try await store.request(.POST, "/admin/v1/testers/tester@example.com/clear-purchase-history")
            #expect(cleared.status == 200, "\(cleared.text)")
            #expect(cleared.json["purchaseHistoryClearedAt"] as? String == "2026-09-21T14:14:50Z", "\(cleared.text)")
            let reread = try await store.request(.GET, "/admin/v1/testers/tester@example.com")
            #expect(reread.json["purchaseHistoryClearedAt"] as? String == "2026-09-21T14:14:50Z", "\(reread.text)")

            let deleted = try await store.request(.DELETE, "/admin/v1/testers/tester@example.com")
            #expect(deleted.status == 204)
            let gone = try await store.request(.GET, "/admin/v1/testers/tester@example.com")
            #expect(gone.errorCode == "tester_not_found")
        }
    }

    /// An In-App Purchase key is shown once as a PKCS#8 P-256 PEM with its key id and issuer id; listings never
    /// show it again, and revoking is idempotent.
    @Test(arguments: TestDatabase.available)
    func inAppPurchaseKeys(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.createApp()
            let created = try await store.request(
                .POST, "/admin/v1/apps/com.example.app/keys", json: ["name": "Server"])
            #expect(created.status == 201, "\(created.text)")
            let keyId = try #require(created.json["keyId"] as? String)
            #expect(keyId.count == 10 && keyId.allSatisfy { $0.isUppercase || $0.isNumber })
            let issuerId = try #require(created.json["issuerId"] as? String)
            #expect(UUID(uuidString: issuerId) != nil)
            let pem = try #require(created.json["privateKey"] as? String)
            #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
            _ = try P256.Signing.PrivateKey(pemRepresentation: pem)

            let list = try await store.request(.GET, "/admin/v1/apps/com.example.app/keys")
            #expect(list.json["issuerId"] as? String == issuerId)
            #expect(!list.text.contains("PRIVATE KEY"))

            let revoked = try await store.request(.DELETE, "/admin/v1/apps/com.example.app/keys/\(keyId)")
            #expect(revoked.json["status"] as? String == "revoked")
            let again = try await store.request(.DELETE, "/admin/v1/apps/com.example.app/keys/\(keyId)")
            let revokedAt = try #require(revoked.json["revokedAt"] as? String, "\(revoked.text)")
            #expect(again.json["revokedAt"] as? String == revokedAt)
            let unknown = try await store.request(.DELETE, "/admin/v1/apps/com.example.app/keys/NOSUCHKEY1")
            #expect(unknown.errorCode == "key_not_found")
        }
    }
}
