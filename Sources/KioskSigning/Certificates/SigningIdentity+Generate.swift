import Foundation
import KioskCore

extension SigningIdentity {
    /// Generates a fresh chain for one environment and keeps only what signing needs.
    ///
    /// - Parameters:
    ///   - environment: Names the environment in every subject.
    ///   - now: The instant the validity windows are computed from (see ``SigningProfile``).
    /// - Returns: The identity; the CA keys are discarded.
    ///   Use ``SigningChain/generate(environment:now:)`` to keep them.
    /// - Throws: when a certificate cannot be built.
    public static func generate(environment: StoreEnvironment, now: Date) throws -> SigningIdentity {
        try SigningChain.generate(environment: environment, now: now).identity
    }
}
