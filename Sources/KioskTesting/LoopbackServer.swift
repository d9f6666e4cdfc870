import Foundation
import KioskTestSupport
import Logging
import NIOCore
import ServiceLifecycle

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Builds a server on 127.0.0.1 and the port `port` asks for, runs it in a service group of its own while `body`
/// runs, then stops it the way SIGTERM does (gracefully: its database closes after the server). `.free` ports
/// another process took meanwhile are retried with another.
///
/// `build` gets the port to bind (0: any) and the callback to hand the server, which reports the bound port; it
/// returns what was built and the service to run. Tests use it for the servers they stand up beside a store
/// (a notification receiver, a retention endpoint).
public func withLoopbackServer<Built: Sendable, T: Sendable>(
    port: TestStorePort, logger: Logger, name: String,
    build: (_ port: Int, _ onServerRunning: @escaping @Sendable (Int) async -> Void) async throws -> (
        Built, any Service
    ),
    _ body: (Built, Int) async throws -> T
) async throws -> T {
    func run(_ requestedPort: Int) async throws -> T {
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let (built, service) = try await build(requestedPort) { port in
            portContinuation.yield(port)
            portContinuation.finish()
        }
        let serviceGroup = ServiceGroup(
            configuration: .init(services: [service], gracefulShutdownSignals: [], logger: logger))
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
                    throw TestStoreError(message: "The \(name) stopped before it listened.")
                }
                let result = try await body(built, port)
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

/// Another process took the port between choosing it and binding it.
struct TestStoreBindError: Error {
    var port: Int
}
