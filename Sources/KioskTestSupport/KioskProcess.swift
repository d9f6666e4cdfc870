import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs the built `kiosk` executable (or another one SwiftPM built beside it) as a user would, capturing what it
/// prints.
public enum KioskProcess {
    /// The `kiosk` binary SwiftPM built next to the running test bundle or tool.
    public static var executable: URL { builtExecutable(named: "kiosk") }

    /// The executable `name` SwiftPM built beside the running test bundle or tool (`kiosk`, `coin-shop`,
    /// `kiosk-chaos`), else in `.build/debug` of this checkout.
    public static func builtExecutable(named name: String) -> URL {
        let candidates = [
            Bundle.main.bundleURL.appendingPathComponent(name),
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(name),
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent(".build/debug/\(name)"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }

    /// How a run ended and what it printed.
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
        /// The signal that ended the process (`status` is then the signal's number), nil if it exited.
        public var signal: Int32?
    }

    /// Runs `executable <arguments>` to completion with a clean `KIOSK_*` environment plus `environment`;
    /// `onStart` gets the process id as soon as it runs (a fault test's proxy kills it by that id). A process still
    /// running after `timeout` seconds is stopped (SIGTERM): by default 300 s, a safety net past every timeout the
    /// programs keep themselves (coin-shop's 120 s per request), so it is the program, not the harness, that decides
    /// when a slow store has failed it.
    ///
    /// Waiting happens on dispatch threads, never on Swift concurrency's few cooperative threads: a store under
    /// test in the same process answers the command on those, so blocking one could starve it.
    public static func run(
        _ arguments: [String], environment: [String: String] = [:], executable: URL = KioskProcess.executable,
        timeout: Double = 300, onStart: @escaping @Sendable (Int32) -> Void = { _ in }
    ) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                let process: ChildProcess
                do {
                    process = try ChildProcess(
                        executable: executable, arguments: arguments, environment: cleanEnvironment(adding: environment)
                    )
                } catch {
                    continuation.resume(throwing: error)
                    return
                }
                onStart(process.processIdentifier)
                let readers = DispatchGroup()
                let collected = Collected()
                DispatchQueue.global().async(group: readers) {
                    collected.stdout = process.standardOutput.readDataToEndOfFile()
                }
                DispatchQueue.global().async(group: readers) {
                    collected.stderr = process.standardError?.readDataToEndOfFile() ?? Data()
                }
                if readers.wait(timeout: .now() + timeout) == .timedOut { process.send(SIGTERM) }
                readers.wait()
                let ended = process.waitForExit()
                continuation.resume(
                    returning: Result(
                        status: ended.status, stdout: String(decoding: collected.stdout, as: UTF8.self),
                        stderr: String(decoding: collected.stderr, as: UTF8.self), signal: ended.signal))
            }
        }
    }

    /// This process's environment without any `KIOSK_*` variable, plus `environment`.
    static func cleanEnvironment(adding environment: [String: String]) -> [String: String] {
        ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("KIOSK_") }.merging(environment) { $1 }
    }

    /// What a process printed, filled in by reader threads.
    private final class Collected: @unchecked Sendable {
        var stdout = Data()
        var stderr = Data()
    }
}

/// A server the `kiosk` binary runs (`kiosk serve`, `kiosk merchant serve`), read line by line while it runs.
/// Spawned with `posix_spawn` (``ChildProcess``), not Foundation's `Process`, whose start crashes now and then.
public final class ServeProcess: @unchecked Sendable {
    private let child: ChildProcess
    /// The sub-command, e.g. `["serve"]`, for messages.
    private let command: [String]
    private let lock = NSLock()
    private var output: [String] = []
    private var errors: [String] = []

    /// Starts `kiosk <command> <arguments>` with a clean `KIOSK_*` environment plus `environment` (e.g.
    /// `KIOSK_CRASH_AT`, which makes it kill itself at a named step); its log (standard error) is appended to `log`
    /// if given, as a supervisor would keep it across restarts, else kept for the error a failed wait reports.
    public init(
        command: [String] = ["serve"], _ arguments: [String], environment: [String: String] = [:], log: URL? = nil,
        executable: URL = KioskProcess.executable
    ) throws {
        self.command = command
        child = try ChildProcess(
            executable: executable, arguments: command + arguments,
            environment: KioskProcess.cleanEnvironment(adding: environment), standardErrorFile: log)
        read(child.standardOutput) { [self] line in lock.withLock { output.append(line) } }
        if let errors = child.standardError {
            read(errors) { [self] line in lock.withLock { self.errors.append(line) } }
        }
    }

