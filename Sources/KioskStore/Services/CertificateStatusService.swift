import Foundation
import KioskCore
import KioskSigning
import KioskStorage

/// The revocation status of the signing chains: revokes certificates and answers OCSP requests about them.
public struct CertificateStatusService: Sendable {
    let database: any KioskDatabase
    let clock: any KioskClock
    let signing: StoreSigning
    /// One responder per environment whose CA keys the store holds.
    private let responders: [StoreEnvironment: OCSPResponder]

    init(
        database: any KioskDatabase, clock: any KioskClock, signing: StoreSigning,
        authorityKeys: [StoreEnvironment: SigningKeyStore.AuthorityKeys]
    ) {
        self.database = database
        self.clock = clock
        self.signing = signing
        var responders: [StoreEnvironment: OCSPResponder] = [:]
        for (environment, keys) in authorityKeys {
            responders[environment] = OCSPResponder(identity: signing.identity(environment), keys: keys)
        }
        self.responders = responders
    }

    /// Answers a DER OCSP request about `environment`'s chain with a DER OCSP response: `unauthorized` when the
    /// store lacks that chain's CA keys (an operator's chain), else the responder's answer at the clock's now.
    public func respond(to requestDER: [UInt8], environment: StoreEnvironment) async throws -> [UInt8] {
        guard let responder = responders[environment] else {
            return try OCSP.Response(error: .unauthorized).derEncoded()
        }
        let revocations = try await database.transaction { tx in
            try await tx.certificateRevocations(environment: environment)
        }
        var bySerial: [String: OCSPResponder.Revocation] = [:]
        for revocation in revocations {
            bySerial[revocation.serialNumber] = .init(revokedAt: revocation.revokedAt, reason: revocation.reason)
        }
        return responder.respond(to: requestDER, revocations: bySerial, now: clock.now())
    }

    /// Revokes the leaf or the intermediate of `environment`'s chain now; revoking it again returns the first
    /// revocation unchanged.
    ///
    /// - Returns: The stored revocation and whether this call made it.
    /// - Throws: ``KioskError`` `invalid_reason` for a reason outside 0…10 or 7 (unused in RFC 5280).
    public func revoke(
        _ role: CertificateRevocation.Role, environment: StoreEnvironment, reason: Int?
    ) async throws -> (revocation: CertificateRevocation, created: Bool) {
        if let reason, !(0...10).contains(reason) || reason == 7 {
            throw KioskError(
                .invalidReason, "\(reason) is not a CRLReason code.", field: "reason",
                fix: "Use 0 (unspecified), 1 (keyCompromise), 2 (cACompromise), 3 (affiliationChanged), "
                    + "4 (superseded), 5 (cessationOfOperation), 6 (certificateHold), 8 (removeFromCRL), "
                    + "9 (privilegeWithdrawn) or 10 (aACompromise), or leave it out.")
        }
        let identity = signing.identity(environment)
        let certificate = role == .leaf ? identity.leaf : identity.intermediate
        let requested = CertificateRevocation(
            environment: environment, serialNumber: OCSPResponder.serialKey(certificate), role: role,
            revokedAt: clock.now(), reason: reason)
        return try await database.transaction { tx in
            let earlier = try await tx.certificateRevocations(environment: environment)
                .first { $0.serialNumber == requested.serialNumber }
            if let earlier { return (earlier, false) }
            return (try await tx.insertCertificateRevocation(requested), true)
        }
    }

    /// The revoked certificates of `environment`, oldest first.
    public func revocations(environment: StoreEnvironment) async throws -> [CertificateRevocation] {
        try await database.transaction { tx in try await tx.certificateRevocations(environment: environment) }
    }
}
