import Crypto
import Foundation
import KioskCore
import KioskSigning
import KioskTestSupport
import SwiftASN1
import Testing
import X509

/// Whole seconds, so dates survive the payload's RFC 3339 encoding unchanged.
private let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))

private func sampleReceipt(creationDate: Date = now, deviceId: UUID = UUID()) -> AppReceipt {
    let opaque: [UInt8] = [0x51, 0x7A, 0x03, 0x9C, 0x44, 0x10, 0xEE, 0x02]
    let bundleId = "com.example.app"
    return AppReceipt(
        receiptType: .productionSandbox,
        appItemId: 1_400_000_001,
        bundleId: bundleId,
        applicationVersion: "42",
        opaqueValue: opaque,
        sha1Hash: AppReceipt.deviceHash(deviceId: deviceId, opaqueValue: opaque, bundleId: bundleId),
        receiptCreationDate: creationDate,
        originalPurchaseDate: creationDate - 86_400 * 30,
        originalApplicationVersion: "1.0",
        expirationDate: creationDate + 86_400 * 365,
        downloadId: 9_000_000_123,
        versionExternalIdentifier: 812_345_678,
        inApp: [
            AppReceipt.InAppPurchase(
                quantity: 2, productId: "com.example.app.gold", transactionId: "2000000111222333",
                originalTransactionId: "2000000111222333", purchaseDate: creationDate - 60,
                originalPurchaseDate: creationDate - 60, productType: .consumable
            ),
            AppReceipt.InAppPurchase(
                quantity: 1, productId: "com.example.app.monthly", transactionId: "2000000111222444",
                originalTransactionId: "2000000111222000", purchaseDate: creationDate - 3_600,
                originalPurchaseDate: creationDate - 86_400 * 60, productType: .autoRenewableSubscription,
                expiresDate: creationDate + 86_400 * 30, webOrderLineItemId: 2_000_000_044_455_566,
                cancellationDate: creationDate - 10, isTrialPeriod: false, isInIntroOfferPeriod: true,
                promotionalOfferId: "winback-50"
            ),
        ]
    )
}

/// The receipt a purchase of one consumable made in the sandbox before iOS 7.
private func sampleTransactionReceipt(environment: StoreEnvironment) -> TransactionReceipt {
    TransactionReceipt(
        environment: environment, transactionId: "1000000046178817", originalTransactionId: "1000000046178800",
        productId: "com.example.app.monthly", itemId: "521129812", quantity: 1,
        purchaseDate: Date(timeIntervalSince1970: 1_335_798_355.868),
        originalPurchaseDate: Date(timeIntervalSince1970: 1_335_700_000),
        bundleId: "com.example.app", bundleVersion: "20120427", uniqueIdentifier: "0000b0123456789abcdef",
        uniqueVendorIdentifier: "6C9F5A8E-2F4B-4C37-9B0A-1E2D3C4B5A69",
        expiresDate: Date(timeIntervalSince1970: 1_338_476_755.868), webOrderLineItemId: "1000000026402012"
    )
}

