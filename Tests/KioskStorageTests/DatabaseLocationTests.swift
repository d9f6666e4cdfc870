import Testing

@testable import KioskStorage

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
            .postgres(.init(host: "127.0.0.1", port: 5432, username: "kiosk", password: "kiosk", database: "kiosk",
                            sslMode: "disable", schema: nil))
        ),
        (
            "postgresql://user:p%40ss@db.example.com/store?sslmode=disable&schema=kiosk_a",
            .postgres(.init(host: "db.example.com", port: 5432, username: "user", password: "p@ss", database: "store",
                            sslMode: "disable", schema: "kiosk_a"))
        ),
        (
            "postgres://user@db:6543/store?sslmode=require",
            .postgres(.init(host: "db", port: 6543, username: "user", password: nil, database: "store",
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
