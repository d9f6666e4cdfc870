import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// An HTTP proxy on 127.0.0.1 between a client process (the coin shop) and the store, which kills the client with
/// SIGKILL at the first request the test names: before forwarding it, or once the store has answered it (the
/// answer is then never relayed). The kill follows the protocol, not a timer, so it lands at exactly that step.
/// It is also the client's one stable address while the store behind it is killed and started again elsewhere: the
/// request the store died under gets 502, as from a load balancer whose server went away; the client's retries wait
/// at the proxy until ``forward(to:)`` names the new store, so how long the store was down does not matter.
final class KillingProxy: Sendable {
    /// When, around the request the test names, the client dies.
    enum Moment: Sendable {
        /// The store never sees the request.
        case beforeForwarding
        /// The store handled the request; the client never sees the answer.
        case afterAnswer
    }

    /// `http://127.0.0.1:<port>`: give it to the client as its store.
    let url: String
    private let state = Mutex(State())

    private struct State {
        /// nil while the store is down.
        var upstream: String?
        var waiting: [CheckedContinuation<String, Never>] = []
        var client: Int32?
        var killedAt: String?
    }

    fileprivate init(url: String, upstream: String) {
        self.url = url
        state.withLock { $0.upstream = upstream }
    }

    /// Where requests go from now on (a store started again on another port); requests held meanwhile go there.
    func forward(to upstream: String) {
        let waiting = state.withLock { state in
            state.upstream = upstream
            defer { state.waiting = [] }
            return state.waiting
        }
        for request in waiting { request.resume(returning: upstream) }
    }

    /// The store, waiting for one while it is down.
    fileprivate func upstream() async -> String {
        await withCheckedContinuation { continuation in
            let known = state.withLock { state -> String? in
                guard let upstream = state.upstream else {
                    state.waiting.append(continuation)
                    return nil
                }
                return upstream
            }
            if let known { continuation.resume(returning: known) }
        }
    }

    /// The store at `upstream` failed to answer: it is down until ``forward(to:)``.
    fileprivate func lost(_ upstream: String) {
        state.withLock { state in
            if state.upstream == upstream { state.upstream = nil }
        }
    }

    /// The client process to kill; set it as soon as the process runs.
    func watch(_ pid: Int32) { state.withLock { $0.client = pid } }

    /// The request (`METHOD /path`) at which the client was killed, nil while it lives.
    var killedAt: String? { state.withLock { $0.killedAt } }

    /// Kills the watched client once; later calls do nothing.
    fileprivate func kill(at request: String) {
        state.withLock { state in
            guard state.killedAt == nil, let pid = state.client else { return }
            state.killedAt = request
            _ = Glibc.kill(pid, SIGKILL)
        }
    }

    fileprivate var hasKilled: Bool { killedAt != nil }
}

/// Runs `body` with a ``KillingProxy`` to `upstream` that kills its client at the first request for which
/// `killAt(method, path)` answers a moment (never, if it answers nil every time); every other request (and every
/// request after the kill) is forwarded, answers streamed back as they come (the store's server-sent events
/// included).
func withKillingProxy<T: Sendable>(
    to upstream: String, killAt: @escaping @Sendable (_ method: String, _ path: String) -> KillingProxy.Moment?,
    _ body: @Sendable (KillingProxy) async throws -> T
) async throws -> T {
    var logger = Logger(label: "killing-proxy")
    logger.logLevel = .critical
    // A store that is down refuses at once (502 to the client) instead of being retried until the deadline.
    var configuration = HTTPClient.Configuration()
    configuration.connectionPool.retryConnectionEstablishment = false
    let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    defer { _ = client.shutdown() }
    let router = Router()
    let proxies = Mutex<KillingProxy?>(nil)
    let forward: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, context in
        let proxy = try #require(proxies.withLock { $0 })
        let name = "\(request.method) \(request.uri.path)"
        let moment = proxy.hasKilled ? nil : killAt(request.method.rawValue, request.uri.path)
        if moment == .beforeForwarding {
            proxy.kill(at: name)
            return Response(status: .serviceUnavailable)
        }
        let upstream = await proxy.upstream()
        var forwarded = HTTPClientRequest(url: upstream + request.uri.string)
        forwarded.method = .init(rawValue: request.method.rawValue)
        for field in request.headers {
            forwarded.headers.add(name: field.name.rawName, value: field.value)
        }
        let payload = try await request.body.collect(upTo: 16 * 1024 * 1024)
        if payload.readableBytes > 0 { forwarded.body = .bytes(payload) }
        let answer: HTTPClientResponse
        do {
            answer = try await client.execute(forwarded, timeout: .seconds(600))
        } catch {
            proxy.lost(upstream)
            return Response(status: .badGateway)
        }
        if moment == .afterAnswer {
            _ = try await answer.body.collect(upTo: 16 * 1024 * 1024)
            proxy.kill(at: name)
            return Response(status: .serviceUnavailable)
        }
        var headers = HTTPFields()
        for (fieldName, value) in answer.headers
        where !["content-length", "transfer-encoding", "connection"].contains(fieldName.lowercased()) {
            if let field = HTTPField.Name(fieldName) { headers.append(HTTPField(name: field, value: value)) }
        }
        return Response(
            status: .init(code: Int(answer.status.code)), headers: headers,
            body: ResponseBody(asyncSequence: answer.body))
    }
    for method in [HTTPRequest.Method.get, .post, .put, .patch, .delete] {
        router.on("**", method: method, use: forward)
    }
    let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
    let application = Application(
        router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { channel in
            continuation.yield(channel.localAddress?.port ?? 0)
            continuation.finish()
        }, logger: logger)
    let group = ServiceGroup(
        configuration: .init(services: [application], gracefulShutdownSignals: [], logger: logger))
    return try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next(), "the proxy did not start")
        let proxy = KillingProxy(url: "http://127.0.0.1:\(port)", upstream: upstream)
        proxies.withLock { $0 = proxy }
        do {
            let result = try await body(proxy)
            await group.triggerGracefulShutdown()
            tasks.cancelAll()
            return result
        } catch {
            await group.triggerGracefulShutdown()
            tasks.cancelAll()
            throw error
        }
    }
}
