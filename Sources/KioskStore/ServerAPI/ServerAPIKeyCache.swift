import Crypto
import Foundation
import KioskCore
import KioskSigning
import Synchronization

/// In-App Purchase keys as the Server API's authentication last read them, each kept for a second, and the tokens
/// whose signature already checked out, parsed.
///
/// Reading a key, its app and the store's issuer id was a database transaction on every request; with this cache it
/// is one per key per second. A key revoked through this process is forgotten at once; one revoked through another
/// replica stops working here within the second an entry lives: the staleness accepted for not reading the database
/// per request. A client reuses its token for up to an hour, so its ECDSA signature is checked and its JSON parsed
/// once; expiry, key and issuer are still checked on every request.
public final class ServerAPIKeyCache: Sendable {
    /// What authentication needs of a key, read in one transaction.
    struct Entry: Sendable {
        var key: InAppPurchaseKey
        var app: App
        var issuer: String
        /// Nil when the stored PEM does not parse: every token of the key then fails its signature check.
        var publicKey: P256.Signing.PublicKey?
        var readAt: ContinuousClock.Instant
    }

    /// How long an entry is trusted without reading the database again.
    static let lifetime: Duration = .seconds(1)
    /// Verified tokens remembered at most; the set starts over when full.
    static let verifiedTokenLimit = 4_096

    private let entries = Mutex<[String: Entry]>([:])
    private let verifiedTokens = BoundedCache<String, ServerAPIToken>(capacity: verifiedTokenLimit)

    public init() {}

    /// The entry of `keyId`, from the cache while it is fresh, else from `read` (nil when the key or its app does
    /// not exist; such answers are not cached, so a key created a moment later works at once).
    func entry(keyId: String, read: () async throws -> Entry?) async throws -> Entry? {
        let now = ContinuousClock.now
        if let cached = entries.withLock({ $0[keyId] }), now - cached.readAt < Self.lifetime { return cached }
        let entry = try await read()
        entries.withLock { $0[keyId] = entry }
        return entry
    }

    /// Drops what is known of `keyId` and of every token: its revocation takes effect on the next request.
    func forget(keyId: String) {
        entries.withLock { _ = $0.removeValue(forKey: keyId) }
        verifiedTokens.removeAll()
    }

    /// `text` parsed, if its signature was already verified.
    func verifiedToken(_ text: String) -> ServerAPIToken? {
        verifiedTokens[text]
    }

    /// Remembers that the signature of `token`, parsed from `text`, verified.
    func rememberVerified(_ token: ServerAPIToken, as text: String) {
        verifiedTokens.insert(token, for: text)
    }
}