@Suite("App receipts and iOS 6 transaction receipts")
struct ReceiptTests {
    // Proves every field survives encode → PKCS #7 sign → verify → decode, from DER and from base64.
    @Test func appReceiptRoundTrip() async throws {
        let identity = try SigningIdentity.generate(environment: .sandbox, now: now)
        let receipt = sampleReceipt()
        let der = try AppReceiptSigner(identity: identity).sign(receipt)
        let verifier = AppReceiptVerifier(rootCertificates: [identity.root])

        #expect(await verifier.verify(der) == .verified(receipt))
        #expect(
            await verifier.verify(base64: Data(der).base64EncodedString(options: .lineLength64Characters))
                == .verified(receipt))
    }

    // Proves the device hash is SHA-1(UUID bytes ‖ opaque ‖ UTF8String TLV of the bundle id) and only matches
    // the device it was made for.
    @Test func deviceHash() throws {
        let deviceId = try #require(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        let receipt = sampleReceipt(deviceId: deviceId)
        var expected = Insecure.SHA1()
        expected.update(data: Data(withUnsafeBytes(of: deviceId.uuid) { Array($0) }))
        expected.update(data: receipt.opaqueValue)
        expected.update(data: [0x0C, UInt8(receipt.bundleId.utf8.count)] + Array(receipt.bundleId.utf8))

        #expect(receipt.sha1Hash == Array(expected.finalize()))
        #expect(receipt.hashMatches(deviceId: deviceId))
        #expect(!receipt.hashMatches(deviceId: UUID()))
    }

    // Proves a changed payload byte is refused as a bad signature, before the payload is even decoded.
    @Test func tamperedAppReceiptIsRefused() async throws {
        let identity = try SigningIdentity.generate(environment: .sandbox, now: now)
        var der = try AppReceiptSigner(identity: identity).sign(sampleReceipt())
        let gold = Array("gold".utf8)
        let offset = try #require((0...(der.count - gold.count)).first { Array(der[$0..<($0 + gold.count)]) == gold })
        der[offset] = UInt8(ascii: "G")

        let result = await AppReceiptVerifier(rootCertificates: [identity.root]).verify(der)
        #expect(result == .invalid(.invalidSignature))
    }

    // Proves a receipt whose chain leads to another root is refused as untrusted.
    @Test func appReceiptWithWrongRootIsRefused() async throws {
        let identity = try SigningIdentity.generate(environment: .sandbox, now: now)
        let other = try SigningIdentity.generate(environment: .sandbox, now: now)
        let der = try AppReceiptSigner(identity: identity).sign(sampleReceipt())

        let result = await AppReceiptVerifier(rootCertificates: [other.root]).verify(der)
        #expect(result.failure?.isUntrustedChain == true, "\(result)")
    }

    // Proves the chain is validated at the receipt creation date: a leaf that expired before that date is
    // refused, and the same leaf verifies a receipt created while it was valid even though it has expired now.
    @Test func chainIsValidatedAtCreationDate() async throws {
        let chain = try TestChain.build(now: now) { options in
            options.leafNotBefore = now - 30 * 86_400
            options.leafNotAfter = now - 10 * 86_400
        }
        let signer = AppReceiptSigner(identity: try chain.identity)
        let verifier = AppReceiptVerifier(rootCertificates: [chain.root])

        let createdAfterExpiry = await verifier.verify(try signer.sign(sampleReceipt(creationDate: now)))
        #expect(createdAfterExpiry.failure?.isUntrustedChain == true, "\(createdAfterExpiry)")
        #expect("\(createdAfterExpiry)".contains("validated at \(now)"), "\(createdAfterExpiry)")

        let createdWhileValid = sampleReceipt(creationDate: now - 20 * 86_400)
        #expect(await verifier.verify(try signer.sign(createdWhileValid)) == .verified(createdWhileValid))
    }

    // Proves an Xcode-style payload, wrapped once more in an OCTET STRING, is unwrapped and decoded.
    @Test func doubleWrappedPayloadIsAccepted() async throws {
        let identity = try SigningIdentity.generate(environment: .sandbox, now: now)
        let receipt = sampleReceipt()
        var wrapped = DER.Serializer()
        try wrapped.serialize(ASN1OctetString(contentBytes: try receipt.payloadDER()[...]))
        let der = try AppReceiptSigner(identity: identity).sign(payloadDER: wrapped.serializedBytes)

        #expect(await AppReceiptVerifier(rootCertificates: [identity.root]).verify(der) == .verified(receipt))
    }

    // Proves the decoder ignores unknown attribute types, reads dates with fractional seconds, and reads an
    // empty date as absent, as Apple's receipts require.
    @Test func decoderToleratesApplePayloadVariants() throws {
        func attribute(_ type: Int, _ value: [UInt8]) throws -> ASN1Any {
            var serializer = DER.Serializer()
            try serializer.appendConstructedNode(identifier: .sequence) { coder in
                try coder.serialize(type)
                try coder.serialize(1)
                try coder.serialize(ASN1OctetString(contentBytes: value[...]))
            }
            return try ASN1Any(derEncoded: serializer.serializedBytes)
        }
        func der(_ value: some DERSerializable) throws -> [UInt8] {
            var serializer = DER.Serializer()
            try serializer.serialize(value)
            return serializer.serializedBytes
        }
        var serializer = DER.Serializer()
        try serializer.serializeSetOf([
            try attribute(0, der(ASN1UTF8String("Production"))),
            try attribute(1, der(0)),
            try attribute(2, der(ASN1UTF8String("com.example.app"))),
            try attribute(3, der(ASN1UTF8String("1"))),
            try attribute(4, [1, 2, 3, 4, 5, 6, 7, 8]),
            try attribute(5, Array(repeating: 0xAB, count: 20)),
            try attribute(8, der(ASN1IA5String(""))),
            try attribute(10, der(ASN1IA5String("4+"))),
            try attribute(12, der(ASN1IA5String("2023-10-19T01:45:40.123Z"))),
            try attribute(18, der(ASN1IA5String(""))),
            try attribute(19, der(ASN1UTF8String("1.0"))),
            try attribute(25, der(ASN1UTF8String("unknown"))),
        ])

        let receipt = try AppReceipt(payloadDER: serializer.serializedBytes)
        #expect(receipt.receiptType == .production)
        #expect(abs(receipt.receiptCreationDate.timeIntervalSince1970 - 1_697_679_940.123) < 0.000_5)
        #expect(receipt.originalPurchaseDate == nil)
        #expect(receipt.inApp.isEmpty)
        #expect(throws: ReceiptVerificationFailure.self) { try AppReceipt(payloadDER: [0x31, 0x00]) }
    }

    // Proves the iOS 6 receipt text is Apple's exact layout (tab-indented `"key" = "value";` lines, Apple's
    // three date formats, `environment` only in the sandbox) and round-trips through the verifier.
    @Test(arguments: StoreEnvironment.allCases)
    func transactionReceiptLayoutAndRoundTrip(environment: StoreEnvironment) async throws {
        let identity = try SigningIdentity.generate(environment: environment, now: now)
        let receipt = sampleTransactionReceipt(environment: environment)
        let text = try TransactionReceiptSigner(identity: identity).sign(receipt)

        let outer = String(decoding: try #require(Data(base64Encoded: text)), as: UTF8.self)
        let lines = outer.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let environmentLines = environment == .sandbox ? ["\t\"environment\" = \"Sandbox\";"] : []
        #expect(lines.count == 6 + environmentLines.count, "\(outer)")
        #expect(lines.first == "{" && lines.last == "}")
        #expect(lines[1].hasPrefix("\t\"signature\" = \"") && lines[1].hasSuffix("\";"))
        #expect(lines[2].hasPrefix("\t\"purchase-info\" = \"") && lines[2].hasSuffix("\";"))
        #expect(
            Array(lines[3..<(lines.count - 1)]) == environmentLines + [
                "\t\"pod\" = \"100\";", "\t\"signing-status\" = \"0\";",
            ])

        let purchaseInfoBase64 = String(lines[2].dropFirst("\t\"purchase-info\" = \"".count).dropLast(2))
        let purchaseInfo = String(decoding: try #require(Data(base64Encoded: purchaseInfoBase64)), as: UTF8.self)
        #expect(
            purchaseInfo == """
                {
                \t"original-purchase-date-pst" = "2012-04-29 04:46:40 America/Los_Angeles";
                \t"purchase-date-ms" = "1335798355868";
                \t"unique-identifier" = "0000b0123456789abcdef";
                \t"original-transaction-id" = "1000000046178800";
                \t"expires-date" = "1338476755868";
                \t"transaction-id" = "1000000046178817";
                \t"original-purchase-date-ms" = "1335700000000";
                \t"web-order-line-item-id" = "1000000026402012";
                \t"bvrs" = "20120427";
                \t"unique-vendor-identifier" = "6C9F5A8E-2F4B-4C37-9B0A-1E2D3C4B5A69";
                \t"expires-date-formatted-pst" = "2012-05-31 08:05:55 America/Los_Angeles";
                \t"item-id" = "521129812";
                \t"expires-date-formatted" = "2012-05-31 15:05:55 Etc/GMT";
                \t"product-id" = "com.example.app.monthly";
                \t"purchase-date" = "2012-04-30 15:05:55 Etc/GMT";
                \t"original-purchase-date" = "2012-04-29 11:46:40 Etc/GMT";
                \t"bid" = "com.example.app";
                \t"purchase-date-pst" = "2012-04-30 08:05:55 America/Los_Angeles";
                \t"quantity" = "1";
                }
                """
        )

        // The receipt dates are in 2012, long before this identity's leaf; validate them against a leaf whose
        // window covers them, which also proves the chain is checked at the purchase date.
        let verifier = TransactionReceiptVerifier(rootCertificates: [identity.root])
        let result = await verifier.verify(text)
        #expect(result.failure?.isUntrustedChain == true, "a 2012 purchase must not verify: \(result)")
        let current = sampleTransactionReceipt(environment: environment).shifted(to: now)
        let currentText = try TransactionReceiptSigner(identity: identity).sign(current)
        #expect(await verifier.verify(currentText) == .verified(current))
    }

    // Proves quotes and backslashes in a field survive the property list's escaping, even a quote carrying a
    // combining mark (one Character, still a quote).
    @Test func transactionReceiptKeepsQuotesAndBackslashes() async throws {
        let identity = try SigningIdentity.generate(environment: .sandbox, now: now)
        var receipt = sampleTransactionReceipt(environment: .sandbox).shifted(to: now)
        receipt.productId = #"com.example."quoted"\back\slash"\#u{301}.end"#
        receipt.bundleVersion = #"\"#
        let text = try TransactionReceiptSigner(identity: identity).sign(receipt)
        let verifier = TransactionReceiptVerifier(rootCertificates: [identity.root])
        #expect(await verifier.verify(text) == .verified(receipt))
    }

    // Proves a transaction receipt with changed purchase-info is refused as a bad signature, and one checked
    // against another root as untrusted.
    @Test func tamperedTransactionReceiptIsRefused() async throws {
        let identity = try SigningIdentity.generate(environment: .sandbox, now: now)
        let receipt = sampleTransactionReceipt(environment: .sandbox).shifted(to: now)
        let text = try TransactionReceiptSigner(identity: identity).sign(receipt)

        let outer = String(decoding: try #require(Data(base64Encoded: text)), as: UTF8.self)
        let original = Data(receipt.purchaseInfo).base64EncodedString()
        let forged = Data(
            String(decoding: receipt.purchaseInfo, as: UTF8.self)
                .replacingOccurrences(of: "\"quantity\" = \"1\"", with: "\"quantity\" = \"9\"").utf8
        ).base64EncodedString()
        let tampered = Data(outer.replacingOccurrences(of: original, with: forged).utf8).base64EncodedString()
        let verifier = TransactionReceiptVerifier(rootCertificates: [identity.root])
        #expect(await verifier.verify(tampered) == .invalid(.invalidSignature))

        let other = try SigningIdentity.generate(environment: .sandbox, now: now)
        let result = await TransactionReceiptVerifier(rootCertificates: [other.root]).verify(text)
        #expect(result.failure?.isUntrustedChain == true, "\(result)")
    }
}

