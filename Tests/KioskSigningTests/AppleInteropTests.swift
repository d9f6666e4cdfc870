import Foundation
import KioskCore
import KioskSigning
import KioskTestSupport
import Testing

@Suite(
    "Apple's SignedDataVerifier accepts Kiosk's signatures",
    .enabled(
        if: TestEnvironment.runs(.python),
        "set KIOSK_TEST_PYTHON (.ci/run does) to a python with PyPI app-store-server-library"
    )
)
struct AppleInteropTests {
    static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Interop/verify_signed_data.py").path
    static let bundleId = "com.example.app"
    static let appAppleId: Int64 = 1_400_000_001

    struct Notification: Encodable {
        struct Data: Encodable {
            var appAppleId: Int64
            var bundleId: String
            var environment: String
        }
        var notificationType = "TEST"
        var notificationUUID = UUID().uuidString.lowercased()
        var version = "2.0"
        var signedDate: Int64
        var data: Data
    }

    struct Transaction: Encodable {
        var transactionId = "2000000111222333"
        var originalTransactionId = "2000000111222333"
        var webOrderLineItemId = "2000000044455566"
        var bundleId: String
        var productId = "com.example.app.gold"
        var purchaseDate: Int64
        var originalPurchaseDate: Int64
        var quantity = 1
        var type = "Consumable"
        var inAppOwnershipType = "PURCHASED"
        var signedDate: Int64
        var environment: String
        var transactionReason = "PURCHASE"
        var storefront = "USA"
        var storefrontId = "143441"
        var price = 990
        var currency = "USD"
        var appTransactionId = "704289572311289000"
        var offerType: Int?
    }

    /// Signs both payload kinds with a fresh chain for `environment` and writes the root DER; returns the files.
    func signedFiles(
        environment: StoreEnvironment, notificationType: String = "TEST", offerType: Int? = nil,
        in directory: TemporaryDirectory
    ) throws -> (root: String, notification: String, transaction: String, identity: SigningIdentity) {
        let now = Date()
        let milliseconds = Int64(now.timeIntervalSince1970 * 1000)
        let identity = try SigningIdentity.generate(environment: environment, now: now)
        let signer = JWSSigner(identity: identity)
        let notification = Notification(
            notificationType: notificationType, signedDate: milliseconds,
            data: .init(appAppleId: Self.appAppleId, bundleId: Self.bundleId, environment: environment.appleName)
        )
        let transaction = Transaction(
            bundleId: Self.bundleId, purchaseDate: milliseconds - 5_000, originalPurchaseDate: milliseconds - 5_000,
            signedDate: milliseconds, environment: environment.appleName, offerType: offerType
        )
        let root = directory.appending("root-\(environment.rawValue).der")
        try Data(identity.rootDER).write(to: URL(fileURLWithPath: root))
        let notificationFile = directory.appending("notification-\(environment.rawValue).jws")
        try signer.sign(payload: notification).write(toFile: notificationFile, atomically: true, encoding: .ascii)
        let transactionFile = directory.appending("transaction-\(environment.rawValue).jws")
        try signer.sign(payload: transaction).write(toFile: transactionFile, atomically: true, encoding: .ascii)
        return (root, notificationFile, transactionFile, identity)
    }

    /// Runs the Python verifier script (off Swift concurrency's threads) and collects its exit status and output.
    func runVerifier(root: String, environment: StoreEnvironment, kind: String, jwsFile: String) async throws
        -> ProcessOutcome
    {
        try await runProcess(
            try TestEnvironment.require(.python),
            [
                Self.script, "--root-der", root, "--environment", environment.appleName, "--bundle-id", Self.bundleId,
                "--app-apple-id", String(Self.appAppleId), "--kind", kind, "--jws-file", jwsFile,
            ])
    }

    // Proves Apple's verifier (OpenSSL X509_STRICT, markers, ES256) accepts a notification and a transaction,
    // in both environments.
    @Test(arguments: StoreEnvironment.allCases)
    func appleAcceptsKioskSignatures(environment: StoreEnvironment) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let files = try signedFiles(environment: environment, in: directory)

