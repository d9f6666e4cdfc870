import Foundation
import KioskCore
import KioskSQL
import SQLKit

/// Signed-in sessions, keyed by the hash of their bearer token. They go with their app (ON DELETE CASCADE).
extension SQLStorageTransaction {
    func insertSession(_ session: StoreSession) async throws {
        try await self.session.run(
            """
            INSERT INTO sessions (token_hash, environment, account_id, app_id, device_id, created_at)
            VALUES (\(bind: session.tokenHash), \(bind: session.environment.rawValue),
                \(bind: Self.text(session.accountId)), \(bind: session.appId), \(bind: Self.text(session.deviceId)),
                \(bind: session.createdAt.millisecondsSince1970))
            """
        )
    }

    func session(tokenHash: String) async throws -> StoreSession? {
        try await cached(.session(tokenHash: tokenHash)) {
            try await session.first("SELECT * FROM sessions WHERE token_hash = \(bind: tokenHash)").map { row in
                StoreSession(
                    tokenHash: try row.decode(column: "token_hash", as: String.self),
                    environment: try row.enumeration("environment", as: StoreEnvironment.self),
                    accountId: try row.uuid("account_id"),
                    appId: try row.decode(column: "app_id", as: Int64.self),
                    deviceId: try row.uuid("device_id"),
                    createdAt: try row.date("created_at")
                )
            }
        }
    }

    /// A new session changes no cached answer (unknown tokens are not cached), so signing in bumps no version.
    func deleteSession(tokenHash: String) async throws {
        try await changesCachedRows()
        try await session.run("DELETE FROM sessions WHERE token_hash = \(bind: tokenHash)")
    }
}
