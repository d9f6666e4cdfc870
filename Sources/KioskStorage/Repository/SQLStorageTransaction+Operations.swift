import Foundation
import KioskCore
import KioskSQL
import SQLKit

/// What operators read: the console's audit log (appended, never changed) and customer lookups, and the life signs
/// `/metrics` reads.
extension SQLStorageTransaction {
    func notificationBacklog(environment: StoreEnvironment) async throws -> (count: Int, oldest: Date?) {
        let row = try await session.first(
            """
            SELECT COUNT(*) AS waiting, MIN(created_at) AS oldest FROM notifications
            WHERE environment = \(bind: environment.rawValue) AND state = \(Self.pendingNotification)
            """
        )
        let oldest = try row?.decode(column: "oldest", as: Int64?.self)
        return (
            try row?.decode(column: "waiting", as: Int.self) ?? 0,
            oldest.map(Date.init(millisecondsSince1970:))
        )
    }

    func earliestDueSubscription(environment: StoreEnvironment) async throws -> Date? {
        let row = try await session.first(
            """
            SELECT MIN(next_event_at) AS due FROM subscriptions
            WHERE environment = \(bind: environment.rawValue) AND next_event_at IS NOT NULL
            """
        )
        return try row?.decode(column: "due", as: Int64?.self).map(Date.init(millisecondsSince1970:))
    }

    func accountIds(appAccountToken: UUID, environment: StoreEnvironment) async throws -> [UUID] {
        try await session.all(
            """
            SELECT DISTINCT account_id FROM transactions
            WHERE app_account_token = \(bind: Self.text(appAccountToken)) AND environment = \(bind: environment.rawValue)
            """
        ).map { try $0.uuid("account_id") }
    }

    func endConsoleSessions(_ key: String, at endedAt: Date, keptUntil expiresAt: Date) async throws {
        let ended = endedAt.millisecondsSince1970
        try await session.run("DELETE FROM console_session_ends WHERE expires_at < \(bind: ended)")
        try await session.run(
            """
            INSERT INTO console_session_ends (key, ended_at, expires_at)
            VALUES (\(bind: key), \(bind: ended), \(bind: expiresAt.millisecondsSince1970))
            ON CONFLICT (key) DO UPDATE SET ended_at = excluded.ended_at, expires_at = excluded.expires_at
            """
        )
    }

    func consoleSessionsEnded(_ keys: [String]) async throws -> Date? {
        guard !keys.isEmpty else { return nil }
        let row = try await session.first(
            "SELECT MAX(ended_at) AS ended FROM console_session_ends WHERE key IN (\(binds: keys))")
        return try row?.decode(column: "ended", as: Int64?.self).map(Date.init(millisecondsSince1970:))
    }

    func insertAuditEntry(_ entry: AuditEntry) async throws {
        try await session.run(
            """
            INSERT INTO audit_log (id, at, actor, action, target)
            VALUES (\(bind: entry.id.uuidString), \(bind: entry.at.millisecondsSince1970), \(bind: entry.actor),
                    \(bind: entry.action), \(bind: entry.target))
            """
        )
    }

    func auditEntries(limit: Int) async throws -> [AuditEntry] {
        try await session.all("SELECT * FROM audit_log ORDER BY at DESC, id DESC LIMIT \(bind: limit)").map { row in
            AuditEntry(
                id: try row.uuid("id"), at: try row.date("at"),
                actor: try row.decode(column: "actor", as: String.self),
                action: try row.decode(column: "action", as: String.self),
                target: try row.decode(column: "target", as: String.self))
        }
    }
}
