import Crypto
import ExtrasBase64
import Foundation
import KioskCore
import KioskSigning
import Testing
import X509

@Suite("JWS signing and verification")
struct JWSTests {
    static let now = Date(timeIntervalSince1970: 1_767_225_600)
    static let nowMilliseconds = Int64(now.timeIntervalSince1970 * 1000)

    struct Payload: Codable, Equatable {
        var transactionId: String
        var bundleId: String
        var signedDate: Int64
        var url: String
    }

    let identity: SigningIdentity
    let signer: JWSSigner
    let verifier: JWSVerifier
    let payload = Payload(
        transactionId: "2000000123", bundleId: "com.example.app", signedDate: nowMilliseconds, url: "https://a/b"
    )

    init() throws {
        identity = try SigningIdentity.generate(environment: .sandbox, now: Self.now)
        signer = JWSSigner(identity: identity)
        verifier = JWSVerifier(rootCertificates: [identity.root], clock: ManualClock(Self.now))
    }

    // Proves a signed payload verifies and comes back byte for byte, with Apple's exact header and a 64-byte r‖s
    // signature.
    @Test func roundTrip() async throws {
        let jws = try signer.sign(payload: payload)
        let parts = JWSForge.segments(jws)
        #expect(parts.count == 3)
        #expect(!jws.contains("="))
        let header = try Base64.decode(string: parts[0], options: [.base64UrlAlphabet, .omitPaddingCharacter])
        #expect(String(decoding: header, as: UTF8.self) == JWSForge.header(alg: "ES256", x5c: identity.x5c))
        let signature = try Base64.decode(string: parts[2], options: [.base64UrlAlphabet, .omitPaddingCharacter])
        #expect(signature.count == 64)

        let result = await verifier.verify(jws)
        let payloadJSON = try #require(result.payloadJSON, "\(String(describing: result.failure))")
        #expect(String(decoding: payloadJSON, as: UTF8.self).contains(#""url":"https://a/b""#))
        #expect(try JSONDecoder().decode(Payload.self, from: Data(payloadJSON)) == payload)
        if case .verified(let decodedHeader, _) = result {
            #expect(decodedHeader == JWSHeader(alg: "ES256", x5c: identity.x5c))
        }
    }

    /// Apple's payload shapes, every field set, are signed as the same bytes in every process and on every signing:
    /// `JSONEncoder`'s with sorted keys. Unsorted, the encoder writes members in a hash order seeded per process.
    @Test func applesPayloadsAreSignedWithSortedKeys() async throws {
        let transaction = JWSTransactionDecodedPayload(
            transactionId: "2000000000000002", originalTransactionId: "2000000000000001", webOrderLineItemId: "7",
            bundleId: "com.example.app", productId: "com.example.monthly", subscriptionGroupIdentifier: "21000000",
            purchaseDate: Self.nowMilliseconds, originalPurchaseDate: Self.nowMilliseconds - 1,
            expiresDate: Self.nowMilliseconds + 1, quantity: 1, type: "Auto-Renewable Subscription",
            appAccountToken: UUID().uuidString.lowercased(), signedDate: Self.nowMilliseconds, revocationReason: 1,
            revocationDate: Self.nowMilliseconds, isUpgraded: true, offerType: 2, offerIdentifier: "quote\"/\\",
            environment: "Sandbox", storefront: "USA", storefrontId: "143441", transactionReason: "RENEWAL",
            currency: "USD", price: 9_990, offerDiscountType: "PAY_AS_YOU_GO", offerPeriod: "P1M",
            appTransactionId: "704", revocationType: .refundProrated, revocationPercentage: 50_000,
            billingPlanType: "MONTHLY",
            commitmentInfo: TransactionCommitmentInfo(
                billingPeriodNumber: 2, commitmentExpiresDate: Self.nowMilliseconds, commitmentPrice: 119_880,
                totalBillingPeriods: 12),
            kioskRevision: 3)
        let renewal = JWSRenewalInfoDecodedPayload(
            expirationIntent: 1, originalTransactionId: "2000000000000001", autoRenewProductId: "com.example.yearly",
            productId: "com.example.monthly", autoRenewStatus: 1, isInBillingRetryPeriod: false,
            gracePeriodExpiresDate: Self.nowMilliseconds, signedDate: Self.nowMilliseconds, environment: "Sandbox",
            renewalDate: Self.nowMilliseconds, currency: "USD", renewalPrice: 9_990,
            eligibleWinBackOfferIds: ["a", "b"])
        let notification = NotificationPayload(
            notificationType: .didRenew, notificationUUID: UUID().uuidString.lowercased(),
            signedDate: Self.nowMilliseconds,
            data: NotificationData(
                appAppleId: 1_234, bundleId: "com.example.app", environment: "Sandbox",
                signedTransactionInfo: try signer.sign(payload: transaction),
                signedRenewalInfo: try signer.sign(payload: renewal), status: 1))
        for (signed, encoded) in [
            try await signedAndEncoded(transaction), try await signedAndEncoded(renewal),
            try await signedAndEncoded(notification),
        ] {
            #expect(signed == Array(encoded))
        }
        let transactionJSON = String(decoding: try await signedAndEncoded(transaction).signed, as: UTF8.self)
        #expect(transactionJSON.hasPrefix(#"{"appAccountToken":"#))
        #expect(transactionJSON.hasSuffix(#""webOrderLineItemId":"7"}"#))
    }