@Suite("Hostile receipts: dates out of range, bytes outside the signature")
struct HostileReceiptTests {
    // Proves no single-bit change anywhere in a receipt verifies: the signature covers the payload, the certificates
    // carry their own signatures, and what neither covers (versions, digestAlgorithms, algorithm parameters) must
    // have the one shape a signer writes. A flip in SignedData.digestAlgorithms once verified. The verifier has
    // accepted the original first, so what it remembers of it must not carry over to any changed copy, and the
    // original still verifies after all of them.
    @Test func everyBitFlipIsRefused() async throws {
        let identity = try SigningIdentity.generate(environment: .sandbox, now: now)
        let receipt = sampleReceipt()
        let der = try AppReceiptSigner(identity: identity).sign(receipt)
        let verifier = AppReceiptVerifier(rootCertificates: [identity.root])
        #expect(await verifier.verify(der) == .verified(receipt))
        var accepted: [Int] = []
        for index in der.indices {
            var flipped = der
            flipped[index] ^= 0x01
            if case .verified = await verifier.verify(flipped) { accepted.append(index) }
        }
        #expect(accepted.isEmpty, "flips at \(accepted) of \(der.count) bytes verified")
        #expect(await verifier.verify(der) == .verified(receipt))
    }

    // Proves a digestAlgorithms entry that is not the signer's digest algorithm makes the container malformed
    // (verifyReceipt answers 21002), as OpenSSL and swift-certificates refuse such a CMS block.
    @Test func digestAlgorithmsMustNameTheSignersDigest() async throws {
        let identity = try SigningIdentity.generate(environment: .sandbox, now: now)
        var der = try AppReceiptSigner(identity: identity).sign(sampleReceipt())
        let sha256: [UInt8] = [0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01]
        let first = try #require(der.indices.first { Array(der[$0...].prefix(sha256.count)) == sha256 })
        der[first + sha256.count - 1] = 0x02  // SHA-384's OID, in SignedData.digestAlgorithms only
        let result = await AppReceiptVerifier(rootCertificates: [identity.root]).verify(der)
        guard case .invalid(.malformedContainer(let detail)) = result else {
            Issue.record("expected malformedContainer, got \(result)")
            return
        }
        #expect(detail.contains("digestAlgorithms"), "\(detail)")
    }

