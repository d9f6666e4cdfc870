import Crypto
import ExtrasBase64
import Foundation
import KioskCore
import _CryptoExtras

/// Hashes passwords (sandbox testers, console users) with scrypt and checks them in constant time.
///
/// The encoding names its parameters, `scrypt$N$r$p$salt$hash` (salt and hash standard base64), so the cost can be
/// raised later while old hashes still verify:
///
/// ```swift
/// let hasher = PasswordHasher()
/// let stored = try hasher.hash("s3cret")      // "scrypt$16384$8$1$…$…"
/// hasher.verify("s3cret", against: stored)     // true
/// ```
public struct PasswordHasher: Sendable {
    /// The CPU/memory cost N, a power of two.
    public let rounds: Int
    /// The block size r.
    public let blockSize: Int
    /// The parallelism p.
    public let parallelism: Int

    private static let scheme = "scrypt"
    private static let saltByteCount = 16
    private static let hashByteCount = 32

    /// Creates a hasher with the given cost; the defaults (N = 2^14, r = 8, p = 1) take ≈ 16 MiB and tens of ms.
    public init(rounds: Int = 1 << 14, blockSize: Int = 8, parallelism: Int = 1) {
        self.rounds = rounds
        self.blockSize = blockSize
        self.parallelism = parallelism
    }

    /// Hashes a password with a fresh random 16-byte salt.
    ///
    /// - Returns: `scrypt$N$r$p$saltBase64$hashBase64`.
    /// - Throws: ``KioskError`` when the parameters are outside what scrypt accepts.
    public func hash(_ password: String) throws -> String {
        let salt = SecretGenerator.randomBytes(Self.saltByteCount)
        let derived = try Self.derive(
            password,
            salt: salt,
            byteCount: Self.hashByteCount,
            rounds: rounds,
            blockSize: blockSize,
            parallelism: parallelism
        )
        return [
            Self.scheme, String(rounds), String(blockSize), String(parallelism),
            Base64.encodeToString(bytes: salt), Base64.encodeToString(bytes: derived),
        ].joined(separator: "$")
    }

    /// ``hash(_:)`` on a dispatch thread: scrypt takes tens of milliseconds of CPU, which must never occupy one of
    /// Swift concurrency's few threads (a burst of sign-ups would stall every request the server is handling).
    public func hashOffCooperativePool(_ password: String) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(with: Result { try hash(password) })
            }
        }
    }

    /// ``verify(_:against:)`` on a dispatch thread, for the same reason as ``hashOffCooperativePool(_:)``.
    public func verifyOffCooperativePool(_ password: String, against encoded: String) async -> Bool {
        await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(returning: verify(password, against: encoded))
            }
        }
    }

    /// Checks a password against an encoding made by ``hash(_:)`` (with any parameters in the accepted range).
    ///
    /// - Returns: `false` for a wrong password and for an encoding that is malformed or asks for excessive cost.
    public func verify(_ password: String, against encoded: String) -> Bool {
        let parts = encoded.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 6, parts[0] == Self.scheme,
            let rounds = Int(parts[1]), let blockSize = Int(parts[2]), let parallelism = Int(parts[3]),
            Self.acceptable(rounds: rounds, blockSize: blockSize, parallelism: parallelism),
            let salt = try? Base64.decode(string: String(parts[4])), !salt.isEmpty,
            let expected = try? Base64.decode(string: String(parts[5])), (16...64).contains(expected.count),
            let derived = try? Self.derive(
                password,
                salt: salt,
                byteCount: expected.count,
                rounds: rounds,
                blockSize: blockSize,
                parallelism: parallelism
            )
        else {
            return false
        }
        return Self.constantTimeEqual(derived, expected)
    }

    /// Bounds on stored parameters, so a crafted hash cannot make verification take unbounded time or memory.
    private static func acceptable(rounds: Int, blockSize: Int, parallelism: Int) -> Bool {
        rounds >= 2 && rounds <= 1 << 20 && rounds & (rounds - 1) == 0
            && (1...32).contains(blockSize) && (1...16).contains(parallelism)
            && 128 * rounds * blockSize <= 256 << 20
    }

    private static func derive(
        _ password: String,
        salt: [UInt8],
        byteCount: Int,
        rounds: Int,
        blockSize: Int,
        parallelism: Int
    ) throws -> [UInt8] {
        guard acceptable(rounds: rounds, blockSize: blockSize, parallelism: parallelism) else {
            throw KioskError(
                .passwordHashParameters,
                "scrypt parameters N=\(rounds), r=\(blockSize), p=\(parallelism) are out of range.",
                fix: "Use N a power of two up to 2^20, r in 1...32, p in 1...16."
            )
        }
        let key = try KDF.Scrypt.deriveKey(
            from: Array(password.utf8),
            salt: salt,
            outputByteCount: byteCount,
            rounds: rounds,
            blockSize: blockSize,
            parallelism: parallelism
        )
        return key.withUnsafeBytes { Array($0) }
    }

    /// Compares without an early exit, so timing reveals nothing about where two hashes differ.
    private static func constantTimeEqual(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices {
            difference |= left[index] ^ right[index]
        }
        return difference == 0
    }
}
