import Foundation
import KioskSigning
import KioskTesting
import NIOHTTP1
import Testing

/// An In-App Purchase key of the purchase catalog's app, as `kiosk keys create` hands it out.
struct ServerAPIKey: Sendable {
    var keyId: String
    var issuerId: String
    var privateKeyPEM: String
    var bundleId: String

    /// A bearer token as Apple's Python client makes it: no `iat`, five minutes to live.
    func token(expiresIn seconds: TimeInterval = 300, now: Date = Date()) throws -> String {
        try ServerAPIToken.sign(
            keyId: keyId, issuerId: issuerId, bundleId: bundleId, privateKeyPEM: privateKeyPEM,
            expiresAt: now + seconds)
    }
}

extension TestStore {
    /// Creates an In-App Purchase key for `bundleId` through the console API.
    func createServerAPIKey(bundleId: String = TestStore.bundleId) async throws -> ServerAPIKey {
        let answer = try await request(.POST, "/admin/v1/apps/\(bundleId)/keys", json: ["name": "server"])
        #expect(answer.status == 201, "\(answer.text)")
        return ServerAPIKey(
            keyId: try #require(answer.json["keyId"] as? String),
            issuerId: try #require(answer.json["issuerId"] as? String),
            privateKeyPEM: try #require(answer.json["privateKey"] as? String), bundleId: bundleId)
    }

    /// Calls the App Store Server API (`/inApps…`, or `/sandbox/inApps…` when `sandbox`) with a fresh token.
    func serverAPI(
        _ method: HTTPMethod, _ path: String, key: ServerAPIKey, json: [String: Any]? = nil, sandbox: Bool = true
    ) async throws -> Answer {
        try await request(method, (sandbox ? "/sandbox" : "") + path, json: json, token: .some(try key.token()))
    }
}