    // Proves an embedded certificate whose signature BIT STRING declares an unused bit (the signature's bytes, and
    // so its check, unchanged) makes the container malformed.
    @Test func certificateSignatureWithUnusedBitsIsRefused() async throws {
        // A leaf whose signature ends in a 0 bit, so that declaring one unused bit is valid DER.
        var identity = try SigningIdentity.generate(environment: .sandbox, now: now)
        while try Self.signatureValue(of: identity.leaf).last! & 1 != 0 {
            identity = try SigningIdentity.generate(environment: .sandbox, now: now)
        }
        let leaf = try #require(Data(base64Encoded: identity.x5c[0]))
        let signatureValue = try Self.signatureValue(of: identity.leaf)
        // The BIT STRING's unused-bits byte sits just before the signature's bytes at the end of the leaf.
        let unusedBitsOffset = leaf.count - signatureValue.count - 1

        var der = try AppReceiptSigner(identity: identity).sign(sampleReceipt())
        let leafOffset = try #require(der.indices.first { Array(der[$0...].prefix(leaf.count)) == Array(leaf) })
        der[leafOffset + unusedBitsOffset] = 0x01
        let result = await AppReceiptVerifier(rootCertificates: [identity.root]).verify(der)
        #expect("\(result)".contains("declares 1 unused bits"), "\(result)")
        guard case .invalid(.malformedContainer) = result else {
            Issue.record("expected malformedContainer, got \(result)")
            return
        }
    }

