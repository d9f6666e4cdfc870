import Crypto
import ExtrasBase64
import Foundation
import KioskCore
import KioskSigning
import Testing
import X509

/// `SignedDataVerifier` offline: what it accepts, and a battery of forgeries it must refuse with Apple's status.
@Suite("SignedDataVerifier")
struct SignedDataVerifierTests {
    static let now = Date(timeIntervalSince1970: 1_767_225_600)
    static let nowMilliseconds = Int64(now.timeIntervalSince1970 * 1000)
    static let bundleId = "com.example.app"
    static let appAppleId: Int64 = 1_400_000_001

    let sandbox: SigningIdentity
    let production: SigningIdentity

    init() throws {
        sandbox = try SigningIdentity.generate(environment: .sandbox, now: Self.now)
        production = try SigningIdentity.generate(environment: .production, now: Self.now)
    }

    static func transaction(
        environment: StoreEnvironment = .sandbox, bundleId: String = bundleId, signedDate: Int64 = nowMilliseconds
    ) -> JWSTransactionDecodedPayload {
        JWSTransactionDecodedPayload(
            transactionId: "2000000000000001", originalTransactionId: "2000000000000001", bundleId: bundleId,
            productId: "com.example.gold", purchaseDate: signedDate, originalPurchaseDate: signedDate, quantity: 1,
            type: "Consumable", signedDate: signedDate, environment: environment.appleName, storefront: "USA",
            storefrontId: "143441", currency: "USD", price: 990)
    }

    static func notification(
        environment: StoreEnvironment, appAppleId: Int64 = appAppleId, summary: Bool = false
    ) -> NotificationPayload {
        NotificationPayload(
            notificationType: summary ? .renewalExtension : .test, subtype: summary ? .summary : nil,
            notificationUUID: UUID().uuidString.lowercased(), signedDate: nowMilliseconds,
            data: summary
                ? nil
                : NotificationData(appAppleId: appAppleId, bundleId: bundleId, environment: environment.appleName),
            summary: summary
                ? NotificationSummary(
                    requestIdentifier: UUID().uuidString, environment: environment.appleName, appAppleId: appAppleId,
                    bundleId: bundleId, productId: "com.example.monthly", failedCount: 0, succeededCount: 3)
                : nil)
    }

    func verifier(
        _ environment: StoreEnvironment = .sandbox, roots: [Certificate]? = nil, appAppleId: Int64? = appAppleId
    ) throws -> SignedDataVerifier {
        let identity = environment == .sandbox ? sandbox : production
        return try SignedDataVerifier(
            rootCertificates: roots ?? [identity.root], environment: environment, bundleId: Self.bundleId,
            appAppleId: appAppleId, clock: ManualClock(Self.now + 86_400))
    }

    func sign(_ payload: some Encodable, _ environment: StoreEnvironment = .sandbox) throws -> String {
        try JWSSigner(identity: environment == .sandbox ? sandbox : production).sign(payload: payload)
    }

    func json(_ payload: some Encodable) throws -> String {
        String(decoding: try JSONEncoder().encode(payload), as: UTF8.self)
    }

    /// Expects `body` to throw a `SignedDataVerificationError` with `status`.
    func expectRefusal(
        _ status: SignedDataVerificationError.Status, _ what: Comment,
        sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
    ) async {
        do {
            try await body()
            Issue.record("\(what): accepted, expected \(status)", sourceLocation: sourceLocation)
        } catch let error as SignedDataVerificationError {
            #expect(error.status == status, "\(what): \(error)", sourceLocation: sourceLocation)
            #expect(!error.detail.isEmpty, sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(what): threw \(error), expected \(status)", sourceLocation: sourceLocation)
        }
    }

    // MARK: Accepted

