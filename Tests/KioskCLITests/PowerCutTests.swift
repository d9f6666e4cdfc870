import Foundation
import KioskTestSupport
import KioskTesting
import Testing

/// Power cuts: the store's and the merchant's data on `scripts/lazyfs.py`, a FUSE layer that loses everything not
/// yet fsynced when the power is cut. First that the layer bites (a write never fsynced is gone after a cut, an
/// fsynced one is not, so a lost `fsync` would be caught); then `kiosk-chaos --power-cut` on each engine: every
/// purchase the store answered and every grant the merchant acknowledged must survive the cuts, and every charged
/// payment must still be granted exactly once.
@Suite(.runsServers) struct PowerCutTests {
    static let lazyFS = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/lazyfs.py")
    /// Two cuts in each step on SQLite, one on PostgreSQL (whose restart is a crash recovery of ~10 s); fixed, so a
    /// failure is replayed by `kiosk-chaos --power-cut --trials 8 --seed 3607` (`--trials 4 … --postgres-bin …`).
    static func cuts(_ engine: TestDatabaseEngine) -> Int { engine == .postgres ? 4 : 8 }
    static let seed = 3607

    @Test(.enabled(if: TestEnvironment.runs(.fusePython), "set KIOSK_TEST_FUSE_PYTHON (.ci/run does)"))
    func aCutLosesWhatWasNeverFsyncedAndKeepsWhatWas() async throws {
        let python = try TestEnvironment.require(.fusePython)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lazyfs-\(UUID().uuidString)")
        let disk = folder.appendingPathComponent("disk")
        let mount = folder.appendingPathComponent("mount")
        let control = folder.appendingPathComponent("control.sock")
        for directory in [disk, mount] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        let daemon = try ServeProcess(
            command: [], [Self.lazyFS.path, "mount", disk.path, mount.path, "--control", control.path],
            log: folder.appendingPathComponent("lazyfs.log"), executable: URL(fileURLWithPath: python))
        defer {
            daemon.send(SIGTERM)
            _ = try? FileManager.default.removeItem(at: folder)
        }
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: control.path) && daemon.isRunning && Date() < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let log = (try? String(contentsOf: folder.appendingPathComponent("lazyfs.log"), encoding: .utf8)) ?? ""
        try #require(FileManager.default.fileExists(atPath: control.path), "lazyfs.py did not mount: \(log)")

        try write("never fsynced", to: mount.appendingPathComponent("lost"), fsync: false)
        try write("fsynced", to: mount.appendingPathComponent("kept"), fsync: true)
        try write("fsynced", to: mount.appendingPathComponent("appended"), fsync: true)
        try write(", then more", to: mount.appendingPathComponent("appended"), fsync: false, append: true)
        // SQLite's log is synced through a descriptor opened only for that, read-only (`SQLiteLogSync`).
        try write("fsynced read-only", to: mount.appendingPathComponent("synced elsewhere"), fsync: false)
        let readOnly = try FileHandle(forReadingFrom: mount.appendingPathComponent("synced elsewhere"))
        try readOnly.synchronize()
        try readOnly.close()
        #expect(try read(mount.appendingPathComponent("lost")) == "never fsynced", "written, readable before the cut")
        #expect(try read(mount.appendingPathComponent("appended")) == "fsynced, then more")

        let cut = try await KioskProcess.run(
            [Self.lazyFS.path, "cut", "--control", control.path], executable: URL(fileURLWithPath: python))
        #expect(cut.status == 0, "\(cut.stderr)")
        #expect(
            cut.stdout == "discarded 2 unsynced page(s) of 2 file(s); 3 fsync(s) since the last cut\n", "\(cut.stdout)")
        // Creating a file is durable at once (the optimistic side); its unsynced data is not.
        #expect(try read(mount.appendingPathComponent("lost")) == "")
        #expect(try read(mount.appendingPathComponent("kept")) == "fsynced")
        #expect(try read(mount.appendingPathComponent("appended")) == "fsynced")
        #expect(try read(mount.appendingPathComponent("synced elsewhere")) == "fsynced read-only")
        #expect(try await daemon.terminate() == 0)
    }

    /// The time limit counts the wait for a test load slot too (as `KillCampaignTests`' does): in a full run on two
    /// cores the campaign may start minutes after the test did.
    @Test(
        .timeLimit(.minutes(20)),
        .enabled(if: TestEnvironment.runs(.fusePython), "set KIOSK_TEST_FUSE_PYTHON (.ci/run does)"),
        arguments: TestEnvironment.runs(.postgresPrograms) ? TestDatabaseEngine.allCases : [.sqlite])
    func powerCutsLoseNothingAcknowledged(engine: TestDatabaseEngine) async throws {
        let python = try TestEnvironment.require(.fusePython)
        var arguments = [
            "--power-cut", "--trials", String(Self.cuts(engine)), "--seed", String(Self.seed), "--fuse-python", python,
            "--lazyfs", Self.lazyFS.path,
        ]
        if engine == .postgres { arguments += ["--postgres-bin", try TestEnvironment.require(.postgresPrograms)] }
        let run = try await KioskProcess.run(
            arguments, executable: KioskProcess.builtExecutable(named: "kiosk-chaos"), timeout: 540)
        let output = run.stdout + run.stderr
        #expect(run.status == 0, "\(output)")
        let cuts = Self.cuts(engine)
        #expect(output.contains("kiosk-chaos report: \(cuts) of \(cuts) trials"), "\(output)")
        #expect(output.contains("\nkilled: machine \(cuts)\n"), "\(output)")
        // Before any cut, each of the 3 customers bought coins and one subscribed: 4 answered purchases at least.
        let answered = try #require(
            output.split(separator: "\n").first { $0.hasPrefix("answered purchases: ") }, "\(output)")
        let purchases = Int(answered.split(separator: " ")[2].dropLast()) ?? 0
        #expect(purchases >= 4, "\(answered)")
        for line in [
            "lost answered purchases: 0", "lost acknowledged grants: 0", "lost grants: 0", "duplicated grants: 0",
            "other violations: 0",
        ] {
            #expect(output.contains("\n\(line)\n"), "\(output)")
        }
    }

    private func write(_ text: String, to file: URL, fsync: Bool, append: Bool = false) throws {
        if !append { try Data().write(to: file) }
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
        if fsync { try handle.synchronize() }
    }

    private func read(_ file: URL) throws -> String {
        String(decoding: try Data(contentsOf: file), as: UTF8.self)
    }
}
