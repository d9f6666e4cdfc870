import Foundation

/// The database engines a store test can run on: SQLite always, PostgreSQL when `KIOSK_TEST_POSTGRES_URL` names a
/// server (`.ci/run` sets it). Use `available` as a parameterized test's arguments and pass `freshURL()` to
/// `withTestStore(databaseURL:)`.
public enum TestDatabaseEngine: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite
    case postgres

    /// `KIOSK_TEST_POSTGRES_URL`, if set.
    public static var postgresURL: String? { ProcessInfo.processInfo.environment["KIOSK_TEST_POSTGRES_URL"] }

    /// The engines available here.
    public static var available: [TestDatabaseEngine] { postgresURL == nil ? [.sqlite] : [.sqlite, .postgres] }

    public var description: String { rawValue }

    /// A fresh, empty database for one test: nil (an SQLite file in the store's temporary data directory) or a new
    /// PostgreSQL schema.
    public func freshURL() -> String? {
        guard self == .postgres, let base = Self.postgresURL else { return nil }
        let schema = "kiosk_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        return base + (base.contains("?") ? "&" : "?") + "schema=\(schema)"
    }
}
