import Foundation
import KioskTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// What a power-cut campaign needs beyond the kill campaign's: the LazyFS layer, and the PostgreSQL to run on it.
struct PowerCutSettings: Sendable {
    /// A Python with fusepy, and `scripts/lazyfs.py`.
    var python: URL
    var lazyFS: URL
    /// PostgreSQL's `bin` folder (`initdb`, `postgres`, `pg_isready`) and the port of the machine's own server;
    /// nil for SQLite.
    var postgres: (bin: URL, port: Int)?
}

/// The machine the store and the merchant run on in a power-cut campaign: their data on a LazyFS mount
/// (`scripts/lazyfs.py`), which keeps what was written but not fsynced in memory; with PostgreSQL, a server of its
/// own whose data directory is on the mount. A power cut kills every process on it with SIGKILL, drops what was
/// never fsynced, and starts the database again.
final class Machine: @unchecked Sendable {
    /// Where the servers keep their data: the mount.
    let root: URL
    /// What the mount keeps: the backing folder, on the real disk.
    private let disk: URL
    private let control: URL
    private let log: URL
    private let settings: PowerCutSettings
    private let postgres: PrivatePostgres?
    private var daemon: ServeProcess?

    init(_ settings: PowerCutSettings, directory: URL) {
        self.settings = settings
        root = directory.appendingPathComponent("machine")
        disk = directory.appendingPathComponent("disk")
        control = directory.appendingPathComponent("lazyfs.sock")
        log = directory.appendingPathComponent("lazyfs.log")
        postgres = settings.postgres.map {
            PrivatePostgres(
                bin: $0.bin, port: $0.port, data: directory.appendingPathComponent("machine/postgres"),
                disk: directory.appendingPathComponent("disk/postgres"),
                run: directory.appendingPathComponent("postgres-run"))
        }
    }

