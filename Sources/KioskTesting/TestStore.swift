import AsyncHTTPClient
import Foundation
import KioskCore
import KioskStore
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle

/// A real Kiosk store on 127.0.0.1 and a free port, with its own data directory and a known admin token.
///
/// ```swift
/// try await withTestStore { store in
///     let answer = try await store.request(.POST, "/admin/v1/apps", json: ["bundleId": "com.example.app", "name": "Example"])
///     #expect(answer.status == 201)
/// }
/// ```
public struct TestStore: Sendable {
    /// `http://127.0.0.1:<port>`.
    public let baseURL: String
    public let port: Int
    /// The admin token the store accepts.
    public let adminToken: String
    public let dataDirectory: URL
    /// The store's parts, for assertions below the HTTP surface.
    public let built: BuiltStore

    /// An HTTP answer: status, headers and body.
    public struct Answer: Sendable {
        public var status: Int
        public var headers: [(String, String)]
        public var body: Data

        /// The body as a JSON object; an empty dictionary if it is not one.
        public var json: [String: Any] {
            ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any]) ?? [:]
        }

        public var text: String { String(decoding: body, as: UTF8.self) }

        public func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }

        /// The body decoded as `T` (ISO 8601 dates).
        public func decode<T: Decodable>(_ type: T.Type) throws -> T {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            return try decoder.decode(type, from: body)
        }
    }

    /// Sends a request to the store. Admin paths get the admin token unless `token` says otherwise
    /// (pass `.some(nil)` to send none).
    public func request(
        _ method: HTTPMethod, _ path: String, json: [String: Any]? = nil, body: Data? = nil,
        token: String?? = .none, headers: [String: String] = [:]
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        let bearer = token ?? (path.hasPrefix("/admin/") ? adminToken : nil)
        if let bearer { request.headers.add(name: "Authorization", value: "Bearer \(bearer)") }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let payload = try body ?? json.map({ try JSONSerialization.data(withJSONObject: $0) }) {
            if headers["Content-Type"] == nil { request.headers.add(name: "Content-Type", value: "application/json") }
            request.body = .bytes(ByteBuffer(bytes: payload))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let collected = try await response.body.collect(upTo: 64 * 1024 * 1024)
        return Answer(
            status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) },
            body: Data(collected.readableBytesView))
    }
}

/// Runs `body` against a fresh store and always shuts the store down and removes its data directory.
///
/// - Parameters:
///   - databaseURL: nil for an SQLite file in the temporary data directory, or a PostgreSQL URL.
///   - clock: the store's clock.
///   - dataDirectory: reuse a directory (e.g. to restart a store on the same state); it is then kept.
///   - serverAPIRequestsPerSecond: the App Store Server API's rate limit per key.
public func withTestStore<T: Sendable>(
    databaseURL: String? = nil,
    clock: any KioskClock = SystemClock(),
    dataDirectory: URL? = nil,
    serverAPIRequestsPerSecond: Double = 100,
    _ body: @Sendable (TestStore) async throws -> T
) async throws -> T {
    let directory =
        dataDirectory
        ?? FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-test-\(UUID().uuidString)")
    defer { if dataDirectory == nil { try? FileManager.default.removeItem(at: directory) } }
    let token = "kiosk_test_admin_token_0123456789"
    let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
    var logger = Logger(label: "kiosk-test")
    logger.logLevel = .warning
    let built = try await buildStore(
        configuration: ServerConfiguration(
            host: "127.0.0.1", port: 0, dataDirectory: directory, databaseURL: databaseURL, adminToken: token,
            serverAPIRequestsPerSecond: serverAPIRequestsPerSecond),
        clock: clock, logger: logger,
        onServerRunning: { port in
            portContinuation.yield(port)
            portContinuation.finish()
        })
    // The store runs in its own service group so the test can stop it the way SIGTERM does: gracefully,
    // letting the database close after the server.
    let serviceGroup = ServiceGroup(
        configuration: .init(services: [built.application], gracefulShutdownSignals: [], logger: logger))
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask {
            defer { portContinuation.finish() }
            try await serviceGroup.run()
        }
        do {
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else {
                // The server stopped before listening; its error is the one to report.
                try await group.next()
                throw TestStoreError(message: "The store stopped before it listened.")
            }
            let store = TestStore(
                baseURL: "http://127.0.0.1:\(port)", port: port, adminToken: token, dataDirectory: directory,
                built: built)
            let result = try await body(store)
            await serviceGroup.triggerGracefulShutdown()
            try await group.waitForAll()
            return result
        } catch {
            await serviceGroup.triggerGracefulShutdown()
            try? await group.waitForAll()
            throw error
        }
    }
}

/// The test store could not start.
public struct TestStoreError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