    // Proves every signed type verifies and decodes in both environments, and the notification identity comes from
    // `data` or, without it, from `summary`.
    @Test(arguments: StoreEnvironment.allCases)
    func acceptsEverySignedType(environment: StoreEnvironment) async throws {
        let verifier = try verifier(environment)
        let transaction = Self.transaction(environment: environment)
        #expect(try await verifier.verifyAndDecodeTransaction(try sign(transaction, environment)) == transaction)

        let renewal = JWSRenewalInfoDecodedPayload(
            originalTransactionId: "2000000000000001", autoRenewProductId: "com.example.monthly",
            productId: "com.example.monthly", autoRenewStatus: 1, signedDate: Self.nowMilliseconds,
            environment: environment.appleName)
        #expect(try await verifier.verifyAndDecodeRenewalInfo(try sign(renewal, environment)) == renewal)

        for summary in [false, true] {
            let notification = Self.notification(environment: environment, summary: summary)
            #expect(try await verifier.verifyAndDecodeNotification(try sign(notification, environment)) == notification)
        }

        let appTransaction = AppTransactionPayload(
            receiptType: environment.appleName, appAppleId: Self.appAppleId, bundleId: Self.bundleId,
            applicationVersion: "1", receiptCreationDate: Self.nowMilliseconds,
            originalPurchaseDate: Self.nowMilliseconds, originalApplicationVersion: "1",
            appTransactionId: "704289572311289000", signedDate: Self.nowMilliseconds)
        #expect(
            try await verifier.verifyAndDecodeAppTransaction(try sign(appTransaction, environment)) == appTransaction)
    }

    // Proves appAppleId is compared only in production, as Apple's verifier does.
    @Test func appAppleIdIsCheckedOnlyInProduction() async throws {
        let other = Self.notification(environment: .sandbox, appAppleId: 999)
        #expect(try await verifier(.sandbox).verifyAndDecodeNotification(try sign(other)) == other)
        await expectRefusal(.invalidAppIdentifier, "production notification for another appAppleId") {
            _ = try await verifier(.production).verifyAndDecodeNotification(
                try sign(Self.notification(environment: .production, appAppleId: 999), .production))
        }
        await expectRefusal(.invalidAppIdentifier, "production summary for another appAppleId") {
            _ = try await verifier(.production).verifyAndDecodeNotification(
                try sign(Self.notification(environment: .production, appAppleId: 999, summary: true), .production))
        }
    }

    // Proves a production verifier cannot be made without the app's Apple id (Apple's constructor refuses it too),
    // and the transaction-only verifier refuses what needs one.
    @Test func productionNeedsAppAppleId() async throws {
        #expect(throws: KioskError.self) { try verifier(.production, appAppleId: nil) }
        let transactionsOnly = SignedDataVerifier.forTransactions(
            rootCertificates: [production.root], environment: .production, bundleId: Self.bundleId,
            clock: ManualClock(Self.now))
        let transaction = Self.transaction(environment: .production)
        #expect(
            try await transactionsOnly.verifyAndDecodeTransaction(try sign(transaction, .production)) == transaction)
        await expectRefusal(.invalidAppIdentifier, "notification without a configured appAppleId") {
            _ = try await transactionsOnly.verifyAndDecodeNotification(
                try sign(Self.notification(environment: .production), .production))
        }
    }

    // MARK: Forgeries

    // Proves `alg: none` and HS256 keyed with the leaf's public key (the classic algorithm confusion) are refused.
    @Test func refusesOtherAlgorithms() async throws {
        let payload = try json(Self.transaction())
        let none =
            JWSForge.base64URL(JWSForge.header(alg: "none", x5c: sandbox.x5c)) + "."
            + JWSForge.base64URL(payload) + "."
        await expectRefusal(.verificationFailure, "alg none") {
            _ = try await verifier().verifyAndDecodeTransaction(none)
        }

        let input =
            JWSForge.base64URL(JWSForge.header(alg: "HS256", x5c: sandbox.x5c)) + "." + JWSForge.base64URL(payload)
        let secret = SymmetricKey(data: Array(try sandbox.leaf.publicKey.serializeAsPEM().pemString.utf8))
        let mac = HMAC<SHA256>.authenticationCode(for: Array(input.utf8), using: secret)
        let hs256 = input + "." + JWSForge.base64URL(Array(mac))
        await expectRefusal(.verificationFailure, "HS256 with the public key") {
            _ = try await verifier().verifyAndDecodeTransaction(hs256)
        }
    }

    // Proves a chain to another root, and x5c of 2 or 4 certificates, are refused with Apple's statuses.
    @Test func refusesWrongRootAndChainLengths() async throws {
        let jws = try sign(Self.transaction())
        await expectRefusal(.invalidChain, "a root the verifier does not trust") {
            _ = try await verifier(roots: [production.root]).verifyAndDecodeTransaction(jws)
        }
        let payload = try json(Self.transaction())
        for x5c in [Array(sandbox.x5c.prefix(2)), sandbox.x5c + [sandbox.x5c[2]]] {
            let forged = try JWSForge.es256(
                header: JWSForge.header(alg: "ES256", x5c: x5c), payload: payload, key: sandbox.leafPrivateKey)
            await expectRefusal(.invalidChainLength, "x5c of \(x5c.count)") {
                _ = try await verifier().verifyAndDecodeTransaction(forged)
            }
        }
        let garbage = try JWSForge.es256(
            header: JWSForge.header(alg: "ES256", x5c: ["not-base64!", sandbox.x5c[1], sandbox.x5c[2]]),
            payload: payload,
            key: sandbox.leafPrivateKey)
        await expectRefusal(.invalidCertificate, "x5c[0] not a certificate") {
            _ = try await verifier().verifyAndDecodeTransaction(garbage)
        }
    }

    // Proves chains whose leaf or intermediate lacks Apple's marker extension are refused.
    @Test(arguments: ["leaf", "intermediate"])
    func refusesMissingMarker(role: String) async throws {
        let chain = try TestChain.build(now: Self.now) { options in
            if role == "leaf" { options.leafMarker = false } else { options.intermediateMarker = false }
        }
        let jws = try JWSForge.es256(
            header: JWSForge.header(alg: "ES256", x5c: try chain.identity.x5c), payload: try json(Self.transaction()),
            key: chain.leafKey)
        await expectRefusal(.verificationFailure, "\(role) without marker") {
            _ = try await verifier(roots: [chain.root]).verifyAndDecodeTransaction(jws)
        }
    }

    // Proves a leaf that had expired, or was not yet valid, at the payload's signedDate is refused.
    @Test(arguments: ["expired", "not yet valid"])
    func refusesLeafOutsideItsValidityAtSigning(window: String) async throws {
        let chain = try TestChain.build(now: Self.now) { options in
            if window == "expired" {
                options.leafNotBefore = Self.now - 30 * 86_400
                options.leafNotAfter = Self.now - 86_400
            } else {
                options.leafNotBefore = Self.now + 86_400
                options.leafNotAfter = Self.now + 30 * 86_400
            }
        }
        let jws = try JWSForge.es256(
            header: JWSForge.header(alg: "ES256", x5c: try chain.identity.x5c), payload: try json(Self.transaction()),
            key: chain.leafKey)
        await expectRefusal(.invalidChain, "leaf \(window) at signedDate") {
            _ = try await verifier(roots: [chain.root]).verifyAndDecodeTransaction(jws)
        }
    }

    // Proves changing a single byte of the payload or header (keeping the signature) is refused.
    @Test func refusesTampering() async throws {
        let parts = JWSForge.segments(try sign(Self.transaction()))
        let richer = try json(Self.transaction()).replacingOccurrences(of: #""quantity":1"#, with: #""quantity":100"#)
        let tamperedPayload = parts[0] + "." + JWSForge.base64URL(richer) + "." + parts[2]
        await expectRefusal(.verificationFailure, "tampered payload") {
            _ = try await verifier().verifyAndDecodeTransaction(tamperedPayload)
        }
        let header =
            #"{"alg":"ES256","kid":"x","x5c":["# + sandbox.x5c.map { "\"\($0)\"" }.joined(separator: ",") + "]}"
        let tamperedHeader = JWSForge.base64URL(header) + "." + parts[1] + "." + parts[2]
        await expectRefusal(.verificationFailure, "tampered header") {
            _ = try await verifier().verifyAndDecodeTransaction(tamperedHeader)
        }
    }

    // Proves a payload for the other environment, or another app, is refused, for each signed type that says so.
    @Test func refusesOtherEnvironmentOrApp() async throws {
        // Signed by the sandbox chain but claiming production: the chain verifies, the environment does not match.
        await expectRefusal(.invalidEnvironment, "transaction for the other environment") {
            _ = try await verifier().verifyAndDecodeTransaction(try sign(Self.transaction(environment: .production)))
        }
        await expectRefusal(.invalidAppIdentifier, "transaction for another app") {
            _ = try await verifier().verifyAndDecodeTransaction(try sign(Self.transaction(bundleId: "com.other.app")))
        }
        let renewal = JWSRenewalInfoDecodedPayload(
            originalTransactionId: "1", autoRenewProductId: "p", productId: "p", autoRenewStatus: 1,
            signedDate: Self.nowMilliseconds, environment: "Production")
        await expectRefusal(.invalidEnvironment, "renewal info for the other environment") {
            _ = try await verifier().verifyAndDecodeRenewalInfo(try sign(renewal))
        }
        await expectRefusal(.invalidEnvironment, "notification for the other environment") {
            _ = try await verifier().verifyAndDecodeNotification(try sign(Self.notification(environment: .production)))
        }
        let appTransaction = AppTransactionPayload(
            receiptType: "Production", appAppleId: Self.appAppleId, bundleId: Self.bundleId, applicationVersion: "1",
            receiptCreationDate: Self.nowMilliseconds, originalPurchaseDate: Self.nowMilliseconds,
            originalApplicationVersion: "1", appTransactionId: "1", signedDate: Self.nowMilliseconds)
        await expectRefusal(.invalidEnvironment, "app transaction whose receiptType is the other environment") {
            _ = try await verifier().verifyAndDecodeAppTransaction(try sign(appTransaction))
        }
    }

    // MARK: App receipts

    static func receipt(type: AppReceipt.ReceiptType, bundleId: String = bundleId) -> AppReceipt {
        let opaque: [UInt8] = [1, 2, 3, 4]
        return AppReceipt(
            receiptType: type, appItemId: appAppleId, bundleId: bundleId, applicationVersion: "1",
            opaqueValue: opaque,
            sha1Hash: AppReceipt.deviceHash(deviceId: UUID(), opaqueValue: opaque, bundleId: bundleId),
            receiptCreationDate: now, originalApplicationVersion: "1.0", inApp: [])
    }

    // Proves app receipts verify with their environment and bundle checked: a sandbox receipt (`ProductionSandbox`)
    // presented as production is refused with a reason that says so, as is another app's receipt.
    @Test func appReceiptsAreCheckedForEnvironmentAndApp() async throws {
        let sandboxReceipt = try AppReceiptSigner(identity: sandbox).sign(Self.receipt(type: .productionSandbox))
        #expect(
            try await verifier(.sandbox).verifyAndDecodeAppReceipt(sandboxReceipt).receiptType == .productionSandbox)

        // The same chain's root trusted as production: only the receipt type can give it away.
        let asProduction = try SignedDataVerifier(
            rootCertificates: [sandbox.root], environment: .production, bundleId: Self.bundleId,
            appAppleId: Self.appAppleId, clock: ManualClock(Self.now))
        do {
            _ = try await asProduction.verifyAndDecodeAppReceipt(sandboxReceipt)
            Issue.record("a sandbox receipt was accepted as production")
        } catch let error as SignedDataVerificationError {
            #expect(error.status == .invalidEnvironment)
            #expect(error.detail.contains("ProductionSandbox"), "\(error)")
        }
        await expectRefusal(.invalidChain, "sandbox receipt against the production root") {
            _ = try await verifier(.production).verifyAndDecodeAppReceipt(sandboxReceipt)
        }
        let otherApp = try AppReceiptSigner(identity: sandbox).sign(
            Self.receipt(type: .productionSandbox, bundleId: "com.other.app"))
        await expectRefusal(.invalidAppIdentifier, "another app's receipt") {
            _ = try await verifier(.sandbox).verifyAndDecodeAppReceipt(otherApp)
        }
        var tampered = sandboxReceipt
        tampered[tampered.count - 1] ^= 0x01  // the last byte of the signature
        await expectRefusal(.verificationFailure, "tampered receipt") {
            _ = try await verifier(.sandbox).verifyAndDecodeAppReceipt(tampered)
        }
    }
}
