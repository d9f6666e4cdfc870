import Crypto
import Foundation
import KioskCore
import KioskSigning

/// Who is signed in to the console: a console user, or an operator who gave the admin token and their name (an
/// Admin). `actor` is what the audit log records; `permissions` what their roles allow.
struct ConsoleSession: Sendable {
    /// The user's email, or the name given with the admin token.
    var actor: String
    /// The console user, nil when signed in with the admin token.
    var user: ConsoleUser?
    var expiresAt: Date
    /// Random per session; the CSRF token is derived from it.
    var nonce: String
    var csrfToken: String
    /// Whom the cookie names: `user:STAMP:EMAIL` or `token:NAME`.
    var subject: String

    /// When the session began.
    var issuedAt: Date { expiresAt.addingTimeInterval(-ConsoleSessions.lifetime) }
    /// The keys under which its end is recorded: this session's, and every session of its person's.
    var endKeys: [String] { ["session:\(nonce)", "subject:\(subject)"] }

    var permissions: Set<ConsolePermission> { user?.permissions ?? Set(ConsolePermission.allCases) }
    /// The user still has the temporary password the store made, and must choose their own first.
    var mustChangePassword: Bool { user?.passwordIsTemporary ?? false }
    /// Who the audit log names: the user's email, or "Ada (admin token)" — a name typed with the admin token is
    /// never taken for a console user's.
    var auditActor: String { user == nil ? "\(actor) (admin token)" : actor }
    /// "Ada Lovelace (Admin, Finance)" or "Ada (admin token)", for the page header.
    var signature: String {
        guard let user else { return "\(actor) (admin token)" }
        return "\(user.name) (\(user.roles.map(\.title).joined(separator: ", ")))"
    }
}

/// Issues and checks console session cookies. A cookie is `expiry.nonce.subject.mac`, the subject naming a console
/// user (`user:email`) or an operator who gave the admin token (`token:name`), signed with HMAC-SHA256 under a key
/// derived (HKDF) from the identity key, which stays outside the database (so reading the database — a backup, a
/// replica, a DBA — is not enough to forge a session), a random secret kept in the database and the admin token's
/// hash (so a new admin token ends every session); every replica has all three, so every replica accepts it. A user's subject also carries a stamp of their password hash
/// (`user:stamp:email`), so a new password ends their other sessions; the user is read at every request, so a
/// disabled user or a changed role takes effect at once. Signing out records the session's end in the database
/// (`console_session_ends`), so every replica refuses its cookie from then on; "sign out everywhere" records the
/// end of every session of that person begun until then.
struct ConsoleSessions: Sendable {
    static let cookieName = "kiosk_console"
    /// How long a session lasts from sign-in.
    static let lifetime: TimeInterval = 8 * 3600
    /// The longest operator name accepted at sign-in with the admin token.
    static let actorMaxLength = 64
    /// The setting that holds the random half of the key.
    static let secretSetting = "console_session_secret"

    let key: SymmetricKey
    /// Whether cookies carry `Secure` (the store serves HTTPS).
    let secure: Bool

    init(secret: String, adminTokenSHA256: String, identityKey: IdentityKey, secure: Bool) {
        key = identityKey.derivedKey(
            for: "kiosk console sessions", salt: Data("\(secret)|\(adminTokenSHA256)".utf8))
        self.secure = secure
    }

    /// A new session for `user` (or, when nil, for `actor` with the admin token) from `now`, and the `Set-Cookie`
    /// value that carries it.
    func issue(actor: String, user: ConsoleUser?, now: Date) -> (session: ConsoleSession, setCookie: String) {
        let expiresAt = now.addingTimeInterval(Self.lifetime)
        let nonce = SecretGenerator.hex(byteCount: 16)
        let subject = user.map { "user:\(Self.stamp($0)):\($0.email)" } ?? "token:\(actor)"
        // Milliseconds, never trapping whatever the injected clock says, so a session begun after a "sign out
        // everywhere" is told from those it ended.
        let expiry = expiresAt.millisecondsSince1970
        let fields = "\(expiry).\(nonce).\(Self.hex(Data(subject.utf8)))"
        let value = "\(fields).\(mac(fields))"
        let session = ConsoleSession(
            actor: user?.email ?? actor, user: user, expiresAt: Date(millisecondsSince1970: expiry), nonce: nonce,
            csrfToken: csrfToken(nonce), subject: subject)
        return (session, cookie(value, maxAge: Int(Self.lifetime)))
    }

