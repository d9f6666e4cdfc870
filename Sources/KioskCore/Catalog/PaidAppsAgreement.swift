import Foundation

/// The Paid Apps agreement of the store's developer. Until it is active, no product is available to
/// clients: seed 002's "zero products" pitfall.
public struct PaidAppsAgreement: Codable, Sendable, Hashable {
    public enum Status: String, Codable, Sendable, Hashable {
        case pending
        case active
    }

    public var status: Status
    public var acceptedAt: Date?
    /// When the developer's Small Business Program enrolment took effect (15% commission on sales from then on);
    /// nil when not enrolled.
    public var smallBusinessProgramSince: Date?

    public init(status: Status = .pending, acceptedAt: Date? = nil, smallBusinessProgramSince: Date? = nil) {
        self.status = status
        self.acceptedAt = acceptedAt
        self.smallBusinessProgramSince = smallBusinessProgramSince
    }
}
