import AsyncHTTPClient
import Foundation
import KioskTestSupport
import KioskTesting
import NIOCore
import NIOHTTP1
import Testing

/// A catalog most purchase tests share: one app, coins (consumable), remove-ads (non-consumable), the Paid Apps
/// agreement accepted, and a sandbox tester.
extension TestStore {
    static let bundleId = "com.example.app"
    static let coins = "com.example.coins"
    static let removeAds = "com.example.removeads"
    static let testerEmail = "tester@example.com"
    static let password = "correct horse battery"

    func preparePurchaseCatalog(testerSettings: [String: Any] = [:]) async throws {
        try await createApp(Self.bundleId)
        #expect(try await createProduct(Self.coins).status == 201)
        #expect(try await createProduct(Self.removeAds, type: "non_consumable").status == 201)
        #expect(
            try await request(.POST, "/admin/v1/agreements/paid-apps/accept", json: SampleAgreement.json).status == 200)
        try await createTester(Self.testerEmail, settings: testerSettings)
    }

    func createTester(_ email: String, settings: [String: Any] = [:]) async throws {
        var body: [String: Any] = ["email": email, "password": Self.password, "storefront": "USA"]
        body.merge(settings) { $1 }
        let created = try await request(.POST, "/admin/v1/testers", json: body)
        #expect(created.status == 201, "\(created.text)")
    }

    /// Approves the coins for production and has two customers buy them there: twice in the United States
    /// (`us@example.com`), once in the United Kingdom (`uk@example.com`).
    func buyCoinsInProduction() async throws {
        for action in ["submit", "approve"] {
            let review = try await request(
                .POST, "/admin/v1/apps/\(Self.bundleId)/products/\(Self.coins)/review", json: ["action": action])
            #expect(review.status == 200, "\(review.text)")
        }
        for (email, storefront) in [("us@example.com", "USA"), ("uk@example.com", "GBR")] {
            let created = try await request(
                .POST, "/admin/v1/accounts",
                json: ["email": email, "password": Self.password, "storefront": storefront])
            #expect(created.status == 201, "\(created.text)")
        }
        for email in ["us@example.com", "us@example.com", "uk@example.com"] {
            let token = try await signIn(email, sandbox: false)
            #expect(try await pay(Self.coins, token: token, sandbox: false).transactionId != nil)
        }
    }

    /// Signs in and returns the session token.
    func signIn(
        _ email: String = TestStore.testerEmail, sandbox: Bool = true, deviceId: UUID = UUID()
    ) async throws -> String {
        let answer = try await request(
            .POST, Self.clientPath("/sessions", sandbox: sandbox),
            json: [
                "email": email, "password": Self.password, "bundleId": Self.bundleId, "deviceId": deviceId.uuidString,
            ])
        #expect(answer.status == 201, "\(answer.text)")
        return try #require(answer.json["sessionToken"] as? String)
    }

    /// A client-protocol call with a session token.
    func client(
        _ method: HTTPMethod, _ path: String, token: String, json: [String: Any]? = nil, sandbox: Bool = true
    ) async throws -> Answer {
        try await request(method, Self.clientPath(path, sandbox: sandbox), json: json, token: .some(token))
    }

    /// Adds a payment and returns the queue entry the store answered.
    func pay(
        _ productId: String, token: String, key: String = UUID().uuidString, quantity: Int = 1, sandbox: Bool = true
    ) async throws -> Answer {
        try await client(
            .POST, "/payments", token: token,
            json: ["productId": productId, "quantity": quantity, "idempotencyKey": key], sandbox: sandbox)
    }

    static func clientPath(_ path: String, sandbox: Bool) -> String {
        (sandbox ? "/sandbox/storekit/v1" : "/storekit/v1") + path
    }

    /// Reads the updates stream until `count` entry events arrived; returns their data. `whenConnected` runs once
    /// the store has registered the stream (its `: connected` comment arrived), so what it changes must come live.
    func readUpdates(
        token: String, after cursor: Int64 = 0, count: Int, whenConnected: @Sendable () async throws -> Void = {}
    ) async throws -> [[String: Any]] {
        var entries: [[String: Any]] = []
        try await readUpdateEvents(token: token, after: cursor, whenConnected: whenConnected) { name, data in
            if name == "entry" { entries.append(data) }
            return entries.count >= count
        }
        return entries
    }

    /// Reads the updates stream until its `caught-up` event; returns the entries before it and its cursor.
    func readUpdatesUntilCaughtUp(token: String, after cursor: Int64) async throws -> (
        entries: [[String: Any]], cursor: Int?
    ) {
        var entries: [[String: Any]] = []
        var caughtUp: Int?
        try await readUpdateEvents(token: token, after: cursor) { name, data in
            if name == "entry" { entries.append(data) }
            if name == "caught-up" { caughtUp = data["cursor"] as? Int }
            return name == "caught-up"
        }
        return (entries, caughtUp)
    }

    /// Reads the updates stream's events (name and JSON data) until `onEvent` returns true.
    private func readUpdateEvents(
        token: String, after cursor: Int64, whenConnected: @Sendable () async throws -> Void = {},
        onEvent: (String, [String: Any]) throws -> Bool
    ) async throws {
        var request = HTTPClientRequest(url: baseURL + "/sandbox/storekit/v1/updates?after=\(cursor)")
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        // A guard against a hang only, as in `request`: the test waits for the events themselves.
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(120))
        #expect(response.headers.first(name: "Content-Type") == "text/event-stream")
        var text = ""
        for try await buffer in response.body {
            text += String(buffer: buffer)
            while let end = text.range(of: "\n\n") {
                let event = String(text[..<end.lowerBound])
                text = String(text[end.upperBound...])
                if event == ": connected" { try await whenConnected() }
                let lines = event.split(separator: "\n")
                guard let name = lines.first(where: { $0.hasPrefix("event: ") })?.dropFirst(7),
                    let dataLine = lines.first(where: { $0.hasPrefix("data: ") })
                else { continue }
                let json = try JSONSerialization.jsonObject(with: Data(dataLine.dropFirst(6).utf8))
                if try onEvent(String(name), try #require(json as? [String: Any])) { return }
            }
        }
    }
}

