import Foundation
import KioskTestSupport
import KioskTesting
import Testing

/// What a first `kiosk serve` prints before its banner, read as a person does: the schema's migrations as one log
/// line rather than one each, and a PostgreSQL password masked readably rather than percent-encoded.
@Suite(.runsServers) struct FirstStartTests {
    @Test func migrationsAreOneLineBeforeTheBanner() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kiosk-first-start-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("stderr.log")
        let store = try ServeProcess(
            ["--port", "0", "--data-dir", directory.appendingPathComponent("data").path], log: log)
        _ = try await store.waitForLine(containing: "listening on http://")
        #expect(try await store.terminate() == 0)
        Self.expectOneMigrationLine(try String(contentsOf: log, encoding: .utf8))
    }

    @Test(.enabled(if: TestEnvironment.runs(.postgreSQL), "needs PostgreSQL (KIOSK_TEST_POSTGRES_URL)"))
    func theBannerMasksTheDatabasePasswordReadably() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kiosk-first-start-pg-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await TestDatabaseEngine.postgres.withFreshDatabase { databaseURL in
            let databaseURL = try #require(databaseURL)
            let password = try #require(URLComponents(string: databaseURL)?.password, "the test URL has a password")
            let store = try ServeProcess(["--port", "0", "--data-dir", directory.path, "--database", databaseURL])
            _ = try await store.waitForLine(containing: "listening on http://")
            let banner = try #require(store.lines.first { $0.hasPrefix("Database:") })
            #expect(try await store.terminate() == 0)
            Self.expectMasked(banner, password: password)
        }
    }

    /// Checks the log holds one line about migrations, the summary of all of them.
    static func expectOneMigrationLine(_ log: String) {
        let lines = log.split(separator: "\n").filter { $0.contains("migration") }
        #expect(lines.count == 1, "one line for the whole schema: \(lines)")
        #expect(lines.first?.contains("applied ") == true && lines.first?.contains(" migrations") == true, "\(lines)")
    }

    /// Checks the banner's database line shows the password as bullets, not percent-encoded, and never itself.
    static func expectMasked(_ banner: String, password: String) {
        #expect(banner.contains(":•••@"), "\(banner)")
        #expect(!banner.contains("%E2%80%A2") && !banner.contains(":\(password)@"), "\(banner)")
    }
}
