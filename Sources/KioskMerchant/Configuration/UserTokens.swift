import Crypto
import ExtrasBase64
import Foundation
import KioskCore

/// The merchant's user tokens: `kmu1.<user id, base64url>.<expiry, seconds since 1970>.<HMAC-SHA256, base64url>`,
/// the HMAC keyed with the configuration's `userTokenSecret` over everything before the last dot.
///
/// The developer's own sign-in issues a token when a user signs in (with this type, `kiosk merchant token`, or
/// `POST /merchant/v1/admin/tokens`); the app sends it as `Authorization: Bearer <token>`. Nothing is stored: the
/// merchant checks the signature and the expiry. Rotating the secret signs every user out.
public struct UserTokens: Sendable {
    private let key: SymmetricKey
    private static let prefix = "kmu1"
    private static let options: Base64.EncodingOptions = [.base64UrlAlphabet, .omitPaddingCharacter]

    public init(secret: String) {
        key = SymmetricKey(data: Array(secret.utf8))
    }

    /// A token for `userId` valid until `expiresAt`.
    public func issue(userId: String, expiresAt: Date) -> String {
        let user = Base64.encodeToString(bytes: Array(userId.utf8), options: Self.options)
        let body = "\(Self.prefix).\(user).\(expiresAt.secondsSince1970)"
        return "\(body).\(signature(body))"
    }

    /// When a token issued at `now` for `lifetime` seconds expires, in whole seconds as the token writes it; nil
    /// unless `lifetime` is positive and the expiry lies in `Date.kioskRange`.
    public static func expiry(lifetime: Int, from now: Date) -> Date? {
        guard lifetime > 0, let expiry = now.checkedAdding(seconds: TimeInterval(lifetime)) else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(expiry.secondsSince1970))
    }

    /// The user a valid, unexpired token names. The signature is checked before the user and the expiry are read.
    ///
    /// - Throws: `KioskError` `unauthorized` saying what is wrong with the token.
    public func userId(from token: String, now: Date) throws -> String {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == Self.prefix else {
            throw Self.refusal(.invalidToken, "The bearer token is not a merchant user token.")
        }
        let body = parts[0..<3].joined(separator: ".")
        let expected = Array(signature(body).utf8)
        let given = Array(parts[3].utf8)
        // Compared in constant time, so the signature cannot be guessed byte by byte.
        guard expected.elementsEqualInConstantTime(given) else {
            throw Self.refusal(.invalidToken, "The user token's signature does not match.")
        }
        guard let expiry = Int64(parts[2]).flatMap(Date.init(checkedSecondsSince1970:)),
            let userBytes = try? Base64.decode(
                string: String(parts[1]), options: [.base64UrlAlphabet, .omitPaddingCharacter]),
            let userId = String(bytes: userBytes, encoding: .utf8), !userId.isEmpty
        else {
            throw Self.refusal(.invalidToken, "The bearer token is not a merchant user token.")
        }
        guard expiry > now else {
            throw Self.refusal(.tokenExpired, "The user token expired.")
        }
        return userId
    }

    private func signature(_ body: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Array(body.utf8), using: key)
        return Base64.encodeToString(bytes: Array(mac), options: Self.options)
    }

    private static func refusal(_ code: ErrorCode, _ message: String) -> KioskError {
        KioskError(
            code, message, field: "Authorization",
            fix:
                "Send Authorization: Bearer <token> with a token your sign-in issued (`kiosk merchant token --user ID`)."
        )
    }
}
