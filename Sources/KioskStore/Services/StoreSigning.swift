import Foundation
import KioskCore
import KioskSigning

/// The store's signing identities, one chain per environment, and their JWS signers.
public struct StoreSigning: Sendable {
    public let identities: [StoreEnvironment: SigningIdentity]
    private let signers: [StoreEnvironment: JWSSigner]

    public init(identities: [StoreEnvironment: SigningIdentity]) {
        self.identities = identities
        self.signers = identities.mapValues { JWSSigner(identity: $0) }
    }

    public func identity(_ environment: StoreEnvironment) -> SigningIdentity {
        guard let identity = identities[environment] else { preconditionFailure("no signing identity for \(environment)") }
        return identity
    }

    /// Signs `payload` as a compact JWS with the environment's leaf key and `x5c` chain.
    public func sign(_ payload: some Encodable, environment: StoreEnvironment) throws -> String {
        guard let signer = signers[environment] else { preconditionFailure("no signer for \(environment)") }
        return try signer.sign(payload: payload)
    }
}
