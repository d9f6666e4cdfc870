import Foundation
import KioskTestSupport
import Testing

@testable import KioskSQL

/// How database URLs are read, and how bad ones are refused.
@Suite("Database URLs")
struct DatabaseLocationTests {
    static let valid: [(String, DatabaseLocation)] = [
        ("sqlite:///var/lib/kiosk/kiosk.sqlite", .sqliteFile(path: "/var/lib/kiosk/kiosk.sqlite")),
        ("sqlite://data/kiosk.sqlite", .sqliteFile(path: "data/kiosk.sqlite")),
        ("kiosk.sqlite", .sqliteFile(path: "kiosk.sqlite")),
        ("/tmp/k.sqlite", .sqliteFile(path: "/tmp/k.sqlite")),
        ("sqlite::memory:", .sqliteMemory),
        (
            "postgres://kiosk:kiosk@127.0.0.1:5432/kiosk",
            .postgres(
                .init(
                    host: "127.0.0.1", port: 5432, username: "kiosk", password: "kiosk", database: "kiosk",
                    sslMode: "disable", schema: nil))
        ),
        (
            "postgresql://user:p%40ss@db.example.com/store?sslmode=disable&schema=kiosk_a",
            .postgres(
                .init(
                    host: "db.example.com", port: 5432, username: "user", password: "p@ss", database: "store",
                    sslMode: "disable", schema: "kiosk_a"))
        ),
        (
            "postgres://user@db:6543/store?sslmode=require",
            .postgres(
                .init(
                    host: "db", port: 6543, username: "user", password: nil, database: "store",
                    sslMode: "require", schema: nil))
        ),
    ]

    @Test(arguments: valid)
    func acceptedForms(url: String, expected: DatabaseLocation) throws {
        // Proves every documented URL form is read into the right engine and parts.
        #expect(try DatabaseLocation(url: url) == expected)
    }

    @Test(arguments: [
        "", "   ", "mysql://root@localhost/kiosk", "http://example.com/db", "sqlite://", "sqlite:///",
        "sqlite:kiosk.sqlite", "postgres://", "postgres://localhost/kiosk", "postgres://user@host",
        "postgres://user@host/db?sslmode=verify-full", "postgres://user@host/db?schema=Bad-Name",
        "postgres://user@host/db?pool=9", "data/",
    ])
    func badURLsSayWhatIsAccepted(url: String) async throws {
        // Proves a bad URL fails before anything is opened, with a message listing the accepted forms.
        let error = await #expect(throws: StorageError.self) {
            try await DatabaseOpener.open(url: url, logger: TestEngine.logger)
        }
        guard case .invalidURL(let message) = error else {
            Issue.record("expected invalidURL, got \(String(describing: error))")
            return
        }
        #expect(message.contains("accepted forms"))
        #expect(message.contains("sqlite::memory:"))
    }
}

/// How many connections a pool may open, and what a database that gives none says.
@Suite("Database connections")
struct DatabaseConnectionTests {
    @Test(arguments: [0, -1, DatabaseOpener.poolSizes.upperBound + 1])
    func poolSizesOutsideTheRangeAreRefused(size: Int) async throws {
        // Proves a pool size no server can use fails before anything is opened, saying which sizes work.
        let error = await #expect(throws: StorageError.self) {
            try await DatabaseOpener.open(url: "sqlite::memory:", poolSize: size, logger: TestEngine.logger)
        }
        guard case .invalidSetting(let message) = error else {
            Issue.record("expected invalidSetting, got \(String(describing: error))")
            return
        }
        #expect(message.contains("\(size)") && message.contains("1 to 500"), "\(message)")
    }

    @Test func refusedPostgreSQLConnectionNamesTheServerAtOnce() async throws {
        // Proves a PostgreSQL that refuses connections fails the open with the address and the reason, from the
        // first attempt ("Cannot connect" is the probe's), instead of the pool's circuit breaker a minute later.
        // Port 1 on loopback refuses.
        let error = await #expect(throws: StorageError.self) {
            try await DatabaseOpener.open(url: "postgres://kiosk:kiosk@127.0.0.1:1/kiosk", logger: TestEngine.logger)
        }
        guard case .engine(let message) = error else {
            Issue.record("expected engine, got \(String(describing: error))")
            return
        }
        #expect(message.contains("Cannot connect to PostgreSQL at 127.0.0.1:1/kiosk"), "\(message)")
        #expect(message.lowercased().contains("refused"), "\(message)")
    }

    @Test(.enabled(if: TestEnvironment.runs(.postgreSQL), TestEngine.postgresSkipReason))
    func wrongPasswordNamesTheServerAndTheReason() async throws {
        // Proves a PostgreSQL that refuses the login says so, with the server's own words.
        var components = try #require(URLComponents(string: try TestEnvironment.require(.postgreSQL)))
        components.password = "not-the-password"
        let url = try #require(components.string)
        let error = await #expect(throws: StorageError.self) {
            try await DatabaseOpener.open(url: url, logger: TestEngine.logger)
        }
        #expect(
            "\(String(describing: error))".contains("password authentication failed"), "\(String(describing: error))")
    }
}
