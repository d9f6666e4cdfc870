import Foundation
import Testing

/// Runs the built `kiosk` executable as a user would, capturing what it prints.
enum KioskProcess {
    /// The `kiosk` binary SwiftPM built next to the test bundle.
    static var executable: URL {
        let candidates = [
            Bundle.main.bundleURL.appendingPathComponent("kiosk"),
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("kiosk"),
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent(".build/debug/kiosk"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        /// The signal that ended the process (`status` is then the signal's number), nil if it exited.
        var signal: Int32?
    }

    /// Runs `kiosk <arguments>` to completion with a clean `KIOSK_*` environment plus `environment`; `onStart` gets
    /// the process id as soon as it runs (a fault test's proxy kills it by that id). A process still running after
    /// 300 s is stopped: a safety net past every timeout the programs keep themselves (coin-shop's 120 s per
    /// request), so it is the program, not the harness, that decides when a slow store has failed it.
    ///
    /// Waiting happens on dispatch threads, never on Swift concurrency's few cooperative threads: the store under
    /// test answers the command on those, so blocking one could starve it.
    static func run(
        _ arguments: [String], environment: [String: String] = [:], executable: URL = KioskProcess.executable,
        onStart: @escaping @Sendable (Int32) -> Void = { _ in }
    ) async throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var base = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("KIOSK_") }
        base.merge(environment) { $1 }
        process.environment = base
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                do {
                    try process.run()
                } catch {
                    continuation.resume(throwing: error)
                    return
                }
                onStart(process.processIdentifier)
                let readers = DispatchGroup()
                let collected = Collected()
                DispatchQueue.global().async(group: readers) {
                    collected.stdout = out.fileHandleForReading.readDataToEndOfFile()
                }
                DispatchQueue.global().async(group: readers) {
                    collected.stderr = err.fileHandleForReading.readDataToEndOfFile()
                }
                if readers.wait(timeout: .now() + 300) == .timedOut { process.terminate() }
                readers.wait()
                process.waitUntilExit()
                continuation.resume(
                    returning: Result(
                        status: process.terminationStatus, stdout: String(decoding: collected.stdout, as: UTF8.self),
                        stderr: String(decoding: collected.stderr, as: UTF8.self),
                        signal: process.terminationReason == .uncaughtSignal ? process.terminationStatus : nil))
            }
        }
    }

    /// What a process printed, filled in by reader threads.
    private final class Collected: @unchecked Sendable {
        var stdout = Data()
        var stderr = Data()
    }
}

/// A server the `kiosk` binary runs (`kiosk serve`, `kiosk merchant serve`), read line by line while it runs.
final class ServeProcess: @unchecked Sendable {
    let process = Process()
    /// The sub-command, e.g. `["serve"]`, for messages.
    private let command: [String]
    private let lock = NSLock()
    private var output: [String] = []
    private var errors: [String] = []
    private let reader = DispatchGroup()

    /// Starts `kiosk <command> <arguments>` with a clean `KIOSK_*` environment plus `environment` (e.g.
    /// `KIOSK_CRASH_AT`, which makes it kill itself at a named step); its log (standard error) goes to `log` if
    /// given, as a supervisor would keep it, else into the error a failed wait reports.
    init(
        command: [String] = ["serve"], _ arguments: [String], environment: [String: String] = [:], log: URL? = nil
    ) throws {
        self.command = command
        process.executableURL = KioskProcess.executable
        process.arguments = command + arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("KIOSK_") }
            .merging(environment) { $1 }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        if let log {
            FileManager.default.createFile(atPath: log.path, contents: nil)
            process.standardError = try FileHandle(forWritingTo: log)
        } else {
            process.standardError = err
        }
        try process.run()
        read(out) { [self] line in lock.withLock { output.append(line) } }
        if log == nil { read(err) { [self] line in lock.withLock { errors.append(line) } } }
    }

    /// Reads `pipe` line by line on a dispatch thread until it closes.
    private func read(_ pipe: Pipe, _ take: @escaping @Sendable (String) -> Void) {
        DispatchQueue.global().async(group: reader) {
            var pending = Data()
            while true {
                let chunk = pipe.fileHandleForReading.availableData
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
    var lines: [String] { lock.withLock { output } }

    /// Waits (at most `seconds`) for a line containing `text` and returns it.
    func waitForLine(containing text: String, seconds: Double = 120) async throws -> String {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if let line = lines.first(where: { $0.contains(text) }) { return line }
            if !process.isRunning || Date() >= deadline { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let ended = process.isRunning ? "still running" : "ended with status \(process.terminationStatus)"
        let printed = lock.withLock { (output + ["-- standard error:"] + errors.suffix(30)) }
        throw ServeError(
            message: "kiosk \(command.joined(separator: " ")) printed no line containing '\(text)' (\(ended)):\n"
                + printed.joined(separator: "\n"))
    }

    /// The URL the server printed it listens on (start it with `--port 0`: the kernel picks a free port, which
    /// no other test can take meanwhile).
    func baseURL() async throws -> String {
        let listening = try await waitForLine(containing: "listening on http://")
        return try #require(listening.split(separator: " ").last.map(String.init), "\(listening)")
    }

    /// Waits (at most `seconds`) for the process to end by itself and returns its status (the signal's number if a
    /// signal ended it).
    func waitForExit(seconds: Double = 60) async throws -> Int32 {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        guard !process.isRunning else {
            throw ServeError(message: "kiosk \(command.joined(separator: " ")) did not end within \(seconds) s")
        }
        return process.terminationStatus
    }

    /// Sends SIGTERM and waits (at most `seconds`) for the exit status.
    func terminate(seconds: Double = 30) async throws -> Int32 {
        process.terminate()
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        guard !process.isRunning else {
            kill(process.processIdentifier, SIGKILL)
            throw ServeError(
                message: "kiosk \(command.joined(separator: " ")) did not stop within \(seconds) s of SIGTERM")
        }
        return process.terminationStatus
    }

    struct ServeError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}
