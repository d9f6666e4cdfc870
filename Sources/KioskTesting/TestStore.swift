import AsyncHTTPClient
import Foundation
import KioskCore
import KioskStore
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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
        try await sendTestRequest(
            method, baseURL + path, json: json, body: body,
            bearer: token ?? (path.hasPrefix("/admin/") ? adminToken : nil), headers: headers)
    }
}

/// Sends one request with an optional bearer token and JSON body, and collects the whole answer.
func sendTestRequest(
    _ method: HTTPMethod, _ url: String, json: [String: Any]?, body: Data?, bearer: String?,
    headers: [String: String]
) async throws -> TestStore.Answer {
    var request = HTTPClientRequest(url: url)
    request.method = method
    if let bearer { request.headers.add(name: "Authorization", value: "Bearer \(bearer)") }
    for (name, value) in headers { request.headers.add(name: name, value: value) }
    if let payload = try body ?? json.map({ try JSONSerialization.data(withJSONObject: $0) }) {
        if headers["Content-Type"] == nil { request.headers.add(name: "Content-Type", value: "application/json") }
        request.body = .bytes(ByteBuffer(bytes: payload))
    }
    // Generous: a full test run starts hundreds of stores at once, and a slow answer under that load is not
    // what a test checks.
    let response = try await HTTPClient.shared.execute(request, timeout: .seconds(120))
    let collected = try await response.body.collect(upTo: 64 * 1024 * 1024)
    return TestStore.Answer(
        status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) },
        body: Data(collected.readableBytesView))
}

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

/// Runs `body` against a fresh store and always shuts the store down and removes its data directory.
///
/// - Parameters:
///   - databaseURL: nil for an SQLite file in the temporary data directory, or a PostgreSQL URL.
///   - clock: the store's clock.
///   - dataDirectory: reuse a directory (e.g. to restart a store on the same state); it is then kept.
///   - port: `.ephemeral` (default), or `.free` / `.fixed(_:)` when the store must know its URL before it
///     starts, e.g. so verifiers with online checks reach its OCSP responder.
///   - serverAPIRequestsPerSecond: the App Store Server API's rate limit per key.
public func withTestStore<T: Sendable>(
    databaseURL: String? = nil,
    clock: any KioskClock = SystemClock(),
    dataDirectory: URL? = nil,
    port: TestStorePort = .ephemeral,
    serverAPIRequestsPerSecond: Double = 100,
    _ body: @Sendable (TestStore) async throws -> T
) async throws -> T {
    let directory =
        dataDirectory
        ?? FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-test-\(UUID().uuidString)")
    defer { if dataDirectory == nil { try? FileManager.default.removeItem(at: directory) } }
    func run(_ number: Int) async throws -> T {
        try await runTestStore(
            databaseURL: databaseURL, clock: clock, directory: directory, port: number,
            serverAPIRequestsPerSecond: serverAPIRequestsPerSecond, body)
    }
    switch port {
    case .ephemeral:
        return try await run(0)
    case .fixed(let number):
        return try await run(number)
    case .free:
        var attempt = 1
        while true {
            do {
                return try await run(try freeLoopbackPort())
            } catch is TestStoreBindError where attempt < 5 {
                attempt += 1
            }
        }
    }
}

private func runTestStore<T: Sendable>(
    databaseURL: String?, clock: any KioskClock, directory: URL, port requestedPort: Int,
    serverAPIRequestsPerSecond: Double, _ body: @Sendable (TestStore) async throws -> T
) async throws -> T {
    let token = "kiosk_test_admin_token_0123456789"
    let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
    var logger = Logger(label: "kiosk-test")
    logger.logLevel = .warning
    let built = try await buildStore(
        configuration: ServerConfiguration(
            host: "127.0.0.1", port: requestedPort, dataDirectory: directory, databaseURL: databaseURL,
            adminToken: token, serverAPIRequestsPerSecond: serverAPIRequestsPerSecond),
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
                do {
                    try await group.next()
                } catch let error as IOError where error.errnoCode == EADDRINUSE && requestedPort != 0 {
                    throw TestStoreBindError(port: requestedPort)
                }
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

/// Another process took the port between choosing it and binding it.
struct TestStoreBindError: Error {
    var port: Int
}

/// A TCP port on 127.0.0.1 that is free now: bound with port 0, read back, closed.
func freeLoopbackPort() throws -> Int {
    #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    guard descriptor >= 0 else { throw TestStoreError(message: "Cannot open a socket to find a free port.") }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
            bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
        }
    }
    guard bound else { throw TestStoreError(message: "Cannot bind 127.0.0.1:0 to find a free port.") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// The test store could not start.
public struct TestStoreError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
