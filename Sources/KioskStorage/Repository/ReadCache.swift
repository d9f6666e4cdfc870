import Foundation
import KioskCore
import Synchronization

/// In-process copies of the rows nearly every request reads and few requests change: apps, products, sessions,
/// accounts, settings (the Paid Apps agreement, the sandbox clock), tax rules and the sandbox's armed failures.
///
/// Validity is decided by state, not by time: every write to those tables bumps one counter row in the database,
/// in the writing transaction (``IdentifierSequence/cachedRowsVersion``). A transaction that reads through the cache
/// first reads that counter (one primary-key lookup) and uses the copies only if they were taken at the same
/// version. So a change committed by any process — another replica on PostgreSQL, the CLI on the same SQLite file —
/// is seen by the next transaction that starts after it, exactly as without the cache; no TTL, no stale window.
final class ReadCache: Sendable {
    /// What is cached. Misses are cached only for settings (an unset agreement is the common case); an unknown
    /// session token or product is read again each time, so a client cannot fill the cache with misses.
    enum Key: Hashable, Sendable {
        case app(App.ID)
        case appBundleId(String)
        case product(App.ID, String)
        case products(App.ID)
        case session(tokenHash: String)
        /// An account by id, in its environment.
        case account(Account.ID, StoreEnvironment)
        case setting(String)
        /// All of the operator's tax rules.
        case taxRules
        /// The failures the sandbox test controls armed for an app.
        case armedFailures(App.ID)
    }

    /// A kept answer; `value` is nil for a kept miss.
    struct Entry<Value: Sendable>: Sendable {
        var value: Value?
    }

    /// Entries kept at most; the cache starts over when full (sessions are the only key that grows with use).
    static let entryLimit = 20_000

    private struct State {
        /// The counter value the entries were read at; nil when unknown (at start, and after a failed write).
        var version: Int64?
        var entries: [Key: any Sendable] = [:]
    }

    private let state = Mutex(State())

    /// Makes `version`, which a transaction just read, the cache's version if it is newer (dropping every entry);
    /// answers whether the transaction may use the cache, which it may not when the cache is newer than what it read.
    func adopt(_ version: Int64) -> Bool {
        state.withLock { state in
            if let current = state.version, current > version { return false }
            if state.version != version {
                state.version = version
                state.entries.removeAll()
            }
            return true
        }
    }

    /// The entry for `key` if it was read at `version`.
    func value(_ key: Key, at version: Int64) -> (any Sendable)? {
        state.withLock { $0.version == version ? $0.entries[key] : nil }
    }

    /// Keeps `value`, read at `version`, unless the cache moved on since.
    func store(_ value: any Sendable, for key: Key, at version: Int64) {
        state.withLock { state in
            guard state.version == version else { return }
            if state.entries.count >= Self.entryLimit { state.entries.removeAll() }
            state.entries[key] = value
        }
    }

    /// Forgets everything, version included: after a transaction that changed cached rows failed, other
    /// transactions of its group may have read its change before the commit failed (SQLite shares one commit).
    func reset() {
        state.withLock { $0 = State() }
    }
}

/// One transaction's use of the ``ReadCache``: whether it checked the version yet, and whether it wrote cached rows
/// (then it reads the database, to see its own writes).
final class CachedReads: Sendable {
    enum Use: Sendable {
        case unchecked
        /// The transaction read `version` and the cache holds it.
        case valid(version: Int64)
        /// The cache is newer than the transaction's snapshot, or the transaction changed cached rows.
        case bypass
    }

    let cache: ReadCache
    private let use = Mutex(Use.unchecked)
    private let wrote = Mutex(false)

    init(cache: ReadCache) { self.cache = cache }

    /// Whether this transaction changed cached rows.
    var changedCachedRows: Bool { wrote.withLock { $0 } }

    /// The version this transaction reads the cache at, checking it on first use; nil when it must not use it.
    func version(reading: () async throws -> Int64) async throws -> Int64? {
        switch use.withLock({ $0 }) {
        case .valid(let version): return version
        case .bypass: return nil
        case .unchecked:
            let version = try await reading()
            let usable = cache.adopt(version)
            use.withLock { $0 = usable ? .valid(version: version) : .bypass }
            return usable ? version : nil
        }
    }

    /// Marks the transaction as a writer of cached rows; answers true the first time (bump the version then).
    func markWriting() -> Bool {
        use.withLock { $0 = .bypass }
        return wrote.withLock { wrote in
            defer { wrote = true }
            return !wrote
        }
    }
}
