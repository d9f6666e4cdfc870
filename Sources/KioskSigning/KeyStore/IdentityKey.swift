import Crypto
import Foundation
import KioskCore

/// The 256-bit key that seals a store's private signing keys in its database (AES-GCM), so every replica on the
/// database signs with the same chains while the database alone reveals no key. Its text form, 44 characters of
/// base64, is what `<data-dir>/identity.key` holds and `KIOSK_IDENTITY_KEY` takes.
public struct IdentityKey: Sendable {
    /// The key's length in bytes.
    public static let byteCount = 32
    /// The key's file in a data directory.
    public static let fileName = "identity.key"
    /// The most a key file may hold: the text form, whitespace and a line break fit many times over.
    static let largestFile = 1024

    let key: SymmetricKey
    /// Where the key came from, for messages: a file's path, or the variable or option that gave it.
    public let source: String

    /// A new random key.
    public static func generate(source: String) -> IdentityKey {
        IdentityKey(key: SymmetricKey(size: .bits256), source: source)
    }

    private init(key: SymmetricKey, source: String) {
        self.key = key
        self.source = source
    }

    /// Reads the text form: base64 of 32 bytes, whitespace around it ignored.
    ///
    /// - Throws: ``KioskError`` `identity_key_invalid` naming `source` for anything else.
    public init(base64 text: String, source: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let bytes = Data(base64Encoded: trimmed), bytes.count == Self.byteCount else {
            throw KioskError(
                .identityKeyInvalid,
                "The identity key from \(source) is not base64 of \(Self.byteCount) bytes (44 characters ending in "
                    + "'=').",
                field: source,
                fix: "Use the text of the first replica's <data-dir>/\(Self.fileName) exactly, or make a new key with "
                    + "`openssl rand -base64 32` before the first replica starts.")
        }
        self.init(key: SymmetricKey(data: bytes), source: source)
    }

    /// A key for `purpose` derived from this one (HKDF-SHA256 with `salt`): what else the store signs takes part in
    /// the secret kept outside the database, as the console's sessions do.
    public func derivedKey(for purpose: String, salt: Data) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: key, salt: salt, info: Data(purpose.utf8), outputByteCount: 32)
    }

    /// The text form: base64 of the key's bytes.
    public var base64: String {
        key.withUnsafeBytes { Data($0).base64EncodedString() }
    }

    /// Reads a key file (its text form); the key's ``source`` is `path`.
    ///
    /// - Parameters:
    ///   - ownerOnly: refuse a file others may read, as the signing keys' files are refused (Kiosk writes its own
    ///     key file so; an operator's, such as a mounted secret, is theirs to protect).
    /// - Throws: ``KioskError`` `identity_key_unreadable`, `identity_key_permissions` or `identity_key_invalid`,
    ///   naming `path`.
    public static func read(from path: String, ownerOnly: Bool = false) throws -> IdentityKey {
        if ownerOnly, let mode = PrivateFileWriter.mode(of: path), mode & 0o077 != 0 {
            throw KioskError(
                .identityKeyPermissions,
                "The identity key \(path) is readable by others (mode \(String(mode, radix: 8))).", field: path,
                fix: "Run `chmod 600 \(path)` so only the owner can read it.")
        }
        let bytes: Data
        do {
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            bytes = try handle.read(upToCount: largestFile + 1) ?? Data()
        } catch {
            throw KioskError(
                .identityKeyUnreadable, "The identity key file \(path) cannot be read: \(error.localizedDescription)",
                field: path, fix: "Make it a file readable by the user running Kiosk, or check the path.")
        }
        guard bytes.count <= largestFile, let text = String(data: bytes, encoding: .utf8) else {
            throw KioskError(
                .identityKeyInvalid, "The identity key file \(path) does not hold an identity key.", field: path,
                fix: "Put the 44 characters of the first replica's <data-dir>/\(fileName) in it.")
        }
        return try IdentityKey(base64: text, source: path)
    }

    /// Creates the file `path` holding the text form and a line break, readable by its owner only (mode 0600) from
    /// its first byte; never replaces an existing file. The key's ``source`` becomes `path`.
    ///
    /// - Throws: ``KioskError`` naming `path` when the file cannot be created, exists, or cannot be written.
    public func written(to path: String) throws -> IdentityKey {
        try PrivateFileWriter.create(path, contents: Array((base64 + "\n").utf8), mode: PrivateFileWriter.ownerOnlyMode)
        return IdentityKey(key: key, source: path)
    }

    /// Seals `plaintext` for `context` (which the box is bound to: opening it under another context fails).
    func seal(_ plaintext: Data, context: String) throws -> String {
        let box = try AES.GCM.seal(plaintext, using: key, authenticating: Data(context.utf8))
        guard let combined = box.combined else {
            throw KioskError(.identitySealFailed, "AES-GCM gave no combined box for \(context).")
        }
        return combined.base64EncodedString()
    }

    /// Opens what ``seal(_:context:)`` made; nil when this key (or `context`) does not open it.
    ///
    /// - Throws: when `sealed` is not a sealed box at all.
    func open(_ sealed: String, context: String) throws -> Data? {
        guard let combined = Data(base64Encoded: sealed) else { throw SealedBoxUnreadable() }
        let box: AES.GCM.SealedBox
        do {
            box = try AES.GCM.SealedBox(combined: combined)
        } catch {
            throw SealedBoxUnreadable()
        }
        return try? AES.GCM.open(box, using: key, authenticating: Data(context.utf8))
    }

    /// A sealed value is not base64 of a sealed box.
    struct SealedBoxUnreadable: Error {}
}
