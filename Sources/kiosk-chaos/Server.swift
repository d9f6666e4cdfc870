import Foundation
import KioskCore
import KioskTestSupport

/// One of the two long-lived servers, the store or the merchant: started once, and started again on the same
/// port, data directory and database each time it is killed (as a supervisor would), its log appended to one file.
final class Server: @unchecked Sendable {
    let party: Party
    /// `http://127.0.0.1:<port>`, the same across restarts.
    let url: String
    private let command: [String]
    private let arguments: [String]
    private let log: URL
    private let executable: URL
    private let lock = NSLock()
    private var running: ServeProcess?
    private var startCount = 0

    init(party: Party, port: Int, command: [String], arguments: [String], log: URL, executable: URL) {
        self.party = party
        url = "http://127.0.0.1:\(port)"
        self.command = command
        self.arguments = ["--host", "127.0.0.1", "--port", String(port)] + arguments
        self.log = log
        self.executable = executable
    }

    private var current: ServeProcess? { lock.withLock { running } }

    /// The path prefix the app's proxy sends to this server (nil: every path no other server takes).
    var routePrefix: String? { party == .merchant ? "/merchant/" : nil }

    var isRunning: Bool { current?.isRunning ?? false }

    /// How many times it was started.
    var starts: Int { lock.withLock { startCount } }

    /// Starts it and waits until it listens; with `crashAt` (`step` or `step#n`) armed to kill itself there.
    func start(crashAt: String? = nil) async throws {
        let environment = crashAt.map { [CrashPoint.environmentVariable: $0] } ?? [:]
        let process = try await ServeProcess.listening(
            command: command, arguments, environment: environment, log: log, executable: executable)
        lock.withLock {
            running = process
            startCount += 1
        }
    }

    /// SIGKILL, as `kill -9` from outside.
    func kill() { current?.kill() }

    /// Waits until the process is gone (killed, or dead at its crash point).
    func waitUntilDead() async throws {
        guard let process = current else { return }
        _ = try await process.waitForExit(seconds: 60)
    }

    /// Stops it gracefully (SIGTERM) and waits.
    func stop() async throws {
        guard let process = current, process.isRunning else { return }
        _ = try await process.terminate()
    }

    /// Stops it gracefully and starts it again, armed with `crashAt` or not.
    func restart(crashAt: String?) async throws {
        try await stop()
        try await start(crashAt: crashAt)
    }
}