    /// `value`'s payload as signed (checked to be the same bytes on a second signing) and as `JSONEncoder` writes it
    /// with sorted keys.
    private func signedAndEncoded(_ value: some Encodable) async throws -> (signed: [UInt8], encoded: Data) {
        let (firstJWS, againJWS) = (try signer.sign(payload: value), try signer.sign(payload: value))
        let (verified, verifiedAgain) = (await verifier.verify(firstJWS), await verifier.verify(againJWS))
        let first = try #require(verified.payloadJSON)
        #expect(verifiedAgain.payloadJSON == first, "\(type(of: value)) signed twice")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        return (first, try encoder.encode(value))
    }

    // Proves pre-encoded JSON is signed exactly as given.
    @Test func signsRawJSON() async throws {
        let json = Array(#"{"signedDate":1767225600000,"price":10990}"#.utf8)
        let result = await verifier.verify(try signer.sign(payloadJSON: json))
        #expect(result.payloadJSON == json)
    }

    // Proves the signing date is read as milliseconds from signedDate, then receiptCreationDate, as a number or a
    // numeric string.
    @Test func signingDate() throws {
        func date(_ json: String) throws -> Date? { try JWSVerifier.signingDate(ofPayload: Array(json.utf8)) }
        #expect(try date(#"{"signedDate":1767225600000}"#) == Self.now)
        #expect(try date(#"{"signedDate":"1767225600000"}"#) == Self.now)
        #expect(try date(#"{"receiptCreationDate":1767225600000}"#) == Self.now)
        #expect(try date(#"{"signedDate":1767225600000,"receiptCreationDate":1}"#) == Self.now)
        #expect(try date(#"{"signedDate":null,"receiptCreationDate":1767225600000}"#) == Self.now)
        #expect(try date(#"{"other":1}"#) == nil)
        #expect(throws: JWSVerificationFailure.malformed("the payload is not a JSON object")) { try date("[1]") }
    }

    /// The signedDate values that once trapped the merchant before any signature was checked, and their kin.
    static let hostileDates = [
        "1e300", "253402300800000", "9.3e18", "-1e15", "-1", "1e400", #""NaN""#, #""inf""#, #""1e400""#,
        #""-5""#, #""12abc""#, "true", "{}",
    ]

    // Proves a signing date that is not milliseconds from 1970 to 9999 is refused as malformed, in a JWS signed by
    // a self-made chain with Apple's markers, before any certificate library sees it.
    @Test(arguments: hostileDates)
    func hostileSigningDateIsMalformed(value: String) async throws {
        let stranger = try SigningIdentity.generate(environment: .sandbox, now: Date())
        for field in ["signedDate", "receiptCreationDate"] {
            let jws = try JWSSigner(identity: stranger).sign(
                payloadJSON: Array(#"{"bundleId":"com.example.app","\#(field)":\#(value)}"#.utf8))
            let result = await JWSVerifier(rootCertificates: [stranger.root]).verify(jws)
            guard case .invalid(.malformed(let detail)) = result else {
                Issue.record("\(field) \(value): expected malformed, got \(result)")
                continue
            }
            #expect(
                detail == "\(field) is not a number of milliseconds since 1970 from \(Date.kioskRangeText)"
                    || detail == "the payload is not a JSON object", "\(field) \(value): \(detail)")
        }
    }

    // Proves a validation time outside the range (here a clock far in the future and a payload without dates)
    // is refused as an untrusted chain instead of reaching swift-certificates, which traps on it.
    @Test func validationTimeOutsideTheRangeIsRefused() async throws {
        let farFuture = JWSVerifier(
            rootCertificates: [identity.root], clock: ManualClock(Date(timeIntervalSince1970: 1e15)))
        let result = await farFuture.verify(try signer.sign(payloadJSON: Array(#"{"bundleId":"b"}"#.utf8)))
        guard case .invalid(.invalidChain(let detail)) = result else {
            Issue.record("expected invalidChain, got \(result)")
            return
        }
        #expect(detail.contains("outside \(Date.kioskRangeText)"), "\(detail)")
    }

    // Proves a payload signed while the leaf was valid still verifies long after, because validation uses signedDate.
    @Test func oldSignedDateVerifiesAfterClockTravel() async throws {
        let later = JWSVerifier(rootCertificates: [identity.root], clock: ManualClock(Self.now + 40 * 365 * 86_400))
        let payloadLater = Payload(transactionId: "1", bundleId: "b", signedDate: Self.nowMilliseconds, url: "u")
        #expect(await later.verify(try signer.sign(payload: payloadLater)).payloadJSON != nil)
    }

    // Proves alg none and HS256 are refused before any key is used.
    @Test(arguments: ["none", "HS256", "ES384", "es256"])
    func rejectsOtherAlgorithms(alg: String) async throws {
        let header = JWSForge.header(alg: alg, x5c: identity.x5c)
        let input = JWSForge.base64URL(header) + "." + JWSForge.base64URL(#"{"signedDate":1767225600000}"#)
        let mac = HMAC<SHA256>.authenticationCode(for: Array(input.utf8), using: SymmetricKey(size: .bits256))
        for jws in [input + ".", input + "." + JWSForge.base64URL(Array(mac))] {
            #expect(await verifier.verify(jws) == .invalid(.unsupportedAlgorithm(alg)))
        }
    }

    // Proves a chain that leads to another root is refused.
    @Test func rejectsWrongRoot() async throws {
        let other = try SigningIdentity.generate(environment: .sandbox, now: Self.now)
        let result = await JWSVerifier(rootCertificates: [other.root]).verify(try signer.sign(payload: payload))
        guard case .invalid(.invalidChain) = result else {
            Issue.record("expected invalidChain, got \(result)")
            return
        }
    }

    // Proves x5c with 0, 1, 2 or 4 certificates is refused, as Apple's INVALID_CHAIN_LENGTH.
    @Test(arguments: [0, 1, 2, 4])
    func rejectsChainLength(count: Int) async throws {
        let x5c = Array((identity.x5c + [identity.x5c[2]]).prefix(count))
        let jws = try JWSForge.es256(
            header: JWSForge.header(alg: "ES256", x5c: x5c), payload: #"{"signedDate":1767225600000}"#,
            key: identity.leafPrivateKey
        )
        #expect(await verifier.verify(jws) == .invalid(.invalidChainLength(count)))
    }

    // Proves a chain without either marker extension is refused for the marker it lacks, and one with a critical
    // leaf marker by path validation: a critical extension it does not know stops RFC 5280 path building, as it
    // stops OpenSSL, before the markers are looked at.
    @Test(arguments: ["leaf", "intermediate", "critical"])
    func rejectsMissingMarkers(variant: String) async throws {
        let chain = try TestChain.build(now: Self.now) { options in
            switch variant {
            case "leaf": options.leafMarker = false
            case "intermediate": options.intermediateMarker = false
            default: options.criticalLeafMarker = true
            }
        }
        let jws = try JWSSigner(identity: try chain.identity).sign(payload: payload)
        let result = await JWSVerifier(rootCertificates: [chain.root]).verify(jws)
        switch (variant, result) {
        case ("critical", .invalid(.invalidChain)):
            break  // swift-certificates gives no reason; the same chain without the critical bit verifies (below).
        case ("leaf", .invalid(.missingMarker(let detail))), ("intermediate", .invalid(.missingMarker(let detail))):
            #expect(detail.contains("the \(variant) certificate lacks extension"), "\(detail)")
        default:
            Issue.record("expected the \(variant) chain refused for its marker, got \(result)")
        }
    }

    // Proves the same operator chain with both markers verifies, so the refusals above are due to the markers alone.
    @Test func acceptsOperatorChainWithMarkers() async throws {
        let chain = try TestChain.build(now: Self.now)
        let jws = try JWSSigner(identity: try chain.identity).sign(payload: payload)
        #expect(await JWSVerifier(rootCertificates: [chain.root]).verify(jws).payloadJSON != nil)
    }

    // Proves a leaf that had expired, or was not yet valid, at the payload's signedDate is refused.
    @Test(arguments: [-3.0, 21.0])
    func rejectsLeafOutsideValidity(yearsFromNow: Double) async throws {
        let signedDate = Self.now + yearsFromNow * SigningProfile.secondsPerYear
        var shifted = payload
        shifted.signedDate = Int64(signedDate.timeIntervalSince1970 * 1000)
        let result = await verifier.verify(try signer.sign(payload: shifted))
        guard case .invalid(.invalidChain) = result else {
            Issue.record("expected invalidChain, got \(result)")
            return
        }
    }

    // Proves the verifier's memory of validated chains never widens trust: after the chain validated for one
    // payload, the same chain is still refused for payloads signed before or after its certificates' windows,
    // and a payload inside them verifies again.
    @Test func rememberedChainsKeepTheirValidityWindow() async throws {
        #expect(await verifier.verify(try signer.sign(payload: payload)).payloadJSON != nil)
        for yearsFromNow in [-3.0, 21.0] {
            var shifted = payload
            shifted.signedDate = Int64(
                (Self.now + yearsFromNow * SigningProfile.secondsPerYear).timeIntervalSince1970 * 1000)
            let result = await verifier.verify(try signer.sign(payload: shifted))
            guard case .invalid(.invalidChain) = result else {
                Issue.record("expected invalidChain \(yearsFromNow) years from now, got \(result)")
                continue
            }
        }
        var later = payload
        later.signedDate += 86_400_000
        #expect(await verifier.verify(try signer.sign(payload: later)).payloadJSON != nil)
    }

    // Proves a changed payload, a changed header, or a signature by another key is refused.
    @Test func rejectsTampering() async throws {
        let parts = JWSForge.segments(try signer.sign(payload: payload))
        var changed = payload
        changed.transactionId = "2000000999"
        let otherPayload = JWSForge.base64URL(Array(try JSONEncoder().encode(changed)))
        #expect(
            await verifier.verify([parts[0], otherPayload, parts[2]].joined(separator: "."))
                == .invalid(.invalidSignature))

        let typHeader =
            #"{"alg":"ES256","typ":"JWT","x5c":["# + identity.x5c.map { "\"\($0)\"" }.joined(separator: ",") + "]}"
        let otherHeader = JWSForge.base64URL(typHeader)
        #expect(
            await verifier.verify([otherHeader, parts[1], parts[2]].joined(separator: "."))
                == .invalid(.invalidSignature))

        let foreign = try JWSForge.es256(
            header: JWSForge.header(alg: "ES256", x5c: identity.x5c),
            payload: #"{"signedDate":1767225600000}"#,
            key: P256.Signing.PrivateKey()
        )
        #expect(await verifier.verify(foreign) == .invalid(.invalidSignature))
        #expect(await verifier.verify([parts[0], parts[1], ""].joined(separator: ".")) == .invalid(.invalidSignature))
    }

    // Proves malformed envelopes and non-standard-base64 certificates are refused without crashing.
    @Test func rejectsMalformed() async throws {
        let jws = try signer.sign(payload: payload)
        let parts = JWSForge.segments(jws)
        for broken in ["", "a.b", parts[0] + "." + parts[1], jws + ".x", "!!.!!.!!"] {
            guard case .invalid(.malformed) = await verifier.verify(broken) else {
                Issue.record("expected malformed for \(broken.prefix(20))")
                continue
            }
        }
        let arrayPayload = try JWSForge.es256(
            header: JWSForge.header(alg: "ES256", x5c: identity.x5c), payload: "[1,2]", key: identity.leafPrivateKey
        )
        guard case .invalid(.malformed) = await verifier.verify(arrayPayload) else {
            Issue.record("an array payload must be refused")
            return
        }
        var wrapped = identity.x5c
        wrapped[0] = stride(from: 0, to: wrapped[0].count, by: 64).map { offset in
            let start = wrapped[0].index(wrapped[0].startIndex, offsetBy: offset)
            return String(wrapped[0][start...].prefix(64))
        }.joined(separator: "\\n")
        let pemLike = try JWSForge.es256(
            header: JWSForge.header(alg: "ES256", x5c: wrapped), payload: "{}", key: identity.leafPrivateKey
        )
        guard case .invalid(.invalidCertificate) = await verifier.verify(pemLike) else {
            Issue.record("a line-wrapped x5c entry must be refused")
            return
        }
    }
}