    /// Mounts the layer (PostgreSQL's data directory made first, straight on the disk) and starts PostgreSQL.
    func start() async throws {
        for folder in [root, disk] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        try await postgres?.initialize()
        try? FileManager.default.removeItem(at: control)
        let daemon = try ServeProcess(
            command: [], [settings.lazyFS.path, "mount", disk.path, root.path, "--control", control.path], log: log,
            executable: settings.python)
        self.daemon = daemon
        // The daemon opens its control socket once the kernel has mounted it.
        let deadline = ContinuousClock.now + .seconds(30)
        while !FileManager.default.fileExists(atPath: control.path) {
            guard daemon.isRunning, ContinuousClock.now < deadline else {
                throw ChaosError("LazyFS did not mount \(root.path); its log, \(log.path):\n\(tail(of: log))")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        try await postgres?.start()
    }

    /// The first part of a power cut: SIGKILL to PostgreSQL's processes (the caller kills the store and the
    /// merchant), and waits until they are gone.
    func killDatabase() async throws {
        try await postgres?.kill()
    }

    /// The power cut itself, once every process on the machine is dead: what was never fsynced is gone. Starts
    /// PostgreSQL again, and answers what the layer discarded.
    func cut() async throws -> String {
        let run = try await KioskProcess.run(
            [settings.lazyFS.path, "cut", "--control", control.path], executable: settings.python, timeout: 60)
        guard run.status == 0 else { throw ChaosError("lazyfs.py cut failed: \(run.stderr)\(run.stdout)") }
        try await postgres?.start()
        return run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Stops PostgreSQL and unmounts.
    func stop() async {
        try? await postgres?.kill()
        guard let daemon else { return }
        // SIGTERM: libfuse unmounts and ends; a lazy unmount is the fallback for a daemon that did not.
        _ = try? await daemon.terminate()
        if (try? String(contentsOfFile: "/proc/mounts", encoding: .utf8))?.contains(" \(root.path) ") == true {
            _ = try? await runProcess("/bin/umount", ["-l", root.path])
        }
    }

    /// Everything at once, for a campaign stopped by a signal.
    func abandon() {
        postgres?.killNow()
        daemon?.send(SIGTERM)
    }
}

/// A PostgreSQL server run as the `postgres` user on a data directory of its own (on the machine's mount), on
/// loopback; the store and the merchant reach it as `kiosk` with no password.
final class PrivatePostgres: @unchecked Sendable {
    let bin: URL
    let port: Int
    private let data: URL
    private let disk: URL
    private let run: URL
    private var server: ServeProcess?

    init(bin: URL, port: Int, data: URL, disk: URL, run: URL) {
        self.bin = bin
        self.port = port
        self.data = data
        self.disk = disk
        self.run = run
    }

    /// `postgres://kiosk@127.0.0.1:<port>/postgres`.
    var url: String { "postgres://kiosk@127.0.0.1:\(port)/postgres" }

    /// `initdb` straight onto the disk, before the mount (it needs no power cut, and is slow through one), and
    /// the folder for the socket and the log.
    func initialize() async throws {
        for folder in [disk, run] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try FileManager.default.setAttributes(
                [.ownerAccountName: "postgres", .posixPermissions: 0o700], ofItemAtPath: folder.path)
        }
        let initialized = try await asPostgres(
            "initdb", ["-D", disk.path, "-U", "kiosk", "--auth=trust", "--no-sync", "--no-instructions"])
        guard initialized.status == 0 else {
            throw ChaosError("initdb failed: \(initialized.stderr)\(initialized.stdout)")
        }
    }

    /// Starts the server and waits until it takes connections (after a cut, once its recovery ended).
    func start() async throws {
        server = try ServeProcess(
            command: [],
            [
                "--reuid=postgres", "--regid=postgres", "--init-groups", "--",
                bin.appendingPathComponent("postgres").path,
                "-D", data.path, "-p", String(port), "-k", run.path, "-c", "listen_addresses=127.0.0.1",
                "-c", "max_connections=40",
            ], log: run.appendingPathComponent("postgres.log"), executable: URL(fileURLWithPath: "/usr/bin/setpriv"))
        let deadline = ContinuousClock.now + .seconds(120)
        while true {
            let ready = try await asPostgres("pg_isready", ["-q", "-h", "127.0.0.1", "-p", String(port)])
            if ready.status == 0 { return }
            guard server?.isRunning == true, ContinuousClock.now < deadline else {
                throw ChaosError(
                    "PostgreSQL did not start; its log:\n\(tail(of: run.appendingPathComponent("postgres.log")))")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// SIGKILL to the server and every process it started, at once; waits until all are gone.
    func kill() async throws {
        let pids = killNow()
        let deadline = ContinuousClock.now + .seconds(60)
        while pids.contains(where: isAlive) {
            guard ContinuousClock.now < deadline else { throw ChaosError("PostgreSQL's processes outlived SIGKILL") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// SIGKILL to the server and its children; answers their ids.
    @discardableResult
    func killNow() -> [Int32] {
        guard let server, server.isRunning else { return [] }
        let pids = [server.processIdentifier] + children(of: server.processIdentifier)
        for pid in pids { _ = signalKill(pid) }
        return pids
    }

    private func asPostgres(_ program: String, _ arguments: [String]) async throws -> KioskProcess.Result {
        try await KioskProcess.run(
            ["--reuid=postgres", "--regid=postgres", "--init-groups", "--", bin.appendingPathComponent(program).path]
                + arguments, executable: URL(fileURLWithPath: "/usr/bin/setpriv"), timeout: 120)
    }
}

/// The processes `pid` started (its threads' children), from /proc.
private func children(of pid: Int32) -> [Int32] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    return tasks.flatMap { task in
        ((try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? "")
            .split(separator: " ").compactMap { Int32($0) }
    }
}

/// Whether `pid` still runs (a zombie, dead but not yet reaped, does not).
private func isAlive(_ pid: Int32) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
    // The state follows the command's closing parenthesis.
    return stat.split(separator: ")").last?.trimmingCharacters(in: .whitespaces).first != "Z"
}

/// The last lines of a log, for an error.
private func tail(of file: URL) -> String {
    let text = (try? String(contentsOf: file, encoding: .utf8)) ?? "(no log)"
    return text.split(separator: "\n").suffix(20).joined(separator: "\n")
}