    /// The bytes of a certificate's signature BIT STRING.
    private static func signatureValue(of certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return try DER.sequence(DER.parse(serializer.serializedBytes), identifier: .sequence) { nodes in
            _ = nodes.next()
            _ = nodes.next()
            return Array(try ASN1BitString(derEncoded: nodes.next()!).bytes)
        }
    }

    // Proves an app receipt, signed by a self-made chain with Apple's markers, whose creation date lies outside
    // 1970–9999 is a malformed payload, refused before its chain is validated at that date.
    @Test(arguments: ["10000-01-01T00:00:00Z", "0000-01-01T00:00:00Z", "1969-12-31T23:59:59Z"])
    func appReceiptCreationDateOutOfRange(date: String) async throws {
        let stranger = try SigningIdentity.generate(environment: .sandbox, now: now)
        let der = try AppReceiptSigner(identity: stranger).sign(payloadDER: try payload(creationDate: date))
        let result = await AppReceiptVerifier(rootCertificates: [stranger.root]).verify(der)
        guard case .invalid(.malformedPayload(let detail)) = result else {
            Issue.record("\(date): expected malformedPayload, got \(result)")
            return
        }
        #expect(detail.contains("attribute 12"), "\(detail)")
    }

    // Proves an iOS 6 receipt whose purchase date is not milliseconds from 1970 to 9999 (year 10000, ±2⁶³) is a
    // malformed payload, refused before its chain is validated at that date.
    @Test(arguments: ["253402300800000", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-1"])
    func transactionReceiptPurchaseDateOutOfRange(milliseconds: String) async throws {
        let stranger = try SigningIdentity.generate(environment: .sandbox, now: now)
        let text = try TransactionReceiptSigner(identity: stranger).sign(
            purchaseInfo: Array(Self.purchaseInfo(purchaseDateMilliseconds: milliseconds).utf8), environment: .sandbox)
        let result = await TransactionReceiptVerifier(rootCertificates: [stranger.root]).verify(text)
        #expect(
            result
                == .invalid(
                    .malformedPayload(
                        "\"purchase-date-ms\" is not a number of milliseconds from 1970-01-01T00:00:00Z to "
                            + "9999-12-31T23:59:59Z")),
            "\(result)")
    }

    /// A purchase-info property list with every field a verifier reads and the given purchase date.
    static func purchaseInfo(purchaseDateMilliseconds: String) -> String {
        let fields = [
            ("purchase-date-ms", purchaseDateMilliseconds), ("original-purchase-date-ms", purchaseDateMilliseconds),
            ("transaction-id", "1000000046178817"), ("original-transaction-id", "1000000046178817"),
            ("product-id", "com.example.app.gold"), ("item-id", "521129812"), ("quantity", "1"),
            ("bid", "com.example.app"), ("bvrs", "1.0"), ("unique-identifier", "0000b0123456789abcdef"),
        ]
        return "{\n" + fields.map { "\t\"\($0.0)\" = \"\($0.1)\";\n" }.joined() + "}"
    }

    /// The DER payload of a minimal app receipt whose creation date (attribute 12) is `creationDate`, as written.
    private func payload(creationDate: String) throws -> [UInt8] {
        func attribute(_ type: Int, _ value: some DERSerializable) throws -> ASN1Any {
            var inner = DER.Serializer()
            try inner.serialize(value)
            var serializer = DER.Serializer()
            try serializer.appendConstructedNode(identifier: .sequence) { coder in
                try coder.serialize(type)
                try coder.serialize(1)
                try coder.serialize(ASN1OctetString(contentBytes: inner.serializedBytes[...]))
            }
            return try ASN1Any(derEncoded: serializer.serializedBytes)
        }
        var serializer = DER.Serializer()
        try serializer.serializeSetOf([
            try attribute(0, ASN1UTF8String("ProductionSandbox")),
            try attribute(1, 0),
            try attribute(2, ASN1UTF8String("com.example.app")),
            try attribute(3, ASN1UTF8String("1.0")),
            try attribute(4, ASN1OctetString(contentBytes: [1, 2, 3, 4])),
            try attribute(5, ASN1OctetString(contentBytes: ArraySlice(repeating: 0xAB, count: 20))),
            try attribute(12, ASN1IA5String(creationDate)),
            try attribute(19, ASN1UTF8String("1.0")),
        ])
        return serializer.serializedBytes
    }
}

extension ReceiptVerificationFailure {
    fileprivate var isUntrustedChain: Bool {
        if case .untrustedChain = self { true } else { false }
    }
}

extension TransactionReceipt {
    /// The same receipt with its purchase at `date` and the other dates moved by the same amount.
    fileprivate func shifted(to date: Date) -> TransactionReceipt {
        // Whole milliseconds, as the receipt carries them.
        func moved(_ other: Date) -> Date {
            Date(timeIntervalSince1970: ((other.timeIntervalSince1970 + offset) * 1000).rounded() / 1000)
        }
        let offset = date.timeIntervalSince(purchaseDate)
        var copy = self
        copy.purchaseDate = moved(purchaseDate)
        copy.originalPurchaseDate = moved(originalPurchaseDate)
        copy.expiresDate = expiresDate.map(moved)
        return copy
    }
}

@Suite("OpenSSL reads Kiosk's app receipts", .enabled(if: TestEnvironment.runs(.openssl), "openssl is not on PATH"))
struct ReceiptOpenSSLTests {
    // Proves OpenSSL's CMS verifier accepts the receipt against the exported root and outputs exactly the
    // payload, and that `openssl asn1parse` reads the container as PKCS #7 signed data.
    @Test func opensslVerifiesAndParses() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let identity = try SigningIdentity.generate(environment: .production, now: Date())
        let receipt = sampleReceipt(creationDate: now)
        let receiptFile = directory.appending("receipt.der")
        let rootFile = directory.appending("root.pem")
        let payloadFile = directory.appending("payload.der")
        try Data(try AppReceiptSigner(identity: identity).sign(receipt)).write(to: URL(fileURLWithPath: receiptFile))
        try write(identity.rootPEM, to: rootFile)
        let openssl = try TestEnvironment.require(.openssl)

