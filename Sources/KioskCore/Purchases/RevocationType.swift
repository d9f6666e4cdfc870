/// Apple's `revocationType`: why a transaction no longer counts.
public enum RevocationType: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// Refunded in full.
    case refundFull = "REFUND_FULL"
    /// Refunded in part (`revocationPercentage` says how much).
    case refundProrated = "REFUND_PRORATED"
    /// Family Sharing stopped for the family member.
    case familyRevoke = "FAMILY_REVOKE"

    /// A refund, in full or in part: what a reversal can take back.
    public var isRefund: Bool { self != .familyRevoke }

    /// Apple's name, as on the wire.
    public var description: String { rawValue }
}
