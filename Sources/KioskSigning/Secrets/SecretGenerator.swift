import Crypto
import ExtrasBase64
import Foundation

/// Random secrets from the system's cryptographic generator, and the hash Kiosk stores instead of a token.
public enum SecretGenerator {
    /// Random bytes as lower-case hex, e.g. an app-specific shared secret (`hex(byteCount: 16)`: 32 characters).
    public static func hex(byteCount: Int) -> String {
        hexString(randomBytes(byteCount))
    }

    /// An app-specific shared secret as App Store Connect shows it: 32 lower-case hex characters.
    public static func sharedSecret() -> String {
        hex(byteCount: 16)
    }

    /// A bearer token: `kiosk_` followed by `byteCount` random bytes as base64url without padding.
    ///
    /// The default 32 bytes give 256 bits, 43 characters after the prefix.
    public static func token(byteCount: Int = 32) -> String {
        "kiosk_"
            + Base64.encodeToString(
                bytes: randomBytes(byteCount), options: [.base64UrlAlphabet, .omitPaddingCharacter])
    }

    /// SHA-256 of the UTF-8 text as lower-case hex: how tokens are stored, so a leaked database leaks no token.
    public static func sha256Hex(_ text: String) -> String {
        hexString(Array(SHA256.hash(data: Array(text.utf8))))
    }

    /// `count` bytes from the system's cryptographic random generator.
    public static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    static func hexString(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var characters: [UInt8] = []
        for byte in bytes {
            characters.append(digits[Int(byte >> 4)])
            characters.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: characters, as: UTF8.self)
    }
}
