import Crypto
import Foundation
import KioskCore
import KioskSigning
import Synchronization
import Testing
@_spi(FixedExpiryValidationTime) import X509

/// Kiosk's OCSP codec, responder and client, without HTTP: the client's transport hands the DER request straight
/// to the responder (real DER, real ECDSA). The store's HTTP responder is tested in KioskStoreTests.
@Suite("OCSP")
struct OCSPTests {
    static let now = Date(timeIntervalSince1970: 1_767_225_600)
    static let url = "http://127.0.0.1:9/ocsp/sandbox"

    let chain: SigningChain
    let responder: OCSPResponder

    init() throws {
        chain = try SigningChain.generate(environment: .sandbox, now: Self.now, ocspURL: Self.url)
        responder = OCSPResponder(
            identity: chain.identity,
            keys: .init(rootPrivateKey: chain.rootPrivateKey, intermediatePrivateKey: chain.intermediatePrivateKey))
    }

    /// Answers with the responder at the clock's now and the revocations it currently holds; counts the requests.
    final class LoopbackTransport: OCSPTransport {
        let responder: OCSPResponder
        let clock: ManualClock
        let state = Mutex<(revocations: [String: OCSPResponder.Revocation], requests: Int, answer: Int?)>(([:], 0, nil))

        init(responder: OCSPResponder, clock: ManualClock) {
            self.responder = responder
            self.clock = clock
        }

        func post(_ request: [UInt8], to url: String) async throws -> (status: Int, body: [UInt8]) {
            let (revocations, status) = state.withLock { state in
                state.requests += 1
                return (state.revocations, state.answer)
            }
            #expect(url == OCSPTests.url)
            if let status { return (status, []) }
            return (200, responder.respond(to: request, revocations: revocations, now: clock.now()))
        }
    }

    struct Unreachable: OCSPTransport {
        struct Refused: Error {}
        func post(_ request: [UInt8], to url: String) async throws -> (status: Int, body: [UInt8]) { throw Refused() }
    }

    func transaction(signedDate: Date = now) throws -> String {
        let milliseconds = Int64(signedDate.timeIntervalSince1970 * 1000)
        return try JWSSigner(identity: chain.identity).sign(
            payload: JWSTransactionDecodedPayload(
                transactionId: "2000000000000001", originalTransactionId: "2000000000000001",
                bundleId: "com.example.app", productId: "gold", purchaseDate: milliseconds,
                originalPurchaseDate: milliseconds, quantity: 1, type: "Consumable", signedDate: milliseconds,
                environment: "Sandbox", storefront: "USA", storefrontId: "143441", currency: "USD", price: 990))
    }

    func onlineVerifier(_ transport: any OCSPTransport, clock: ManualClock) throws -> SignedDataVerifier {
        try SignedDataVerifier(
            rootCertificates: [chain.identity.root], environment: .sandbox, bundleId: "com.example.app",
            appAppleId: nil, onlineChecks: .enabled(transport: transport), clock: clock)
    }

    func status(_ body: () async throws -> Void) async -> SignedDataVerificationError.Status? {
        do {
            try await body()
            return nil
        } catch let error as SignedDataVerificationError {
            return error.status
        } catch {
            Issue.record("unexpected \(error)")
            return nil
        }
    }

    // Proves the generated intermediate and leaf name the responder in a non-critical AIA extension, the root none.
    @Test func chainNamesTheResponder() throws {
        #expect(SigningProfile.ocspURL(of: chain.identity.intermediate) == Self.url)
        #expect(SigningProfile.ocspURL(of: chain.identity.leaf) == Self.url)
        #expect(SigningProfile.ocspURL(of: chain.identity.root) == nil)
        let aia = try #require(chain.identity.leaf.extensions[oid: .X509ExtensionID.authorityInformationAccess])
        #expect(!aia.critical)
    }

    // Proves the online verifier asks about both certificates, accepts while they are good, and refuses once the
    // leaf or the intermediate is revoked (after the 15-minute cache of verified chains runs out).
    @Test(arguments: [CertificateRevocation.Role.leaf, .intermediate])
    func onlineChecksFollowRevocation(role: CertificateRevocation.Role) async throws {
        let clock = ManualClock(Self.now)
        let transport = LoopbackTransport(responder: responder, clock: clock)
        let verifier = try onlineVerifier(transport, clock: clock)
        let jws = try transaction()
        _ = try await verifier.verifyAndDecodeTransaction(jws)
        #expect(transport.state.withLock { $0.requests } == 2)

        let certificate = role == .leaf ? chain.identity.leaf : chain.identity.intermediate
        transport.state.withLock {
            $0.revocations[OCSPResponder.serialKey(certificate)] = .init(revokedAt: Self.now, reason: 1)
        }
        // Within 15 minutes the verified chain is remembered and not asked about again.
        clock.advance(by: 14 * 60)
        _ = try await verifier.verifyAndDecodeTransaction(jws)
        #expect(transport.state.withLock { $0.requests } == 2)

        clock.advance(by: 2 * 60)
        #expect(await status { _ = try await verifier.verifyAndDecodeTransaction(jws) } == .verificationFailure)
    }

