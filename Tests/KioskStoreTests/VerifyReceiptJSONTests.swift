import Foundation
import KioskCore
import KioskProtocol
import Testing

/// `verifyReceipt`'s answers are written as bytes, not through `JSONEncoder`; they must be the encoder's bytes.
struct VerifyReceiptJSONTests {
    /// Every field of every object set (a date of each triple, numbers, a boolean, nested lists), and text that
    /// needs escaping: quotes, backslashes, every control character, slashes, non-ASCII and U+2028.
    @Test
    func writesTheEncodersBytes() throws {
        let awkward =
            "a \"quoted\" \\ path/to\u{7F} é 日本 \u{2028}" + (0..<0x20).map { String(UnicodeScalar($0)!) }.joined()
        let date = Date(timeIntervalSince1970: 1_536_123_832.123)
        let transaction = ReceiptTransactionInfo(
            quantity: "3", productId: awkward, transactionId: "2000000000000001",
            originalTransactionId: "2000000000000000", isTrialPeriod: "false", inAppOwnershipType: "PURCHASED",
            purchaseDate: date, originalPurchaseDate: date.addingTimeInterval(-86_400),
            expiresDate: date.addingTimeInterval(30 * 86_400), isInIntroOfferPeriod: "true",
            webOrderLineItemId: "2000000000000002", subscriptionGroupIdentifier: "21000001",
            appAccountToken: UUID().uuidString, cancellationDate: date.addingTimeInterval(3_600),
            cancellationReason: "0")
        let bare = ReceiptTransactionInfo(
            quantity: "1", productId: "com.example.coins", transactionId: "1", originalTransactionId: "1",
            isTrialPeriod: "false", inAppOwnershipType: nil, purchaseDate: date, originalPurchaseDate: date)
        let receipt = AppReceiptInfo(
            receiptType: "ProductionSandbox", adamId: Int64.max, appItemId: Int64.min, bundleId: "com.example/app",
            applicationVersion: awkward, downloadId: 0, versionExternalIdentifier: -1,
            originalApplicationVersion: "1.0", receiptCreationDate: date, requestDate: date.addingTimeInterval(1),
            originalPurchaseDate: Date(timeIntervalSince1970: 0), expirationDate: date, inApp: [transaction, bare])
        let renewal = PendingRenewalInfo(
            autoRenewProductId: "com.example.monthly", productId: "com.example.monthly",
            originalTransactionId: "2000000000000000", autoRenewStatus: "1", isInBillingRetryPeriod: "0",
            expirationIntent: "1", priceConsentStatus: "0", gracePeriodExpiresDate: date)
        let answers = [
            VerifyReceiptResponse(
                status: 0, environment: "Sandbox", receipt: receipt, latestReceiptInfo: [transaction, bare],
                pendingRenewalInfo: [renewal], latestReceipt: "MIIT+/ab==", message: awkward, isRetryable: false),
            VerifyReceiptResponse(status: 21_100, message: "Try again.", isRetryable: true),
            VerifyReceiptResponse(status: 0, receipt: receipt, latestReceiptInfo: [], pendingRenewalInfo: []),
        ]
        for answer in answers {
            let written = String(decoding: try answer.jsonBytes(), as: UTF8.self)
            #expect(written == String(decoding: try ServerAPIJSON.encoder.encode(answer), as: UTF8.self))
        }
    }

    /// Text is scanned eight bytes at a time: escapes at every offset of a word, in texts of every length around a
    /// word's, come out as the encoder writes them.
    @Test
    func textsOfEveryShapeAreEscapedAsTheEncoderEscapesThem() throws {
        let pieces = ["a", "/", "\"", "\\", "\n", "\u{0}", "\u{1F}", " ", "\u{7F}", "é", "漢", "🙂", "abcdefgh", "!"]
        var random = SplitMix64(seed: 37, stream: 0, salt: 0)
        for _ in 0..<3_000 {
            let text = (0..<Int(random.next() % 24)).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }
                .joined()
            let answer = VerifyReceiptResponse(status: 21_100, message: text)
            #expect(try answer.jsonBytes() == Array(ServerAPIJSON.encoder.encode(answer)), "\(text)")
        }
    }
}

/// The encoder the store's JSON answers are written by, or must be identical to.
enum ServerAPIJSON {
    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        return encoder
    }
}
