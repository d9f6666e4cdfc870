import Foundation

/// A revoked certificate of one environment's signing chain, as the store's OCSP responder reports it.
public struct CertificateRevocation: Sendable, Hashable, Codable {
    /// Which certificate of a chain. The root is never revoked: merchants trust it directly.
    public enum Role: String, Sendable, Hashable, Codable, CaseIterable {
        case leaf
        case intermediate
    }

    public var environment: StoreEnvironment
    /// The certificate's serial number, upper-case hex of its DER INTEGER content bytes.
    public var serialNumber: String
    public var role: Role
    public var revokedAt: Date
    /// The RFC 5280 CRLReason code (0…10, not 7), if the operator gave one.
    public var reason: Int?

    public init(environment: StoreEnvironment, serialNumber: String, role: Role, revokedAt: Date, reason: Int?) {
        self.environment = environment
        self.serialNumber = serialNumber
        self.role = role
        self.revokedAt = revokedAt
        self.reason = reason
    }
}