        let notification = try await runVerifier(
            root: files.root, environment: environment, kind: "notification", jwsFile: files.notification
        )
        #expect(notification.status == 0, "\(notification.output)")
        #expect(notification.output.contains(#""notificationType": "TEST""#), "\(notification.output)")

        let transaction = try await runVerifier(
            root: files.root, environment: environment, kind: "transaction", jwsFile: files.transaction
        )
        #expect(transaction.status == 0, "\(transaction.output)")
        #expect(transaction.output.contains(#""transactionId": "2000000111222333""#), "\(transaction.output)")
        #expect(transaction.output.contains(#""environment": "\#(environment.appleName)""#), "\(transaction.output)")
    }

    // Proves Apple's verifier refuses Kiosk's signatures against another root and with a tampered payload.
    @Test func appleRefusesWrongRootAndTampering() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let files = try signedFiles(environment: .sandbox, in: directory)
        let otherRoot = directory.appending("other-root.der")
        try Data(try SigningIdentity.generate(environment: .sandbox, now: Date()).rootDER)
            .write(to: URL(fileURLWithPath: otherRoot))
        let wrongRoot = try await runVerifier(
            root: otherRoot, environment: .sandbox, kind: "transaction", jwsFile: files.transaction
        )
        #expect(wrongRoot.status == 1, "\(wrongRoot.output)")
        #expect(wrongRoot.output.contains("VerificationException"), "\(wrongRoot.output)")

        let parts = try String(contentsOfFile: files.transaction, encoding: .ascii).split(separator: ".").map(
            String.init)
        let payload = try #require(Data(base64Encoded: base64(fromURL: parts[1])))
        let tamperedJSON = String(decoding: payload, as: UTF8.self)
            .replacingOccurrences(of: "com.example.app.gold", with: "com.example.app.platinum")
        let tamperedFile = directory.appending("tampered.jws")
        try [parts[0], JWSForge.base64URL(tamperedJSON), parts[2]].joined(separator: ".")
            .write(toFile: tamperedFile, atomically: true, encoding: .ascii)
        let tampered = try await runVerifier(
            root: files.root, environment: .sandbox, kind: "transaction", jwsFile: tamperedFile)
        #expect(tampered.status == 1, "\(tampered.output)")
        #expect(tampered.output.contains("VERIFICATION_FAILURE"), "\(tampered.output)")
    }

    // Proves the check refuses what Apple's model keeps but does not know: a notification type outside
    // NotificationTypeV2 and an offerType outside OfferType, signed by a trusted chain, exit 3 naming the field.
    @Test func appleVocabularyRefusesUnknownEnumValues() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let files = try signedFiles(
            environment: .sandbox, notificationType: "DID_RENEWW", offerType: 7, in: directory)
        let notification = try await runVerifier(
            root: files.root, environment: .sandbox, kind: "notification", jwsFile: files.notification)
        #expect(notification.status == 3, "\(notification.output)")
        #expect(notification.output == "UnknownEnumValue notificationType='DID_RENEWW'\n", "\(notification.output)")
        let transaction = try await runVerifier(
            root: files.root, environment: .sandbox, kind: "transaction", jwsFile: files.transaction)
        #expect(transaction.status == 3, "\(transaction.output)")
        #expect(transaction.output == "UnknownEnumValue offerType=7\n", "\(transaction.output)")

        let known = try signedFiles(environment: .sandbox, notificationType: "DID_RENEW", offerType: 4, in: directory)
        let renewal = try await runVerifier(
            root: known.root, environment: .sandbox, kind: "notification", jwsFile: known.notification)
        #expect(renewal.status == 0, "\(renewal.output)")
        let winBack = try await runVerifier(
            root: known.root, environment: .sandbox, kind: "transaction", jwsFile: known.transaction)
        #expect(winBack.status == 0, "\(winBack.output)")
        #expect(winBack.output.contains(#""offerType": 4"#), "\(winBack.output)")
    }

    private func base64(fromURL text: String) -> String {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
        return standard
    }
}
