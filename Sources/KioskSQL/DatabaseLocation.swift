import Foundation

/// Where the database is, parsed from the URL an operator gives (`--database`, `KIOSK_DATABASE_URL`).
enum DatabaseLocation: Equatable {
    /// An SQLite file at this path (absolute or relative to the working directory).
    case sqliteFile(path: String)
    /// A private in-memory SQLite database, gone when closed.
    case sqliteMemory
    /// A PostgreSQL server.
    case postgres(PostgresLocation)

    /// The parts of a `postgres://` URL.
    struct PostgresLocation: Equatable {
        var host: String
        var port: Int
        var username: String
        var password: String?
        var database: String
        /// `disable` (also the default), `prefer` or `require`.
        var sslMode: String
        /// A schema to use (created if missing) instead of the default `search_path`.
        var schema: String?
    }

    /// What every error message lists.
    static let acceptedForms = """
        accepted forms: sqlite:///absolute/path/kiosk.sqlite, sqlite://relative/path/kiosk.sqlite, \
        a plain file path, sqlite::memory:, postgres://user:password@host:5432/database \
        (or postgresql://…, optionally with ?sslmode=disable|prefer|require&schema=name)
        """

    /// Parses `url`; throws `StorageError.invalidURL` saying what is wrong and which forms work.
    init(url: String) throws {
        let text = url.trimmingCharacters(in: .whitespaces)
        func invalid(_ problem: String) -> StorageError {
            StorageError.invalidURL("'\(url)' \(problem); \(Self.acceptedForms)")
        }
        guard !text.isEmpty else { throw invalid("is empty") }

        if text == "sqlite::memory:" || text == ":memory:" {
            self = .sqliteMemory
        } else if text.hasPrefix("sqlite://") {
            let path = String(text.dropFirst("sqlite://".count))
            guard !path.isEmpty, path != "/" else { throw invalid("names no file") }
            guard !path.contains("?") else { throw invalid("has query parameters, which SQLite URLs do not take") }
            self = .sqliteFile(path: path.removingPercentEncoding ?? path)
        } else if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            self = .postgres(try Self.parsePostgres(text, invalid: invalid))
        } else if let scheme = text.range(of: "://").map({ text[..<$0.lowerBound] }) {
            throw invalid("uses the scheme '\(scheme)', which Kiosk does not support")
        } else if text.hasPrefix("sqlite:") || text.hasPrefix("postgres:") || text.hasPrefix("postgresql:") {
            throw invalid("is missing '//' after the scheme")
        } else if text.hasSuffix("/") {
            throw invalid("is a directory, not a database file")
        } else {
            self = .sqliteFile(path: text)
        }
    }

    private static func parsePostgres(
        _ text: String, invalid: (String) -> StorageError
    ) throws -> PostgresLocation {
        guard let components = URLComponents(string: text) else { throw invalid("is not a well-formed URL") }
        guard let host = components.host, !host.isEmpty else { throw invalid("names no host") }
        guard let username = components.user, !username.isEmpty else { throw invalid("names no user") }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else { throw invalid("names no database after the host") }
        if let port = components.port, !(1...65535).contains(port) {
            throw invalid("has port \(port), outside 1–65535")
        }
        var location = PostgresLocation(
            host: host, port: components.port ?? 5432,
            username: username.removingPercentEncoding ?? username,
            password: components.password.map { $0.removingPercentEncoding ?? $0 },
            database: database.removingPercentEncoding ?? database,
            sslMode: "disable", schema: nil
        )
        for item in components.queryItems ?? [] {
            switch (item.name, item.value ?? "") {
            case ("sslmode", let mode) where ["disable", "allow", "prefer", "require"].contains(mode):
                location.sslMode = mode == "allow" ? "prefer" : mode
            case ("sslmode", let mode):
                throw invalid("has sslmode=\(mode); use disable, prefer or require")
            case ("schema", let schema):
                guard schema.range(of: "^[a-z_][a-z0-9_]{0,62}$", options: .regularExpression) != nil else {
                    throw invalid("has schema=\(schema); use lower-case letters, digits and underscores")
                }
                location.schema = schema
            case (let name, _):
                throw invalid("has the unknown parameter '\(name)'; only sslmode and schema are understood")
            }
        }
        return location
    }
}