extension TestStore.Answer {
    /// `error.skErrorCode` of an error body.
    var skErrorCode: Int? { (json["error"] as? [String: Any])?["skErrorCode"] as? Int }
    /// `transaction.transactionId` of a queue entry.
    var transactionId: String? { (json["transaction"] as? [String: Any])?["transactionId"] as? String }
}

/// What an iOS 6-style transaction receipt says, without its signature: the store signs a receipt each time one is
/// asked for, so two copies of one transaction's receipt differ only in the signature's bytes.
enum ReceiptText {
    /// The receipt's base64 `purchase-info`, the part that states the purchase; nil when `receipt` has none.
    static func purchaseInfo(of receipt: String) -> String? {
        guard let data = Data(base64Encoded: receipt), let text = String(data: data, encoding: .utf8),
            let key = text.range(of: "\"purchase-info\" = \""),
            let end = text[key.upperBound...].firstIndex(of: "\"")
        else { return nil }
        return String(text[key.upperBound..<end])
    }

    /// A queue entry's JSON with its transaction's receipt replaced by the receipt's `purchase-info`, as sorted-key
    /// bytes: equal for two answers that state the same entry.
    static func unsigned(_ entry: [String: Any]) throws -> Data {
        var entry = entry
        if var transaction = entry["transaction"] as? [String: Any] {
            let receipt = try #require(transaction["transactionReceipt"] as? String)
            let stated: String = try #require(Self.purchaseInfo(of: receipt))
            transaction["transactionReceipt"] = stated
            entry["transaction"] = transaction
        }
        return try JSONSerialization.data(withJSONObject: entry, options: .sortedKeys)
    }
}
