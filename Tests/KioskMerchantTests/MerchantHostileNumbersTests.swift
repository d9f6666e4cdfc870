import Foundation
import KioskCore
import KioskMerchant
import KioskProtocol
import KioskSigning
import KioskTesting
import Testing

/// Numbers and dates that once killed the merchant (or, relayed, the store) each get their exact refusal, and
/// both servers answer `/health` afterwards.
@Suite struct MerchantHostileNumbersTests {
    /// `signedDate` values that trapped the merchant while choosing the validation time, before any signature was
    /// checked: huge, year 10000, past Int64, negative, NaN, infinite, beyond Double; as JSON numbers or strings.
    static let hostileSignedDates = [
        "1e300", "253402300800000", "9.3e18", "-1e15", "1e400", #""NaN""#, #""inf""#, #""1e400""#, "-1",
    ]

    /// Signed transactions (user route) and notifications (no credential) signed by a self-made chain with such
    /// a `signedDate` are malformed signed data: 400 `malformed_signed_data`, nothing granted, merchant alive.
    @Test func hostileSignedDatesAreMalformed() async throws {
        let stranger = try SigningIdentity.generate(environment: .sandbox, now: Date())
        let signer = JWSSigner(identity: stranger)
        try await MerchantShop.with(.sqlite) { shop in
            try await shop.withMerchant(receivesNotifications: false) { merchant in
                for value in Self.hostileSignedDates {
                    let transaction = try signer.sign(
                        payloadJSON: Array(
                            #"{"bundleId":"\#(MerchantShop.bundleId)","environment":"Sandbox","transactionId":"1","signedDate":\#(value)}"#
                                .utf8))
                    try await expectRefused(
                        merchant.deliver(transaction, for: "alice"), 400, "malformed_signed_data",
                        field: "signedTransaction")
                    let notification = try signer.sign(
                        payloadJSON: Array(
                            #"{"notificationType":"TEST","notificationUUID":"\#(UUID().uuidString.lowercased())","data":{"bundleId":"\#(MerchantShop.bundleId)","environment":"Sandbox"},"signedDate":\#(value)}"#
                                .utf8))
                    try await expectRefused(
                        merchant.request(.POST, MerchantPaths.notifications, json: ["signedPayload": notification]),
                        400, "malformed_signed_data", field: "signedPayload")
                    try await merchant.expectHealthy()
                }
                #expect(try await merchant.entitlements(of: "alice").entitlements.isEmpty)
            }
        }
    }

    /// An app receipt relayed through the merchant whose creation date is year 10000 is refused by the store
    /// (21002) and so by the merchant; neither server dies, whoever relays it.
    @Test func relayedReceiptWithDateOutsideTheRangeIsRefused() async throws {
        let stranger = try SigningIdentity.generate(environment: .sandbox, now: Date())
        let receipt = AppReceipt(
            receiptType: .productionSandbox, appItemId: 0, bundleId: MerchantShop.bundleId,
            applicationVersion: "1.0", opaqueValue: [1, 2, 3, 4], sha1Hash: Array(repeating: 0xAB, count: 20),
            receiptCreationDate: Date(timeIntervalSince1970: 253_402_300_800), originalApplicationVersion: "1.0",
            inApp: [])
        let receiptData = Data(try AppReceiptSigner(identity: stranger).sign(receipt)).base64EncodedString()
        try await MerchantShop.with(.sqlite) { shop in
            try await shop.withMerchant(receivesNotifications: false) { merchant in
                let answer = try await merchant.request(
                    .POST, MerchantPaths.transactions, json: ["receiptData": receiptData],
                    token: merchant.userToken("alice"))
                expectRefused(answer, 400, "receipt_refused", field: "receiptData")
                #expect(answer.text.contains("malformed"), "\(answer.text)")
                try await merchant.expectHealthy()
                #expect(try await shop.store.request(.GET, "/health").status == 200)
            }
        }
    }

    /// A download URL whose `expires` is past any date (2⁶³−1 seconds) is simply not valid: 403, no credential
    /// needed to try, and the merchant keeps serving.
    @Test func downloadURLWithHugeExpiryIsRefused() async throws {
        try await MerchantShop.with(.sqlite) { shop in
            try await shop.withMerchant(receivesNotifications: false) { merchant in
                for expires in ["9223372036854775807", "-9223372036854775808", "99999999999999999999"] {
                    let answer = try await merchant.request(
                        .GET,
                        MerchantPaths.content(productId: MerchantShop.levels)
                            + "/files/pack/level-01.json?user=YWxpY2U&expires=\(expires)&signature=AAAA")
                    expectRefused(answer, 403, "invalid_download_url", field: "signature")
                    try await merchant.expectHealthy()
                }
            }
        }
    }

    /// A user token's lifetime must end by 9999-12-31T23:59:59Z: 2⁶³−1 seconds is refused, not converted.
    @Test func tokenLifetimePastTheRangeIsRefused() async throws {
        try await MerchantShop.with(.sqlite) { shop in
            try await shop.withMerchant(receivesNotifications: false) { merchant in
                for lifetime in [Int.max, 253_402_300_800, 0, -1] {
                    let answer = try await merchant.request(
                        .POST, MerchantPaths.adminTokens, json: ["userId": "alice", "expiresIn": lifetime])
                    expectRefused(answer, 400, "invalid_lifetime", field: "expiresIn")
                    try await merchant.expectHealthy()
                }
                let issued = try await merchant.request(
                    .POST, MerchantPaths.adminTokens, json: ["userId": "alice", "expiresIn": 3600])
                let token = try issued.decode(MerchantTokenResponse.self).token
                #expect(try await merchant.request(.GET, MerchantPaths.entitlements, token: token).status == 200)
            }
        }
    }
}

extension TestMerchant {
    /// `GET /health` answers 200: the process is alive and its ledger answers.
    func expectHealthy(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let health = try await request(.GET, "/health")
        #expect(health.status == 200, "\(health.text)", sourceLocation: sourceLocation)
    }
}
