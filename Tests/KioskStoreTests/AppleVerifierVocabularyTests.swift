import Foundation
import KioskSigning
import KioskTestSupport
import KioskTesting
import Testing

/// Apple's library keeps a value its enums do not know (the enum field left empty, the raw value kept) and writes
/// it back unchanged, so a payload with a notification type `DID_RENEWW` or an `offerType` of 7 would decode into
/// exactly what was signed. ``AppleVerifier`` must refuse such values: these payloads are signed by the store's own
/// chain (so the signature passes) and differ from a genuine one only in the forged enum value.
@Suite(
    .enabled(
        if: TestEnvironment.runs(.python),
        "set KIOSK_TEST_PYTHON to a python with app-store-server-library (.ci/run installs .ci/requirements.txt)"))
struct AppleVerifierVocabularyTests {
    @Test func valuesOutsideApplesEnumsAreRefused() async throws {
        try await withTestStore { store in
            try await store.preparePurchaseCatalog()
            let token = try await store.signIn()
            let genuine = try #require(
                SubscriptionPurchaseTests.signedTransaction(try await store.pay(TestStore.coins, token: token)))
            try await AppleVerifier.expectAccepts([genuine], kind: .transaction, store: store)
            let signer = JWSSigner(identity: store.built.signing.identity(.sandbox))

            var transaction = try AppleVerifier.claims(of: genuine)
            transaction["offerType"] = 7
            try await expectRefused(
                try sign(transaction, signer), kind: .transaction, ["UnknownEnumValue offerType=7"], store: store)

            let app = try await store.request(.GET, "/admin/v1/apps/\(TestStore.bundleId)")
            var notification: [String: Any] = [
                "notificationType": "DID_RENEW", "notificationUUID": UUID().uuidString.lowercased(),
                "version": "2.0", "signedDate": transaction["signedDate"] ?? 0,
                "data": [
                    "appAppleId": try #require(app.json["appAppleId"] as? Int, "\(app.text)"),
                    "bundleId": TestStore.bundleId, "environment": "Sandbox",
                ],
            ]
            try await AppleVerifier.expectAccepts([try sign(notification, signer)], kind: .notification, store: store)
            notification["notificationType"] = "DID_RENEWW"
            try await expectRefused(
                try sign(notification, signer), kind: .notification,
                ["UnknownEnumValue notificationType=", "DID_RENEWW"], store: store)
        }
    }

    private func sign(_ claims: [String: Any], _ signer: JWSSigner) throws -> String {
        try signer.sign(payloadJSON: Array(try JSONSerialization.data(withJSONObject: claims)))
    }

    /// Expects ``AppleVerifier`` to record an issue for `jws` whose comment holds each of `refusal`, and no other.
    private func expectRefused(
        _ jws: String, kind: AppleVerifier.Kind, _ refusal: [String], store: TestStore,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        try await withKnownIssue(sourceLocation: sourceLocation) {
            try await AppleVerifier.expectAccepts([jws], kind: kind, store: store)
        } matching: { issue in
            issue.comments.contains { comment in refusal.allSatisfy { comment.rawValue.contains($0) } }
        }
    }
}
