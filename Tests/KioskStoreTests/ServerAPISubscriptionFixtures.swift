import Foundation
import KioskCore
import KioskSigning
import KioskTesting
import NIOHTTP1
import Testing

/// A subscription catalog on top of the purchase catalog: the group "Pro" (21000001) holding a monthly
/// auto-renewable at tier 1.
extension TestStore {
    static let monthly = "com.example.pro.monthly"

    func prepareSubscriptionCatalog() async throws {
        try await preparePurchaseCatalog()
        let group = try await request(
            .POST, "/admin/v1/apps/\(Self.bundleId)/subscription-groups",
            json: ["referenceName": "Pro", "localizations": [["locale": "en-US", "name": "Pro"]]])
        #expect(group.status == 201, "\(group.text)")
        let monthly = try await createProduct(
            Self.monthly, type: "auto_renewable",
            fields: ["subscription": ["group": "Pro", "level": 1], "duration": "P1M"])
        #expect(monthly.status == 201, "\(monthly.text)")
    }

    /// Sets the app's notification URLs for one environment.
    func setNotificationURLs(_ urls: [String], sandbox: Bool = true) async throws {
        let answer = try await request(
            .PATCH, "/admin/v1/apps/\(Self.bundleId)",
            json: [sandbox ? "sandboxNotificationURLs" : "productionNotificationURLs": urls])
        #expect(answer.status == 200, "\(answer.text)")
    }

    /// Calls the App Store Server API with a token minted at `clock`'s time (the store checks `exp` on its clock).
    func inApps(
        _ method: HTTPMethod, _ path: String, key: ServerAPIKey, json: [String: Any]? = nil, sandbox: Bool = true,
        clock: any KioskClock
    ) async throws -> Answer {
        try await request(
            method, (sandbox ? "/sandbox" : "") + path, json: json, token: .some(try key.token(now: clock.now())))
    }

    /// Buys the monthly subscription as `email` in the sandbox; returns the transaction id and its payload.
    func buyMonthly(as email: String = TestStore.testerEmail, clock: any KioskClock) async throws
        -> (String, JWSTransactionDecodedPayload)
    {
        let token = try await signIn(email)
        let bought = try await pay(Self.monthly, token: token)
        #expect(bought.status == 200, "\(bought.text)")
        let signed = try #require((bought.json["transaction"] as? [String: Any])?["signedTransaction"] as? String)
        let payload = try await verifiedPayload(
            signed, as: JWSTransactionDecodedPayload.self, root: built.signing.identity(.sandbox).root, clock: clock)
        return (try #require(bought.transactionId), payload)
    }
}

extension TestStore.Answer {
    /// `errorCode` of an App Store Server API error.
    var appleErrorCode: Int? { json["errorCode"] as? Int }
}
