import Crypto

/// A new In-App Purchase key for the App Store Server API, as App Store Connect hands it out once:
/// a key id and the private key of a `.p8` file.
///
/// Kiosk stores only ``publicKeyPEM`` (to verify the merchant's JWTs); ``privateKeyPEM`` is shown once.
public struct InAppPurchaseKeyMaterial: Sendable {
    /// Ten upper-case letters and digits, the JWT `kid`.
    public let keyId: String
    /// The P-256 private key as PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), exactly what a `.p8` file holds.
    public let privateKeyPEM: String
    /// The matching public key as PEM (`-----BEGIN PUBLIC KEY-----`).
    public let publicKeyPEM: String

    /// Generates a fresh P-256 key and a random key id.
    public static func generate() -> InAppPurchaseKeyMaterial {
        let key = P256.Signing.PrivateKey()
        return InAppPurchaseKeyMaterial(
            keyId: randomKeyId(),
            privateKeyPEM: key.pemRepresentation,
            publicKeyPEM: key.publicKey.pemRepresentation
        )
    }

    /// A key id of ten characters drawn uniformly from `A–Z0–9`.
    static func randomKeyId() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        var generator = SystemRandomNumberGenerator()
        return String((0..<10).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }
}
