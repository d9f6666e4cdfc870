import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An HTTP proxy on 127.0.0.1 between a client process (the coin shop) and its servers (the store, and the
/// merchant for paths under a prefix), which kills the client with SIGKILL at the first request its rule names:
/// before forwarding it, or once the server has answered it (the answer is then never relayed). The kill follows
/// the protocol, not a timer, so it lands at exactly that step.
///
/// It is also the client's one stable address while a server behind it is killed and started again: the request
/// the server died under gets 502, as from a load balancer whose server went away; once the server takes no new
/// request (its `/health`), the client's retries to it wait at the proxy until it answers again or
/// ``forward(prefix:to:)`` names its successor, so how long it was down does not matter.
public final class KillingProxy: Sendable {
    /// When, around the request the rule names, the client dies.
    public enum Moment: Sendable {
        /// The server never sees the request.
        case beforeForwarding
        /// The server handled the request; the client never sees the answer.
        case afterAnswer
    }

    /// Decides, for each request (`METHOD`, path) that passes until the client is killed, whether it is the one
    /// to kill the client at.
    public typealias Rule = @Sendable (_ method: String, _ path: String) -> Moment?

    /// Hears each request the proxy relayed an answer to (not an event stream): `METHOD`, path, the request's
    /// body, the answer's status and body, once the whole answer is on its way back to the client.
    public typealias Observer =
        @Sendable (_ method: String, _ path: String, _ request: Data, _ status: Int, _ answer: Data)
        -> Void

    /// `http://127.0.0.1:<port>`: give it to the client as its server (and as its merchant, with routes).
    public let url: String
    /// The path prefixes that go to a server of their own, longest first; every other path goes to the server
    /// under the key "".
    private let prefixes: [String]
    private let state: Mutex<State>

    private struct State {
        /// The server behind each prefix, and whether it is down (it failed to answer, and took no new request).
        var upstreams: [String: String]
        var down: Set<String> = []
        /// Every request waits before it is forwarded (``hold()``).
        var held = false
        var observer: Observer?
        var rule: Rule?
        var client: Int32?
        var killedAt: String?
        /// Requests received whose server has not answered yet (or failed to).
        var unanswered = 0
        /// The event streams being relayed to the current client.
        var relays: [Task<Void, Never>] = []
    }

    fileprivate init(url: String, upstream: String, routes: [String: String], rule: Rule?) {
        self.url = url
        prefixes = routes.keys.sorted { $0.count > $1.count }
        state = Mutex(State(upstreams: routes.merging(["": upstream]) { $1 }, rule: rule))
    }

    /// The key of the server a path goes to.
    fileprivate func route(of path: String) -> String {
        prefixes.first { path.hasPrefix($0) } ?? ""
    }

    /// Where requests to the server of `prefix` (nil: the store, every path no prefix takes) go from now on: a
    /// server started again, on the same port or another; requests held meanwhile go there.
    public func forward(prefix: String? = nil, to upstream: String) {
        state.withLock { state in
            state.upstreams[prefix ?? ""] = upstream
            state.down.remove(prefix ?? "")
        }
    }

    /// Holds every request from now until ``release()``: none reaches a server meanwhile (a power cut's check
    /// reads the servers before anyone could write to them again).
    public func hold() { state.withLock { $0.held = true } }

    /// Lets the held requests through.
    public func release() { state.withLock { $0.held = false } }

    /// The observer of the answers from now on (nil: none).
    public func observe(_ observer: Observer?) { state.withLock { $0.observer = observer } }

    fileprivate var observer: Observer? { state.withLock { $0.observer } }

    /// The server of `route`; while it is down, waits until ``forward(prefix:to:)`` names one or (looking every
    /// half second) it answers `isUp` again, and while requests are held, until ``release()``.
    fileprivate func upstream(_ route: String, isUp: (String) async -> Bool) async -> String {
        var polls = 0
        while true {
            let (upstream, down, held) = state.withLock {
                ($0.upstreams[route] ?? "", $0.down.contains(route), $0.held)
            }
            if held {
                try? await Task.sleep(for: .milliseconds(20))
                continue
            }
            if !down { return upstream }
            polls += 1
            if polls % 25 == 0, await isUp(upstream) {
                state.withLock { _ = $0.down.remove(route) }
            } else {
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// The server at `upstream` failed to answer and takes no new request: it is down until it is back.
    fileprivate func lost(_ upstream: String, route: String) {
        state.withLock { state in
            if state.upstreams[route] == upstream { state.down.insert(route) }
        }
    }

    /// The client process to kill; set it as soon as the process runs. A new client starts with no kill.
    public func watch(_ pid: Int32) {
        state.withLock { state in
            state.client = pid
            state.killedAt = nil
        }
    }

    /// Forgets the client process (before the next one starts), so no kill can reach a process that ended, and
    /// ends the event streams relayed to it: a client that died cannot close them, and the proxy would otherwise
    /// learn of it only at the stream's next event.
    public func unwatch() {
        let relays = state.withLock { state in
            state.client = nil
            state.killedAt = nil
            defer { state.relays = [] }
            return state.relays
        }
        for relay in relays { relay.cancel() }
    }

    /// Relays a server-sent events stream until it ends, its client goes away, or ``unwatch()``.
    fileprivate func relay(_ body: HTTPClientResponse.Body) -> AsyncStream<ByteBuffer> {
        let (stream, continuation) = AsyncStream.makeStream(of: ByteBuffer.self)
        let relay = Task {
            do {
                for try await chunk in body { continuation.yield(chunk) }
            } catch {}
            continuation.finish()
        }
        continuation.onTermination = { _ in relay.cancel() }
        state.withLock { $0.relays.append(relay) }
        return stream
    }

    /// The rule for the requests from now on (nil: kill nobody).
    public func arm(_ rule: Rule?) { state.withLock { $0.rule = rule } }

    /// The request (`METHOD /path`) at which the watched client was killed, nil while it lives.
    public var killedAt: String? { state.withLock { $0.killedAt } }

    /// Whether every request received so far has been answered by its server (or failed to be): once the client
    /// is gone too, nothing of it can still change a server's state.
    public var isQuiet: Bool { state.withLock { $0.unanswered == 0 } }

    /// The moment the rule names for this request, if the client is not dead yet.
    fileprivate func moment(_ method: String, _ path: String) -> Moment? {
        let rule = state.withLock { $0.killedAt == nil ? $0.rule : nil }
        return rule?(method, path)
    }

    /// Kills the watched client once; later calls do nothing.
    fileprivate func kill(at request: String) {
        state.withLock { state in
            guard state.killedAt == nil, let pid = state.client else { return }
            state.killedAt = request
            #if canImport(Glibc)
                _ = Glibc.kill(pid, SIGKILL)
            #else
                _ = Darwin.kill(pid, SIGKILL)
            #endif
        }
    }

    fileprivate func counting<T>(_ body: () async throws -> T) async rethrows -> T {
        state.withLock { $0.unanswered += 1 }
        defer { state.withLock { $0.unanswered -= 1 } }
        return try await body()
    }
}

/// Runs `body` with a ``KillingProxy`` to `upstream` that kills its client at the first request for which
/// `killAt(method, path)` answers a moment (never, if it answers nil every time); every other request (and every
/// request after the kill) is forwarded, answers streamed back as they come (the store's server-sent events
/// included).
public func withKillingProxy<T: Sendable>(
    to upstream: String, killAt: @escaping KillingProxy.Rule, _ body: @Sendable (KillingProxy) async throws -> T
) async throws -> T {
    try await withKillingProxy(to: upstream, routes: [:], killAt: killAt, body)
}

/// ``withKillingProxy(to:killAt:_:)`` with `routes`: paths starting with a key go to its upstream (the merchant's
/// `/merchant/`), the rest to `upstream`; the rule can be changed per client with ``KillingProxy/arm(_:)``.
public func withKillingProxy<T: Sendable>(
    to upstream: String, routes: [String: String], killAt: KillingProxy.Rule?,
    _ body: @Sendable (KillingProxy) async throws -> T
) async throws -> T {
    var logger = Logger(label: "killing-proxy")
    logger.logLevel = .critical
    // A server that is down refuses at once (502 to the client) instead of being retried until the deadline.
    var configuration = HTTPClient.Configuration()
    configuration.connectionPool.retryConnectionEstablishment = false
    // Event streams hold their connections until they end: room for them beside the requests.
    configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
    let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    defer { _ = client.shutdown() }
    let router = Router()
    let proxies = Mutex<KillingProxy?>(nil)
    let isUp: @Sendable (String) async -> Bool = { upstream in
        (try? await client.execute(HTTPClientRequest(url: upstream + "/health"), timeout: .seconds(10))) != nil
    }
    let forward: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, context in
        guard let proxy = proxies.withLock({ $0 }) else { return Response(status: .serviceUnavailable) }
        return try await proxy.counting {
            let name = "\(request.method) \(request.uri.path)"
            let moment = proxy.moment(request.method.rawValue, request.uri.path)
            if moment == .beforeForwarding {
                proxy.kill(at: name)
                return Response(status: .serviceUnavailable)
            }
            let route = proxy.route(of: request.uri.path)
            let upstream = await proxy.upstream(route, isUp: isUp)
            var forwarded = HTTPClientRequest(url: upstream + request.uri.string)
            forwarded.method = .init(rawValue: request.method.rawValue)
            for field in request.headers where field.name != .connection {
                forwarded.headers.add(name: field.name.rawName, value: field.value)
            }
            // A connection of its own per request: a server killed and started again leaves no pooled connection
            // behind that a later request could fail on.
            forwarded.headers.add(name: "Connection", value: "close")
            let payload = try await request.body.collect(upTo: 16 * 1024 * 1024)
            if payload.readableBytes > 0 { forwarded.body = .bytes(payload) }
            let answer: HTTPClientResponse
            do {
                answer = try await client.execute(forwarded, timeout: .seconds(600))
            } catch {
                // Down only if it takes no new request: a dropped keep-alive connection, or a client that went
                // away (its request cancelled), says nothing about the server.
                if !Task.isCancelled, await !isUp(upstream) { proxy.lost(upstream, route: route) }
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
            let isEventStream = answer.headers["content-type"].contains { $0.hasPrefix("text/event-stream") }
            if !isEventStream, let observer = proxy.observer {
                let body = try await answer.body.collect(upTo: 16 * 1024 * 1024)
                observer(
                    request.method.rawValue, request.uri.path, Data(payload.readableBytesView), Int(answer.status.code),
                    Data(body.readableBytesView))
                return Response(
                    status: .init(code: Int(answer.status.code)), headers: headers, body: .init(byteBuffer: body))
            }
            return Response(
                status: .init(code: Int(answer.status.code)), headers: headers,
                body: isEventStream
                    ? ResponseBody(asyncSequence: proxy.relay(answer.body)) : ResponseBody(asyncSequence: answer.body))
        }
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
        guard let port = await iterator.next() else {
            throw TestStoreError(message: "The killing proxy did not start.")
        }
        let proxy = KillingProxy(url: "http://127.0.0.1:\(port)", upstream: upstream, routes: routes, rule: killAt)
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