        let verify = try await runProcess(
            openssl,
            [
                "cms", "-verify", "-inform", "DER", "-in", receiptFile, "-CAfile", rootFile, "-purpose", "any",
                "-out", payloadFile,
            ])
        #expect(verify.status == 0, "\(verify.output)")
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: payloadFile))) == (try receipt.payloadDER()))

        let parse = try await runProcess(openssl, ["asn1parse", "-inform", "DER", "-in", receiptFile])
        #expect(parse.status == 0, "\(parse.output)")
        #expect(parse.output.contains("pkcs7-signedData"), "\(parse.output)")
        #expect(parse.output.contains("ecdsa-with-SHA256"), "\(parse.output)")
    }
}

@Suite(
    "Apple's ReceiptUtility reads Kiosk's receipts",
    .enabled(
        if: TestEnvironment.runs(.python),
        "set KIOSK_TEST_PYTHON (.ci/run does) to a python with PyPI app-store-server-library"
    )
)
struct ReceiptAppleInteropTests {
    /// Runs one `ReceiptUtility` extraction on `receipt` and returns what it printed.
    func extract(_ method: String, _ receipt: String) async throws -> ProcessOutcome {
        let script = """
            import sys
            from appstoreserverlibrary.receipt_utility import ReceiptUtility
            print(getattr(ReceiptUtility(), sys.argv[1])(sys.argv[2]))
            """
        return try await runProcess(try TestEnvironment.require(.python), ["-c", script, method, receipt])
    }

