import Foundation
import KioskCore
import KioskSigning
import KioskStorage

/// A console user with the temporary password the store just made: the only moment it exists outside the hash.
public struct ConsoleUserWithPassword: Sendable {
    public var user: ConsoleUser
    public var temporaryPassword: String?
}

/// The team: console users and their roles, App Store Connect API keys, the audit log and `kiosk check` runs.
public struct TeamService: Sendable {
    let database: any KioskDatabase
    let clock: any KioskClock

    public init(database: any KioskDatabase, clock: any KioskClock) {
        self.database = database
        self.clock = clock
    }
}

extension TeamService {
    /// The newest `limit` entries of the audit log, newest first.
    public func auditEntries(limit: Int) async throws -> [AuditEntry] {
        try await database.transaction { tx in try await tx.auditEntries(limit: limit) }
    }

    /// Adds an entry to the audit log.
    public func recordAudit(_ entry: AuditEntry) async throws {
        try await database.transaction { tx in try await tx.insertAuditEntry(entry) }
    }

    /// Adds a person to the console. Without `password` the store makes a temporary one, shown once, which they
    /// replace at their first sign-in.
    public func createConsoleUser(email: String, name: String, roles: [TeamRole], password: String?) async throws
        -> ConsoleUserWithPassword
    {
        try CatalogRules.validateEmail(email, field: "email")
        try CatalogRules.validateName(name, what: "name", field: "name")
        try Self.requireRoles(roles)
        if let password {
            try CatalogValidator.require(
                CatalogValidator.validateConsolePassword(password, email: email, field: "password"))
        }
        let temporaryPassword = password == nil ? Self.temporaryPassword() : nil
        let hash = try await PasswordHasher().hashOffCooperativePool(password ?? temporaryPassword ?? "")
        let user = ConsoleUser(
            email: email.lowercased(), name: name, roles: Self.sorted(roles), passwordHash: hash,
            passwordIsTemporary: password == nil, passwordSetAt: clock.now(), createdAt: clock.now())
        try await database.transaction { tx in
            if try await tx.consoleUser(email: user.email) != nil {
                throw KioskError(
                    .duplicateConsoleUser, "\(user.email) is already a console user.", field: "email",
                    fix: "Change their roles instead, or reset their password.")
            }
            try await tx.insertConsoleUser(user)
        }
        return ConsoleUserWithPassword(user: user, temporaryPassword: temporaryPassword)
    }

    /// Every console user, by email.
    public func consoleUsers() async throws -> [ConsoleUser] {
        try await database.transaction { tx in try await tx.consoleUsers() }
    }

    /// Ends console sessions on every replica: `key` names one session (`session:NONCE`) or every session of a person
    /// issued until now (`subject:SUBJECT`); `keptUntil` is when the last session it ends would have expired.
    public func endConsoleSessions(_ key: String, keptUntil: Date) async throws {
        let now = clock.now()
        try await database.transaction { tx in try await tx.endConsoleSessions(key, at: now, keptUntil: keptUntil) }
    }

    /// The latest end recorded for any of `keys` (a session's and its person's); nil when none.
    public func consoleSessionsEnded(_ keys: [String]) async throws -> Date? {
        try await database.transaction { tx in try await tx.consoleSessionsEnded(keys) }
    }

    /// The user with `email`, if there is one.
    public func consoleUser(email: String) async throws -> ConsoleUser? {
        guard email.utf8.count <= CatalogValidator.emailMaxLength else { return nil }
        return try await database.transaction { tx in try await tx.consoleUser(email: email.lowercased()) }
    }

    /// Changes a user's name, roles or whether they may sign in. A disabled user's sessions end at their next
    /// request.
    public func updateConsoleUser(email: String, name: String?, roles: [TeamRole]?, disabled: Bool?) async throws
        -> ConsoleUser
    {
        if let name { try CatalogRules.validateName(name, what: "name", field: "name") }
        if let roles { try Self.requireRoles(roles) }
        let now = clock.now()
        return try await changeConsoleUser(email: email) { user in
            if let name { user.name = name }
            if let roles { user.roles = Self.sorted(roles) }
            if let disabled { user.disabledAt = disabled ? (user.disabledAt ?? now) : nil }
        }
    }

    /// Gives the user a new temporary password (shown once) and ends their sessions.
    public func resetConsoleUserPassword(email: String) async throws -> ConsoleUserWithPassword {
        let temporaryPassword = Self.temporaryPassword()
        let hash = try await PasswordHasher().hashOffCooperativePool(temporaryPassword)
        let now = clock.now()
        let user = try await changeConsoleUser(email: email) { user in
            user.passwordHash = hash
            user.passwordIsTemporary = true
            user.passwordSetAt = now
        }
        return ConsoleUserWithPassword(user: user, temporaryPassword: temporaryPassword)
    }

    /// The user's own change of password: the current one must be right, and the new one differ from it. Ends
    /// their other sessions.
    public func changeConsolePassword(email: String, current: String, new: String) async throws -> ConsoleUser {
        try CatalogValidator.require(CatalogValidator.validateConsolePassword(new, email: email, field: "newPassword"))
        guard let user = try await consoleUser(email: email),
            await PasswordHasher().verifyOffCooperativePool(current, against: user.passwordHash)
        else {
            throw KioskError(
                .wrongPassword, "The current password is not right.", field: "currentPassword",
                fix: "Type the password you signed in with.")
        }
        guard current != new else {
            throw KioskError(
                .passwordUnchanged, "The new password is the current one.", field: "newPassword",
                fix: "Choose a password you have not used here.")
        }
        let hash = try await PasswordHasher().hashOffCooperativePool(new)
        let now = clock.now()
        return try await changeConsoleUser(email: email) { user in
            user.passwordHash = hash
            user.passwordIsTemporary = false
            user.passwordSetAt = now
        }
    }

    private func changeConsoleUser(email: String, _ change: @Sendable (inout ConsoleUser) -> Void) async throws
        -> ConsoleUser
    {
        try await database.transaction { tx in
            guard email.utf8.count <= CatalogValidator.emailMaxLength,
                var user = try await tx.consoleUser(email: email.lowercased())
            else {
                throw KioskError(
                    .consoleUserNotFound, "There is no console user '\(email.prefix(64))'.", field: "email",
                    fix: "List them with `kiosk console-users list`.")
            }
            change(&user)
            try await tx.updateConsoleUser(user)
            return user
        }
    }

    private static func requireRoles(_ roles: [TeamRole]) throws {
        guard !roles.isEmpty else {
            throw KioskError(
                .missingRoles, "A console user needs at least one role.", field: "roles",
                fix: "Give ADMIN, FINANCE, SALES, APP_MANAGER, DEVELOPER, MARKETING or CUSTOMER_SUPPORT.")
        }
    }

    private static func sorted(_ roles: [TeamRole]) -> [TeamRole] {
        TeamRole.allCases.filter(roles.contains)
    }

    /// Sixteen characters in four groups from letters and digits that cannot be mistaken for one another
    /// (about 79 bits): typed once, then replaced.
    static func temporaryPassword() -> String {
        let alphabet = Array("abcdefghjkmnpqrstuvwxyz23456789")
        var generator = SystemRandomNumberGenerator()
        let characters = (0..<16).map { _ in alphabet.randomElement(using: &generator)! }
        return stride(from: 0, to: 16, by: 4).map { String(characters[$0..<$0 + 4]) }.joined(separator: "-")
    }
}