    /// Starts a server that listens on a port fixed in `arguments` and waits (at most `seconds`) until it says it
    /// listens. A port another process holds for a moment (a killed predecessor's, not yet released) makes the
    /// server exit at once; that start is tried again, five times in all.
    public static func listening(
        command: [String] = ["serve"], _ arguments: [String], environment: [String: String] = [:], log: URL? = nil,
        executable: URL = KioskProcess.executable, seconds: Double = 120
    ) async throws -> ServeProcess {
        var attempt = 0
        while true {
            attempt += 1
            let server = try ServeProcess(
                command: command, arguments, environment: environment, log: log, executable: executable)
            do {
                _ = try await server.baseURL(seconds: seconds)
                return server
            } catch  where attempt < 5 && !server.isRunning {
                try await Task.sleep(for: .milliseconds(500))
            } catch {
                // Never leave a server that did not come up running behind the caller's back.
                server.kill()
                throw error
            }
        }
    }

    /// Reads `handle` line by line on a thread of its own until it closes.
    private func read(_ handle: FileHandle, _ take: @escaping @Sendable (String) -> Void) {
        Thread.detachNewThread {
            var pending = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    take(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                    pending.removeSubrange(pending.startIndex...newline)
                }
            }
        }
    }

    /// Every line printed so far.
    public var lines: [String] { lock.withLock { output } }

    public var processIdentifier: Int32 { child.processIdentifier }
    public var isRunning: Bool { child.exit == nil }

    /// Waits (at most `seconds`) for a line containing `text` and returns it.
    public func waitForLine(containing text: String, seconds: Double = 120) async throws -> String {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if let line = lines.first(where: { $0.contains(text) }) { return line }
            if !isRunning || Date() >= deadline { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        // Once more after the deadline or the exit: the line may have arrived meanwhile.
        if let line = lines.first(where: { $0.contains(text) }) { return line }
        let ended = child.exit.map { "ended with status \($0.status)" } ?? "still running"
        let printed = lock.withLock { (output + ["-- standard error:"] + errors.suffix(30)) }
        throw ServeError(
            message: "kiosk \(command.joined(separator: " ")) printed no line containing '\(text)' (\(ended)):\n"
                + printed.joined(separator: "\n"))
    }

    /// The URL the server printed it listens on, `http://…` or `https://…` (start it with `--port 0`: the kernel
    /// picks a free port, which no other test can take meanwhile).
    public func baseURL(seconds: Double = 120) async throws -> String {
        let listening = try await waitForLine(containing: " listening on http", seconds: seconds)
        guard let url = listening.split(separator: " ").last.map(String.init) else {
            throw ServeError(message: "No URL in '\(listening)'")
        }
        return url
    }

    /// Waits (at most `seconds`) for the process to end by itself and returns its status (the signal's number if a
    /// signal ended it).
    public func waitForExit(seconds: Double = 60) async throws -> Int32 {
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
        guard let exit = child.exit else {
            throw ServeError(message: "kiosk \(command.joined(separator: " ")) did not end within \(seconds) s")
        }
        return exit.status
    }

    /// Whether a signal ended the process (SIGKILL from outside or from its crash point).
    public var wasKilled: Bool { child.exit?.signal != nil }

    /// Sends SIGKILL: no cleanup, no flush, no answer.
    public func kill() {
        child.send(SIGKILL)
    }

    /// Sends SIGKILL and blocks until the process is gone (for a `defer`, which cannot wait asynchronously; a
    /// killed process ends within milliseconds).
    public func killAndWait() {
        child.send(SIGKILL)
        _ = child.waitForExit()
    }

    /// Sends `signal` while the process runs (SIGSTOP and SIGCONT pause and resume it).
    public func send(_ signal: Int32) {
        child.send(signal)
    }

    /// Sends SIGTERM and waits (at most `seconds`) for the exit status.
    public func terminate(seconds: Double = 30) async throws -> Int32 {
        child.send(SIGTERM)
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        guard let exit = child.exit else {
            kill()
            throw ServeError(
                message: "kiosk \(command.joined(separator: " ")) did not stop within \(seconds) s of SIGTERM")
        }
        return exit.status
    }

    public struct ServeError: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }
}
