import Foundation
import KioskCore
import KioskSigning
import KioskTesting
import Testing

/// Numbers and dates that once killed the store (a Swift trap on an out-of-range conversion stops the whole
/// process) each get their exact refusal, and the store answers `/health` afterwards.
@Suite struct HostileNumbersTests {
    /// 10000-01-01T00:00:00Z and 0000-01-01T00:00:00Z.
    static let year10000 = Date(timeIntervalSince1970: 253_402_300_800)
    static let year0 = Date(timeIntervalSince1970: -62_167_219_200)

    /// Receipts signed by a self-made chain (Apple's markers, anyone can make one) whose dates lie outside
    /// 1970–9999 answer 21002 on both endpoints, no credential needed: their dates are malformed and never reach
    /// the certificate check, which trapped on them.
    @Test func verifyReceiptRefusesDatesOutsideTheRange() async throws {
        let stranger = try SigningIdentity.generate(environment: .sandbox, now: Date())
        var receipts: [String: String] = [:]
        for (name, date) in [("creation year 10000", Self.year10000), ("creation year 0", Self.year0)] {
            receipts[name] = Data(try AppReceiptSigner(identity: stranger).sign(Self.appReceipt(createdAt: date)))
                .base64EncodedString()
        }
        for milliseconds in ["253402300800000", "9223372036854775807", "-9223372036854775808"] {
            receipts["purchase-date-ms \(milliseconds)"] = try TransactionReceiptSigner(identity: stranger).sign(
                purchaseInfo: Array(Self.purchaseInfo(purchaseDateMilliseconds: milliseconds).utf8),
                environment: .sandbox)
        }
        let hostile = receipts.sorted { $0.key < $1.key }
        try await withStore(.sqlite) { store in
            for (name, receipt) in hostile {
                for sandbox in [false, true] {
                    let answer = try await store.verifyReceipt(["receipt-data": receipt], sandbox: sandbox)
                    #expect(answer.status == 200, "\(name): \(answer.text)")
                    #expect(answer.json["status"] as? Int == 21002, "\(name), sandbox \(sandbox): \(answer.text)")
                    try await store.expectHealthy()
                }
            }
        }
    }

    /// A genuine receipt changed only in `SignedData.digestAlgorithms`, which the signature does not cover, is
    /// malformed (21002), as Apple's strict PKCS #7 parser and OpenSSL refuse it; it once answered status 0.
    @Test func receiptWithChangedDigestAlgorithmsIsMalformed() async throws {
        try await withStore(.sqlite) { store in
            try await store.preparePurchaseCatalog()
            let token = try await store.signIn()
            _ = try await store.pay(TestStore.removeAds, token: token)
            let receipt = try await store.appReceipt(token: token)
            #expect(try await store.verifyReceipt(["receipt-data": receipt]).json["status"] as? Int == 0)

            var bytes = Array(try #require(Data(base64Encoded: receipt)))
            let sha256: [UInt8] = [0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01]
            let first = try #require(bytes.indices.first { Array(bytes[$0...].prefix(sha256.count)) == sha256 })
            bytes[first + sha256.count - 1] = 0x02  // SHA-384, in digestAlgorithms only; the signer still says SHA-256
            let changed = try await store.verifyReceipt(["receipt-data": Data(bytes).base64EncodedString()])
            #expect(changed.json["status"] as? Int == 21002, "\(changed.text)")
            try await store.expectHealthy()
        }
    }

    /// The sandbox clock takes no value it cannot hold (Int64 conversions and additions trapped on them) and never
    /// passes 9899-12-31T23:59:59Z, so every date the store signs from it stays before year 10000; each refusal
    /// names the bound.
    @Test func sandboxClockRefusesValuesOutsideItsRange() async throws {
        try await withTestStore(engine: .sqlite, clock: ManualClock(Date(timeIntervalSince1970: 1_767_225_600))) {
            store in
            let refused: [[String: Any]] = [
                ["action": "set", "to": "9999-12-31T00:00:00Z"],
                ["action": "set", "to": 9_223_372_036_854_775_807 as Int64],
                ["action": "set", "to": 1e300],
                ["action": "set", "to": -1e15],
                ["action": "set", "to": "253402300800000"],
                ["action": "set", "to": "99999999999999999999"],
                ["action": "advance", "by": 1e300],
                ["action": "advance", "by": 9.3e18],
                ["action": "advance", "by": "1e400"],
                ["action": "advance", "by": "99999999999999999999w"],
            ]
            for body in refused {
                let answer = try await store.sandboxClock(body)
                #expect(answer.status == 400, "\(body): \(answer.text)")
                #expect(answer.errorCode == "clock_out_of_range", "\(body): \(answer.text)")
                #expect(answer.errorField == (body["action"] as? String == "set" ? "to" : "by"), "\(answer.text)")
                let message = (answer.json["error"] as? [String: Any])?["message"] as? String
                #expect(message?.contains("9899-12-31T23:59:59Z") == true, "\(answer.text)")
                try await store.expectHealthy()
            }
            let atBound = try await store.sandboxClock(["action": "set", "to": "9899-12-31T23:59:59Z"])
            #expect(atBound.status == 200, "\(atBound.text)")
            let past = try await store.sandboxClock(["action": "advance", "by": "1s"])
            #expect(past.errorCode == "clock_out_of_range", "\(past.text)")
            try await store.expectHealthy()
        }
    }

    /// A custom price too large for Apple's milliunits (×1000, then × quantity) is refused when the product is
    /// made, not trapped on at the first purchase.
    @Test func customPriceBeyondTheCapIsRefused() async throws {
        try await withStore(.sqlite) { store in
            try await store.createApp()
            let answer = try await store.createProduct(
                "com.example.app.gold", fields: ["pricing": ["customPrices": ["USA": Int.max]]])
            #expect(answer.status == 400, "\(answer.text)")
            #expect(answer.errorCode == "invalid_price_amount", "\(answer.text)")
            #expect(answer.errorField == "pricing.customPrices.USA", "\(answer.text)")
            try await store.expectHealthy()
        }
    }

    /// A minimal sandbox app receipt created at `date`.
    static func appReceipt(createdAt date: Date) -> AppReceipt {
        AppReceipt(
            receiptType: .productionSandbox, appItemId: 0, bundleId: TestStore.bundleId, applicationVersion: "1.0",
            opaqueValue: [1, 2, 3, 4], sha1Hash: Array(repeating: 0xAB, count: 20), receiptCreationDate: date,
            originalApplicationVersion: "1.0", inApp: [])
    }

    /// An iOS 6 purchase-info property list with the given purchase date, as text.
    static func purchaseInfo(purchaseDateMilliseconds milliseconds: String) -> String {
        let fields = [
            ("purchase-date-ms", milliseconds), ("original-purchase-date-ms", milliseconds),
            ("transaction-id", "1000000046178817"), ("original-transaction-id", "1000000046178817"),
            ("product-id", TestStore.removeAds), ("item-id", "521129812"), ("quantity", "1"),
            ("bid", TestStore.bundleId), ("bvrs", "1.0"), ("unique-identifier", "0000b0123456789abcdef"),
        ]
        return "{\n" + fields.map { "\t\"\($0.0)\" = \"\($0.1)\";\n" }.joined() + "}"
    }
}

extension TestStore {
    /// `GET /health` answers 200: the process is alive and serving.
    func expectHealthy(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let health = try await request(.GET, "/health")
        #expect(health.status == 200, "\(health.text)", sourceLocation: sourceLocation)
    }
}
