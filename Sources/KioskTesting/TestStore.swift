import AsyncHTTPClient
import Foundation
import KioskCore
import KioskHTTPClient
import KioskSigning
import KioskStore
import KioskTestSupport
import Logging
import NIOCore
import NIOHTTP1

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

    /// Sends a request to the store. Admin paths and `/metrics` get the admin token unless `token` says otherwise
    /// (pass `.some(nil)` to send none).
    public func request(
        _ method: HTTPMethod, _ path: String, json: [String: Any]? = nil, body: Data? = nil,
        token: String?? = .none, headers: [String: String] = [:]
    ) async throws -> Answer {
        try await sendTestRequest(
            method, baseURL + path, json: json, body: body,
            bearer: token ?? (path.hasPrefix("/admin/") || path == "/metrics" ? adminToken : nil), headers: headers)
    }

    /// The value of an unlabelled series in `/metrics` (`kiosk_database_log_pages_total`, say); nil when the store
    /// does not report it.
    public func metric(_ name: String) async throws -> Double? {
        let metrics = try await request(.GET, "/metrics").text
        let line = metrics.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { $0.split(separator: " ").last.flatMap { Double($0) } }
    }
}

/// Sends one request with an optional bearer token and JSON body, and collects the whole answer.
func sendTestRequest(
    _ method: HTTPMethod, _ url: String, json: [String: Any]?, body: Data?, bearer: String?,
    headers: [String: String]
) async throws -> TestStore.Answer {
    let payload = try body ?? json.map { try JSONSerialization.data(withJSONObject: $0) }
    // Generous: a full test run starts hundreds of stores at once, and a slow answer under that load is not
    // what a test checks.
    let answer = try await JSONHTTPClient(http: .shared).send(
        method, url, bearer: bearer, headers: HTTPHeaders(headers.map { ($0.key, $0.value) }), json: payload,
        timeout: .seconds(120), limit: 64 << 20)
    return TestStore.Answer(
        status: Int(answer.status.code), headers: answer.headers.map { ($0.name, $0.value) }, body: answer.body)
}

/// The OCSP transport for a test's verifier with online checks: its deadline is as generous as a test request's,
/// for the same reason (a full test run answers hundreds of stores at once on two cores; a test checks the verdict,
/// not the speed, and a deadline missed under that load would read as a retryable network failure).
public let testOCSPTransport = HTTPOCSPTransport(timeout: .seconds(120))

/// Which port a test store listens on.
public enum TestStorePort: Sendable {
    /// Any free port, chosen by the kernel when the store binds: the store cannot know it before it starts, so its
    /// certificates name `http://127.0.0.1:0/ocsp/…` and OCSP cannot reach it.
    case ephemeral
    /// A port found free just before the store starts, known from the start, so the certificates name the store's
    /// own OCSP responder. If another process takes the port meanwhile, another one is tried.
    case free
    /// Exactly this port.
    case fixed(Int)
}

/// Runs `body` against a fresh store on a fresh database of `engine` (removed afterwards), and always shuts the
/// store down and removes its data directory. The other parameters are ``withTestStore(databaseURL:clock:dataDirectory:port:serverAPIRequestsPerSecond:timeouts:_:)``'s.
public func withTestStore<T: Sendable>(
    engine: TestDatabaseEngine,
    clock: any KioskClock = SystemClock(),
    port: TestStorePort = .ephemeral,
    serverAPIRequestsPerSecond: Double = 100,
    timeouts: HTTPTimeouts = HTTPTimeouts(),
    configure: @Sendable (inout ServerConfiguration) -> Void = { _ in },
    _ body: @Sendable (TestStore) async throws -> T
) async throws -> T {
    try await engine.withFreshDatabase { url in
        try await withTestStore(
            databaseURL: url, clock: clock, port: port, serverAPIRequestsPerSecond: serverAPIRequestsPerSecond,
            timeouts: timeouts, configure: configure, body)
    }
}

/// Runs `body` against a fresh store and always shuts the store down and removes its data directory.
///
/// - Parameters:
///   - databaseURL: nil for an SQLite file in the temporary data directory, or a PostgreSQL URL (the store then
///     holds a ``PostgresTestSlots`` slot and a small pool).
///   - clock: the store's clock.
///   - dataDirectory: reuse a directory (e.g. to restart a store on the same state); it is then kept.
///   - port: `.ephemeral` (default), or `.free` / `.fixed(_:)` when the store must know its URL before it
///     starts, e.g. so verifiers with online checks reach its OCSP responder.
///   - serverAPIRequestsPerSecond: the App Store Server API's rate limit per key.
///   - timeouts: how long the store waits on a client before closing the connection.
///   - configure: changes the rest of the store's configuration (the roots it trusts when it calls out, the
///     retention messaging budget, …) before it starts.
public func withTestStore<T: Sendable>(
    databaseURL: String? = nil,
    clock: any KioskClock = SystemClock(),
    dataDirectory: URL? = nil,
    port: TestStorePort = .ephemeral,
    serverAPIRequestsPerSecond: Double = 100,
    timeouts: HTTPTimeouts = HTTPTimeouts(),
    configure: @Sendable (inout ServerConfiguration) -> Void = { _ in },
    _ body: @Sendable (TestStore) async throws -> T
) async throws -> T {
    try await withTestLoadSlot {
        try await withPostgresSlot(ifUsing: databaseURL) {
            try await runTestStore(
                databaseURL: databaseURL, clock: clock, dataDirectory: dataDirectory, port: port,
                serverAPIRequestsPerSecond: serverAPIRequestsPerSecond, timeouts: timeouts, configure: configure, body)
        }
    }
}

private func runTestStore<T: Sendable>(
    databaseURL: String?, clock: any KioskClock, dataDirectory: URL?, port: TestStorePort,
    serverAPIRequestsPerSecond: Double, timeouts: HTTPTimeouts,
    configure: @Sendable (inout ServerConfiguration) -> Void, _ body: @Sendable (TestStore) async throws -> T
) async throws -> T {
    let directory =
        dataDirectory
        ?? FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-test-\(UUID().uuidString)")
    defer { if dataDirectory == nil { try? FileManager.default.removeItem(at: directory) } }
    let token = "kiosk_test_admin_token_0123456789"
    var logger = Logger(label: "kiosk-test")
    // KIOSK_TEST_LOG_LEVEL=trace shows every SQL statement the store runs.
    logger.logLevel =
        ProcessInfo.processInfo.environment["KIOSK_TEST_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .warning
    return try await withLoopbackServer(port: port, logger: logger, name: "store") { number, onServerRunning in
        var configuration = ServerConfiguration(
            host: "127.0.0.1", port: number, dataDirectory: directory, databaseURL: databaseURL,
            databasePoolSize: PostgresTestSlots.storePoolSize, adminToken: token,
            serverAPIRequestsPerSecond: serverAPIRequestsPerSecond, timeouts: timeouts)
        configure(&configuration)
        let built = try await buildStore(
            configuration: configuration, clock: clock, logger: logger, onServerRunning: onServerRunning)
        return (built, built.application)
    } _: { built, port in
        try await body(
            TestStore(
                baseURL: "http://127.0.0.1:\(port)", port: port, adminToken: token, dataDirectory: directory,
                built: built))
    }
}

/// The test store could not start.
public struct TestStoreError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
