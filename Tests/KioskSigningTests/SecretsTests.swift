import Crypto
import Foundation
import KioskSigning
import Testing

@Suite("Secrets, passwords and In-App Purchase keys")
struct SecretsTests {
    // Proves an In-App Purchase key is a PKCS#8 P-256 PEM that parses back, with a matching public key and a
    // 10-character id.
    @Test func inAppPurchaseKey() throws {
        let material = InAppPurchaseKeyMaterial.generate()
        #expect(material.privateKeyPEM.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let key = try P256.Signing.PrivateKey(pemRepresentation: material.privateKeyPEM)
        let publicKey = try P256.Signing.PublicKey(pemRepresentation: material.publicKeyPEM)
        #expect(key.publicKey.rawRepresentation == publicKey.rawRepresentation)
        #expect(material.keyId.count == 10)
        #expect(material.keyId.allSatisfy { ("A"..."Z").contains($0) || ("0"..."9").contains($0) })
        #expect(InAppPurchaseKeyMaterial.generate().keyId != material.keyId)
    }

    // Proves a password verifies against its own hash only, and two hashes of one password differ by salt.
    @Test func passwordHash() throws {
        let hasher = PasswordHasher()
        let first = try hasher.hash("correct horse")
        let second = try hasher.hash("correct horse")
        #expect(first != second)
        #expect(first.hasPrefix("scrypt$16384$8$1$"))
        #expect(hasher.verify("correct horse", against: first))
        #expect(hasher.verify("correct horse", against: second))
        #expect(!hasher.verify("correct horsE", against: first))
        #expect(!hasher.verify("", against: first))
    }

    // Proves parameters are read from the stored string, so hashes made with another cost still verify.
    /// The variants the store uses (scrypt on a dispatch thread, never on Swift concurrency's threads) hash and
    /// check exactly as the synchronous ones, also many at once.
    @Test func offPoolHashingAgrees() async throws {
        let hasher = PasswordHasher(rounds: 1 << 10)
        let stored = try await hasher.hashOffCooperativePool("correct horse")
        #expect(hasher.verify("correct horse", against: stored))
        let verdicts = await withTaskGroup(of: Bool.self) { group in
            for attempt in 0..<16 {
                group.addTask {
                    await hasher.verifyOffCooperativePool(
                        attempt.isMultiple(of: 2) ? "correct horse" : "wrong", against: stored)
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(verdicts.filter { $0 }.count == 8)
    }

    @Test func passwordParametersComeFromTheEncoding() throws {
        let cheap = try PasswordHasher(rounds: 1 << 10, blockSize: 4, parallelism: 2).hash("pw")
        #expect(cheap.hasPrefix("scrypt$1024$4$2$"))
        #expect(PasswordHasher().verify("pw", against: cheap))
    }

    // Proves malformed or excessively costly encodings are refused rather than crashing or hanging.
    @Test(arguments: [
        "", "scrypt", "bcrypt$16384$8$1$AAAA$AAAA", "scrypt$16384$8$1$!!$AAAA",
        "scrypt$1073741824$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        "scrypt$1000$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
    ])
    func rejectsBadEncodings(encoded: String) {
        #expect(!PasswordHasher().verify("pw", against: encoded))
    }

    // Proves the secret formats: 32 lower-case hex characters, kiosk_-prefixed base64url tokens, SHA-256 hex.
    @Test func secretFormats() {
        let secret = SecretGenerator.sharedSecret()
        #expect(secret.count == 32)
        #expect(secret.allSatisfy { "0123456789abcdef".contains($0) })
        #expect(SecretGenerator.sharedSecret() != secret)
        let token = SecretGenerator.token()
        #expect(token.hasPrefix("kiosk_"))
        #expect(token.count == 6 + 43)
        #expect(token.dropFirst(6).allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        #expect(SecretGenerator.sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}