    /// The `Set-Cookie` value that ends the session in the browser.
    var clearingCookie: String { cookie("", maxAge: 0) }

    /// The session a `Cookie` header carries, if it is authentic, not expired, and (for a user) the user exists, is
    /// not disabled and has the password the session began with. `user` reads a console user by email.
    func session(
        cookieHeader: String?, now: Date, user: (String) async throws -> ConsoleUser?
    ) async throws -> ConsoleSession? {
        guard let header = cookieHeader, header.utf8.count <= 8192 else { return nil }
        let prefix = Self.cookieName + "="
        guard
            let value = header.split(separator: ";").lazy.map({ $0.trimmingCharacters(in: .whitespaces) })
                .first(where: { $0.hasPrefix(prefix) })?.dropFirst(prefix.count)
        else { return nil }
        let parts = value.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4,
            AdminAuthMiddleware.constantTimeEquals(mac(parts[0...2].joined(separator: ".")), String(parts[3])),
            let expiry = Int64(parts[0]), let subjectData = Self.bytes(fromHex: parts[2])
        else { return nil }
        let expiresAt = Date(millisecondsSince1970: expiry)
        let subject = String(decoding: subjectData, as: UTF8.self)
        let nonce = String(parts[1])
        // No session outlives its lifetime from now: a later expiry is no cookie this store issued.
        guard expiresAt > now, expiresAt <= now.addingTimeInterval(Self.lifetime + 1) else { return nil }
        if subject.hasPrefix("token:") {
            return ConsoleSession(
                actor: String(subject.dropFirst(6)), user: nil, expiresAt: expiresAt, nonce: nonce,
                csrfToken: csrfToken(nonce), subject: subject)
        }
        let userParts = subject.split(separator: ":", maxSplits: 2)
        guard userParts.count == 3, userParts[0] == "user", let user = try await user(String(userParts[2])),
            user.disabledAt == nil, Self.stamp(user) == userParts[1]
        else { return nil }
        return ConsoleSession(
            actor: user.email, user: user, expiresAt: expiresAt, nonce: nonce, csrfToken: csrfToken(nonce),
            subject: subject)
    }

    /// The CSRF token of the session with `nonce`: an HMAC, so it cannot be guessed or taken from another session.
    private func csrfToken(_ nonce: String) -> String { mac("csrf|\(nonce)") }

    private func mac(_ text: String) -> String {
        Self.hex(Data(HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: key)))
    }

    /// Sixteen hex characters that change whenever the user's password does.
    private static func stamp(_ user: ConsoleUser) -> String {
        String(SecretGenerator.sha256Hex(user.passwordHash).prefix(16))
    }

    private func cookie(_ value: String, maxAge: Int) -> String {
        Self.setCookie(Self.cookieName, value, maxAge: maxAge, secure: secure)
    }

    /// A `Set-Cookie` value for the console: its paths only, out of scripts' and other sites' reach, `Secure` over
    /// HTTPS.
    static func setCookie(_ name: String, _ value: String, maxAge: Int, secure: Bool) -> String {
        "\(name)=\(value); Path=/console; Max-Age=\(maxAge); HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
    }

    static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

    static func bytes(fromHex text: some StringProtocol) -> Data? {
        guard text.utf8.count.isMultiple(of: 2) else { return nil }
        var bytes = Data()
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            guard let byte = UInt8(text[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
    }
}