    // Proves an unreachable responder or a non-200 answer is retryable, as in Apple's verifier, and that nothing is
    // cached from a failed check.
    @Test func networkFailuresAreRetryable() async throws {
        let clock = ManualClock(Self.now)
        let jws = try transaction()
        #expect(
            await status { _ = try await onlineVerifier(Unreachable(), clock: clock).verifyAndDecodeTransaction(jws) }
                == .retryableVerificationFailure)
        let transport = LoopbackTransport(responder: responder, clock: clock)
        transport.state.withLock { $0.answer = 503 }
        let verifier = try onlineVerifier(transport, clock: clock)
        #expect(
            await status { _ = try await verifier.verifyAndDecodeTransaction(jws) } == .retryableVerificationFailure)
        transport.state.withLock { $0.answer = nil }
        _ = try await verifier.verifyAndDecodeTransaction(jws)
    }

    // Proves a chain whose certificates name no responder fails online checks but still verifies offline.
    @Test func chainWithoutResponderFailsOnline() async throws {
        let offlineChain = try SigningChain.generate(environment: .sandbox, now: Self.now)
        let jws = try JWSSigner(identity: offlineChain.identity).sign(
            payloadJSON: Array(
                #"{"transactionId":"1","originalTransactionId":"1","bundleId":"com.example.app","productId":"p","purchaseDate":1767225600000,"originalPurchaseDate":1767225600000,"quantity":1,"type":"Consumable","inAppOwnershipType":"PURCHASED","signedDate":1767225600000,"environment":"Sandbox","storefront":"USA","storefrontId":"143441","transactionReason":"PURCHASE","currency":"USD","price":990}"#
                    .utf8))
        let clock = ManualClock(Self.now)
        let online = try SignedDataVerifier(
            rootCertificates: [offlineChain.identity.root], environment: .sandbox, bundleId: "com.example.app",
            appAppleId: nil, onlineChecks: .enabled(transport: Unreachable()), clock: clock)
        #expect(await status { _ = try await online.verifyAndDecodeTransaction(jws) } == .verificationFailure)
        let offline = try SignedDataVerifier(
            rootCertificates: [offlineChain.identity.root], environment: .sandbox, bundleId: "com.example.app",
            appAppleId: nil, clock: clock)
        _ = try await offline.verifyAndDecodeTransaction(jws)
    }

    // Proves online checks validate the chain at the clock's now, not at signedDate: past the leaf's end, an old
    // payload still verifies offline but not online.
    @Test func onlineValidationTimeIsNow() async throws {
        let clock = ManualClock(Self.now + SigningProfile.leafLifetimeSeconds + 86_400)
        let jws = try transaction()
        let transport = LoopbackTransport(responder: responder, clock: clock)
        #expect(
            await status { _ = try await onlineVerifier(transport, clock: clock).verifyAndDecodeTransaction(jws) }
                == .invalidChain)
        let offline = try SignedDataVerifier(
            rootCertificates: [chain.identity.root], environment: .sandbox, bundleId: "com.example.app",
            appAppleId: nil, clock: clock)
        _ = try await offline.verifyAndDecodeTransaction(jws)
    }

    // Proves the responder's answer field by field: successful, byKey of the issuer, ecdsa-with-SHA384 by the issuer,
    // thisUpdate now, nextUpdate an hour later, the CertID as asked (SHA-1 and SHA-256), the nonce echoed, revoked
    // with time and reason, unknown for another serial of the same issuer.
    @Test(arguments: [true, false])
    func responderAnswers(sha256: Bool) throws {
        let identity = chain.identity
        let leafID = try OCSP.CertID(certificate: identity.leaf, issuer: identity.intermediate, sha256: sha256)
        var otherSerial = leafID
        otherSerial.serialNumber = [0x01, 0x02]
        let nonce = Certificate.Extension(oid: OCSP.nonceOID, critical: false, value: [0x04, 0x02, 0xAB, 0xCD])
        let request = try OCSP.Request(certIDs: [leafID, otherSerial], extensions: [nonce]).derEncoded()
        let revokedAt = Self.now - 3_600
        let der = responder.respond(
            to: request, revocations: [OCSPResponder.serialKey(identity.leaf): .init(revokedAt: revokedAt, reason: 4)],
            now: Self.now)
        let response = try OCSP.Response(derEncoded: der)
        let basic = try #require(response.basic)
        #expect(response.status == .successful)
        #expect(basic.responseData.responderID == .byKey(of: identity.intermediate))
        #expect(basic.signatureAlgorithm.algorithm == OCSP.ecdsaWithSHA384OID)
        #expect(basic.isSigned(by: identity.intermediate))
        #expect(!basic.isSigned(by: identity.root))
        #expect(basic.responseData.producedAt == Self.now)
        #expect(basic.responseData.extensions == [nonce])
        let answers = basic.responseData.responses
        #expect(answers.map(\.certID) == [leafID, otherSerial])
        #expect(answers.map(\.status) == [.revoked(at: revokedAt, reason: 4), .unknown])
        #expect(answers.allSatisfy { $0.thisUpdate == Self.now && $0.nextUpdate == Self.now + 3_600 })

        let intermediateID = try OCSP.CertID(certificate: identity.intermediate, issuer: identity.root, sha256: sha256)
        let good = try OCSP.Response(
            derEncoded: responder.respond(
                to: try OCSP.Request(certIDs: [intermediateID]).derEncoded(), revocations: [:], now: Self.now))
        let goodBasic = try #require(good.basic)
        #expect(goodBasic.responseData.responderID == .byKey(of: identity.root))
        #expect(goodBasic.isSigned(by: identity.root))
        #expect(goodBasic.responseData.responses.map(\.status) == [.good])
        #expect(goodBasic.responseData.extensions.isEmpty)
    }

    // Proves unreadable requests get malformedRequest, and requests about another chain (or mixing issuers)
    // unauthorized.
    @Test func responderRefusals() throws {
        let identity = chain.identity
        for garbage in [[], [0x30, 0x00], [0x01, 0x02, 0x03], try OCSP.Request(certIDs: []).derEncoded()] as [[UInt8]] {
            #expect(
                try OCSP.Response(derEncoded: responder.respond(to: garbage, revocations: [:], now: Self.now)).status
                    == .malformedRequest)
        }
        let other = try SigningChain.generate(environment: .sandbox, now: Self.now).identity
        let foreign = try OCSP.CertID(certificate: other.leaf, issuer: other.intermediate)
        let mixed = [
            try OCSP.CertID(certificate: identity.leaf, issuer: identity.intermediate),
            try OCSP.CertID(certificate: identity.intermediate, issuer: identity.root),
        ]
        for certIDs in [[foreign], mixed] {
            let request = try OCSP.Request(certIDs: certIDs).derEncoded()
            #expect(
                try OCSP.Response(derEncoded: responder.respond(to: request, revocations: [:], now: Self.now)).status
                    == .unauthorized)
        }
    }

    /// swift-certificates' own OCSP client (SHA-1 CertIDs, nonce, its own DER parser) asking Kiosk's responder.
    struct SwiftCertificatesRequester: OCSPRequester {
        let responder: OCSPResponder
        let revocations: [String: OCSPResponder.Revocation]

        func query(request: [UInt8], uri: String) async -> OCSPRequesterQueryResult {
            .response(responder.respond(to: request, revocations: revocations, now: Date()))
        }
    }

    // Proves an independent OCSP implementation, swift-certificates' OCSPVerifierPolicy in hard-fail mode, accepts
    // the responder's answers for a good chain and refuses it once the leaf is revoked.
    @Test func swiftCertificatesAcceptsTheResponder() async throws {
        let identity = try SigningChain.generate(environment: .sandbox, now: Date(), ocspURL: Self.url)
        let responder = OCSPResponder(
            identity: identity.identity,
            keys: .init(
                rootPrivateKey: identity.rootPrivateKey, intermediatePrivateKey: identity.intermediatePrivateKey))
        for revoked in [false, true] {
            let revocations: [String: OCSPResponder.Revocation] =
                revoked
                ? [OCSPResponder.serialKey(identity.identity.leaf): .init(revokedAt: Date() - 60, reason: nil)] : [:]
            var verifier = Verifier(rootCertificates: CertificateStore([identity.identity.root])) {
                RFC5280Policy()
                OCSPVerifierPolicy(
                    failureMode: .hard,
                    requester: SwiftCertificatesRequester(responder: responder, revocations: revocations))
            }
            let result = await verifier.validate(
                leaf: identity.identity.leaf, intermediates: CertificateStore([identity.identity.intermediate]))
            switch result {
            case .validCertificate:
                #expect(!revoked, "a revoked leaf passed swift-certificates' OCSP policy")
            case .couldNotValidate(let failures):
                #expect(revoked, "swift-certificates refused the responder: \(failures)")
                // Refused because the answer says revoked, not because the answer could not be used.
                #expect("\(failures)".lowercased().contains("revoked"), "\(failures)")
            }
        }
    }
}
