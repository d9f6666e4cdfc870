import Foundation
import KioskCore
import KioskSQL
import SQLKit

/// People who sign in to the console. Disabled ones stay, so the audit log's names keep meaning someone.
extension SQLStorageTransaction {
    func insertConsoleUser(_ user: ConsoleUser) async throws {
        try await session.run(
            """
            INSERT INTO console_users (
                email, name, roles, password_hash, password_is_temporary, password_set_at, disabled_at, created_at)
            VALUES (\(bind: user.email), \(bind: user.name), \(bind: Self.rolesText(user.roles)),
                \(bind: user.passwordHash), \(bind: user.passwordIsTemporary),
                \(bind: user.passwordSetAt?.millisecondsSince1970),
                \(bind: user.disabledAt?.millisecondsSince1970), \(bind: user.createdAt.millisecondsSince1970))
            """
        )
    }

    func updateConsoleUser(_ user: ConsoleUser) async throws {
        let row = try await session.first(
            """
            UPDATE console_users SET name = \(bind: user.name), roles = \(bind: Self.rolesText(user.roles)),
                password_hash = \(bind: user.passwordHash), password_is_temporary = \(bind: user.passwordIsTemporary),
                password_set_at = \(bind: user.passwordSetAt?.millisecondsSince1970),
                disabled_at = \(bind: user.disabledAt?.millisecondsSince1970)
            WHERE email = \(bind: user.email)
            RETURNING email
            """
        )
        try requireUpdated(row, "console user \(user.email)")
    }

    func consoleUser(email: String) async throws -> ConsoleUser? {
        try await session.first("SELECT * FROM console_users WHERE email = \(bind: email)").map(Self.decodeConsoleUser)
    }

    func consoleUsers() async throws -> [ConsoleUser] {
        try await session.all("SELECT * FROM console_users ORDER BY email").map(Self.decodeConsoleUser)
    }

    private static func decodeConsoleUser(_ row: any SQLRow) throws -> ConsoleUser {
        ConsoleUser(
            email: try row.decode(column: "email", as: String.self),
            name: try row.decode(column: "name", as: String.self),
            roles: try roles(row, in: "console_users"),
            passwordHash: try row.decode(column: "password_hash", as: String.self),
            passwordIsTemporary: try row.decode(column: "password_is_temporary", as: Bool.self),
            passwordSetAt: try row.optionalDate("password_set_at"),
            disabledAt: try row.optionalDate("disabled_at"), createdAt: try row.date("created_at"))
    }
}
