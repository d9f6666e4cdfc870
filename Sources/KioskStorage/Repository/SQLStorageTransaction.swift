import Foundation
import KioskCore
import KioskSQL
import SQLKit

/// The one implementation of `StorageTransaction`, written against SQLKit so SQLite and PostgreSQL share it.
///
/// Queries are raw SQL with `\(bind:)` values, which SQLKit turns into each dialect's placeholders. Both engines
/// hand it an `SQLSession` that is already inside a transaction; the facets (`+Apps`, `+Products`, …) hold the
/// statements per aggregate.
struct SQLStorageTransaction: StorageTransaction {
    let session: SQLSession
    /// This transaction's use of its database's ``ReadCache``.
    let reads: CachedReads

    /// First value of each sequence: what Apple's numbers look like.
    static func firstValue(of sequence: IdentifierSequence) -> Int64 {
        switch sequence {
        case .appAppleId: 1_400_000_001
        case .subscriptionGroupId: 21_000_001
        case .productionTransactionId: 1_000_000_000_000_001
        case .sandboxTransactionId: 2_000_000_000_000_001
        case .queueEntry: 1
        case .webOrderLineItemId: 8_000_000_000_000_001
        case .cachedRowsVersion: 1
        case .offerCodeCampaignId: 6_100_000_001
        case .offerCodeBatchId: 6_200_000_001
        }
    }

    /// `load`'s answer through the ``ReadCache``: the copy taken at this transaction's version of the cached rows,
    /// else the database's (then kept for the next transaction). Nil answers are kept only if `keepingMisses`.
    func cached<Value: Sendable>(
        _ key: ReadCache.Key, keepingMisses: Bool = false, load: () async throws -> Value?
    ) async throws -> Value? {
        guard let version = try await reads.version(reading: cachedRowsVersion) else { return try await load() }
        if let hit = reads.cache.value(key, at: version) as? ReadCache.Entry<Value> { return hit.value }
        let value = try await load()
        if value != nil || keepingMisses { reads.cache.store(ReadCache.Entry(value: value), for: key, at: version) }
        return value
    }

    /// Called before each write to a table the ``ReadCache`` copies: bumps the version once per transaction, so
    /// every process drops its copies when this commits; this transaction reads the database from now on.
    func changesCachedRows() async throws {
        if reads.markWriting() { _ = try await nextIdentifier(.cachedRowsVersion) }
    }

    /// The committed version of the cached rows (0 before the first write).
    private func cachedRowsVersion() async throws -> Int64 {
        let name = IdentifierSequence.cachedRowsVersion.rawValue
        return try await session.first("SELECT next_value FROM sequences WHERE name = \(bind: name)")?
            .decode(column: "next_value", as: Int64.self) ?? 0
    }

    /// Rows per multi-row `INSERT`: 500 rows of the widest table (transactions, 34 columns) bind 17,000 values,
    /// under what one statement may bind on SQLite (32,766) and PostgreSQL (65,535).
    static let rowsPerInsert = 500

    /// Inserts `rows` with `INSERT INTO <into> VALUES (…), (…)`, ``rowsPerInsert`` rows per statement.
    func insert<Row>(_ rows: [Row], into: SQLQueryString, values: (Row) -> SQLQueryString) async throws {
        for start in stride(from: 0, to: rows.count, by: Self.rowsPerInsert) {
            let chunk = rows[start..<min(start + Self.rowsPerInsert, rows.count)]
            try await session.run("INSERT INTO \(into) VALUES \(chunk.map(values).joined(separator: ", "))")
        }
    }

    func nextIdentifier(_ sequence: IdentifierSequence) async throws -> Int64 {
        try await nextIdentifiers(sequence, count: 1).lowerBound
    }

    func nextIdentifiers(_ sequence: IdentifierSequence, count: Int) async throws -> ClosedRange<Int64> {
        // One statement creates the counter on first use or advances it, so two transactions can never read the
        // same value: the row lock (PostgreSQL) or the write lock (SQLite) orders them.
        let count = Int64(max(1, count))
        let first = Self.firstValue(of: sequence)
        let row = try await session.first(
            """
            INSERT INTO sequences (name, next_value) VALUES (\(bind: sequence.rawValue), \(bind: first + count))
            ON CONFLICT (name) DO UPDATE SET next_value = sequences.next_value + \(bind: count)
            RETURNING next_value - \(bind: count) AS value
            """
        )
        guard let row else {
            throw StorageError.engine(message: "sequence \(sequence.rawValue) returned no value")
        }
        let start = try row.decode(column: "value", as: Int64.self)
        return start...(start + count - 1)
    }

    func setting(_ key: String) async throws -> String? {
        try await cached(.setting(key), keepingMisses: true) {
            try await session.first("SELECT value FROM settings WHERE key = \(bind: key)")?
                .decode(column: "value", as: String.self)
        }
    }

    func setSetting(_ key: String, to value: String?) async throws {
        try await changesCachedRows()
        guard let value else {
            try await session.run("DELETE FROM settings WHERE key = \(bind: key)")
            return
        }
        try await session.run(
            """
            INSERT INTO settings (key, value) VALUES (\(bind: key), \(bind: value))
            ON CONFLICT (key) DO UPDATE SET value = excluded.value
            """
        )
    }

    func settingInsertingIfAbsent(_ key: String, value: String) async throws -> String {
        // PostgreSQL: a concurrent insert of the key makes this wait for its transaction, then do nothing; the
        // SELECT after it (a new statement, so a new snapshot) sees the value that transaction committed.
        try await changesCachedRows()
        try await session.run(
            "INSERT INTO settings (key, value) VALUES (\(bind: key), \(bind: value)) ON CONFLICT (key) DO NOTHING")
        guard let stored = try await setting(key) else {
            throw StorageError.engine(message: "the setting \(key) was not stored")
        }
        return stored
    }

    /// UUIDs are stored as lower-case text, so both engines compare and order them alike.
    static func text(_ id: UUID) -> String {
        id.uuidString.lowercased()
    }

    /// The rows of one account in one app and environment, in any purchase table (`payments`,
    /// `transactions`, `queue_entries`).
    static func ownedBy(_ accountId: UUID, _ appId: App.ID, _ environment: StoreEnvironment) -> SQLQueryString {
        """
        environment = \(bind: environment.rawValue) AND account_id = \(bind: Self.text(accountId))
            AND app_id = \(bind: appId)
        """
    }

    /// Throws when an `UPDATE … RETURNING` touched no row: updating something that does not exist is a bug
    /// in the caller, and silently doing nothing would hide it.
    func requireUpdated(_ row: (any SQLRow)?, _ what: @autoclosure () -> String) throws {
        if row == nil {
            throw StorageError.engine(message: "cannot update \(what()): no such row")
        }
    }
}

extension Sequence {
    /// Multi-row `VALUES` lists: `(…), (…)`, one per element.
    func valuesList(_ row: (Element) -> SQLQueryString) -> SQLQueryString {
        map(row).joined(separator: ", ")
    }
}