    // Proves Apple's library finds the transaction id in an app receipt with one purchase (so the container
    // nesting and the attribute 17 SET OF are where it looks) and in an iOS 6 transaction receipt.
    @Test func appleExtractsTransactionIds() async throws {
        let identity = try SigningIdentity.generate(environment: .sandbox, now: now)
        var receipt = sampleReceipt()
        receipt.inApp = [receipt.inApp[1]]
        receipt.inApp[0].originalTransactionId = receipt.inApp[0].transactionId
        let appReceipt = Data(try AppReceiptSigner(identity: identity).sign(receipt)).base64EncodedString()
        let fromAppReceipt = try await extract("extract_transaction_id_from_app_receipt", appReceipt)
        #expect(fromAppReceipt.status == 0, "\(fromAppReceipt.output)")
        #expect(fromAppReceipt.output == "2000000111222444\n", "\(fromAppReceipt.output)")

        let transactionReceipt = try TransactionReceiptSigner(identity: identity)
            .sign(sampleTransactionReceipt(environment: .sandbox))
        let fromTransactionReceipt = try await extract(
            "extract_transaction_id_from_transaction_receipt", transactionReceipt
        )
        #expect(fromTransactionReceipt.status == 0, "\(fromTransactionReceipt.output)")
        #expect(fromTransactionReceipt.output == "1000000046178817\n", "\(fromTransactionReceipt.output)")
    }
}
