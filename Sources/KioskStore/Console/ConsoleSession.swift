import Crypto
import Foundation
import KioskCore
import KioskSigning

/// An operator signed in to the console: the name they gave (for the audit log), when the session ends, and the
/// token every form they post must carry.
struct ConsoleSession: Sendable {
    var actor: String
    var expiresAt: Date
    /// Random per session; the CSRF token is derived from it.
    var nonce: String
    var csrfToken: String
}

/// Issues and checks console session cookies. A cookie is `expiry.nonce.actor.mac`, signed with HMAC-SHA256 under a
/// key derived from a random secret kept in the database (so every replica accepts it) and the admin token's hash
/// (so a new admin token ends every session). Nothing is stored per session: a session ends when it expires, when
/// the operator signs out (the cookie is dropped), or when the admin token changes.
struct ConsoleSessions: Sendable {
    static let cookieName = "kiosk_console"
    /// How long a session lasts from sign-in.
    static let lifetime: TimeInterval = 8 * 3600
    /// The longest operator name accepted at sign-in.
    static let actorMaxLength = 64
    /// The setting that holds the random half of the key.
    static let secretSetting = "console_session_secret"

    let key: SymmetricKey
    /// Whether cookies carry `Secure` (the store serves HTTPS).
    let secure: Bool

    init(secret: String, adminTokenSHA256: String, secure: Bool) {
        key = SymmetricKey(data: SHA256.hash(data: Data("\(secret)|\(adminTokenSHA256)".utf8)))
        self.secure = secure
    }

    /// A new session for `actor` from `now`, and the `Set-Cookie` value that carries it.
    func issue(actor: String, now: Date) -> (session: ConsoleSession, setCookie: String) {
        let expiresAt = now.addingTimeInterval(Self.lifetime)
        let nonce = SecretGenerator.hex(byteCount: 16)
        let fields = "\(Int64(expiresAt.timeIntervalSince1970)).\(nonce).\(Self.hex(Data(actor.utf8)))"
        let value = "\(fields).\(mac(fields))"
        let session = ConsoleSession(actor: actor, expiresAt: expiresAt, nonce: nonce, csrfToken: csrfToken(nonce))
        return (session, cookie(value, maxAge: Int(Self.lifetime)))
    }

    /// The `Set-Cookie` value that ends the session in the browser.
    var clearingCookie: String { cookie("", maxAge: 0) }

    /// The session a `Cookie` header carries, if it is authentic and not expired.
    func session(cookieHeader: String?, now: Date) -> ConsoleSession? {
        guard let header = cookieHeader, header.utf8.count <= 8192 else { return nil }
        let prefix = Self.cookieName + "="
        guard
            let value = header.split(separator: ";").lazy.map({ $0.trimmingCharacters(in: .whitespaces) })
                .first(where: { $0.hasPrefix(prefix) })?.dropFirst(prefix.count)
        else { return nil }
        let parts = value.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4,
            AdminAuthMiddleware.constantTimeEquals(mac(parts[0...2].joined(separator: ".")), String(parts[3])),
            let expiry = Int64(parts[0]), let actorData = Self.bytes(fromHex: parts[2])
        else { return nil }
        let expiresAt = Date(timeIntervalSince1970: TimeInterval(expiry))
        guard expiresAt > now else { return nil }
        let nonce = String(parts[1])
        return ConsoleSession(
            actor: String(decoding: actorData, as: UTF8.self), expiresAt: expiresAt, nonce: nonce,
            csrfToken: csrfToken(nonce))
    }

    /// The CSRF token of the session with `nonce`: an HMAC, so it cannot be guessed or taken from another session.
    private func csrfToken(_ nonce: String) -> String { mac("csrf|\(nonce)") }

    private func mac(_ text: String) -> String {
        Self.hex(Data(HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: key)))
    }

    private func cookie(_ value: String, maxAge: Int) -> String {
        "\(Self.cookieName)=\(value); Path=/console; Max-Age=\(maxAge); HttpOnly; SameSite=Strict"
            + (secure ? "; Secure" : "")
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
