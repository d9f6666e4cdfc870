import AsyncHTTPClient
import Foundation
import KioskCore
import KioskTestSupport
import NIOCore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A crash is never silent: each request is logged before it is handled, so when the store dies while serving one
/// (`KIOSK_CRASH_AT`: SIGKILL, no cleanup, no flush), its log still names that request's route and request id.
@Suite(.runsServers) struct CrashLogTests {
    @Test func theLogOfAStoreThatDiedNamesTheRequestItWasServing() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-crash-log-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("store.log")
        let token = "kiosk_crash_admin_token_0123456789"
        let port = try freeLoopbackPort()
        let store = try ServeProcess(
            [
                "--port", String(port), "--data-dir", directory.appendingPathComponent("data").path, "--admin-token",
                token,
            ],
            environment: [CrashPoint.environmentVariable: CrashPoint.paymentCommitted.rawValue], log: log)
        _ = try await store.waitForLine(containing: "listening on http://")
        let server = "http://127.0.0.1:\(port)"
        try await CoinShop.createShop(server: server, token: token)

        let session = try await post(
            server + "/sandbox/storekit/v1/sessions",
            ["email": CoinShop.tester, "password": "sandbox-pass", "bundleId": CoinShop.app, "deviceId": "\(UUID())"])
        let sessionToken = try #require(session?["sessionToken"] as? String, "\(String(describing: session))")
        let paid = try? await post(
            server + "/sandbox/storekit/v1/payments",
            ["productId": "\(CoinShop.app).coins", "quantity": 1, "idempotencyKey": "\(UUID())"], bearer: sessionToken)
        #expect(paid == nil, "the store died before it answered the payment")
        #expect(try await store.waitForExit() == SIGKILL)

        let lines = String(decoding: try Data(contentsOf: log), as: UTF8.self).split(separator: "\n")
        let payment = lines.filter { $0.contains("route=/sandbox/storekit/v1/payments") }
        #expect(payment.count == 1, "one line for the payment it was serving:\n\(lines.joined(separator: "\n"))")
        #expect(payment.first?.contains("method=POST") == true, "\(payment)")
        #expect(payment.first?.contains("hb.request.id=") == true, "\(payment)")
        // swift-log's text line: time, level, label, the metadata as sorted key=value pairs, the module, the message.
        let line = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4} \w+ \S+:.* hb\.request\.id=\S+.* \[\w+\] \S/
        #expect(payment.first?.contains(line) == true, "\(payment)")
    }

    /// POSTs `json` and returns the answer's JSON object; throws when no answer comes.
    private func post(_ url: String, _ json: [String: Any], bearer: String? = nil) async throws -> [String: Any]? {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        if let bearer { request.headers.add(name: "Authorization", value: "Bearer \(bearer)") }
        request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: json)))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 1_048_576)
        return try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
    }
}
