import Foundation

/// What Apple's support, a parent or Family Sharing does to a purchase, and the rules of each, with no I/O: which
/// transactions it may touch, how it revises one (a prorated refund refunds a share of the price, rounded down),
/// and when doing it again changes nothing. The store's `RefundService` carries them out.
public enum Revocation: Sendable, Hashable {
    /// Refunded in full (`percentage` nil) or prorated; `reason` is Apple's `revocationReason`.
    case refund(reason: Int, percentage: Int?)
    /// A refund request turned down.
    case declineRefund
    /// A refund taken back: the transaction counts again.
    case reverseRefund
    /// Family Sharing stopped: the family member loses the purchase.
    case revoke
    /// The customer asked for a refund; the app's server may send consumption information.
    case requestRefund(reason: String)

    public var notificationType: NotificationType {
        switch self {
        case .refund: .refund
        case .declineRefund: .refundDeclined
        case .reverseRefund: .refundReversed
        case .revoke: .revoke
        case .requestRefund: .consumptionRequest
        }
    }

    /// One action of each kind.
    public static let kinds: [Revocation] = [
        .refund(reason: 0, percentage: nil), .declineRefund, .reverseRefund, .revoke, .requestRefund(reason: ""),
    ]

    /// The notification of this action done before, when doing it again would change nothing. Refunds, revocations and
    /// reversals are told by the transaction's state and how many of each notification it has had, never by their
    /// order in time: two can share a millisecond.
    public func earlierNotification(about transaction: StoreTransaction, among about: [ServerNotification])
        -> ServerNotification?
    {
        func last(_ type: NotificationType) -> ServerNotification? { about.last { $0.notificationType == type } }
        func count(_ type: NotificationType) -> Int { about.count { $0.notificationType == type } }
        switch self {
        case .refund:
            return transaction.revocationType?.isRefund == true ? last(.refund) : nil
        case .revoke:
            return transaction.revocationType == .familyRevoke ? last(.revoke) : nil
        case .reverseRefund:
            let reversals = count(.refundReversed)
            return transaction.revocationDate == nil && reversals > 0 && reversals >= count(.refund)
                ? last(.refundReversed) : nil
        case .declineRefund, .requestRefund:
            guard transaction.revocationDate == nil, let latest = about.last,
                latest.notificationType == notificationType
            else { return nil }
            return latest
        }
    }

    /// Refuses what cannot be done to `transaction`: reversing what is not refunded, sharing a consumable, asking
    /// about a product Apple never asks about, revoking what is already revoked.
    public func checkAllowed(on transaction: StoreTransaction) throws {
        let id = transaction.id
        switch self {
        case .reverseRefund:
            guard transaction.revocationType?.isRefund == true else {
                throw KioskError(
                    .notRefunded, "The transaction \(id) is not refunded, so there is no refund to reverse.",
                    field: "transactionId", fix: "Refund it first with `kiosk test refund`.")
            }
        case .revoke where transaction.productType == .consumable:
            throw KioskError(
                .notShareable, "The transaction \(id) is a consumable; Family Sharing never shares consumables.",
                field: "transactionId", fix: "Revoke a non-consumable or subscription transaction.")
        case .requestRefund where ![.consumable, .autoRenewable].contains(transaction.productType):
            throw KioskError(
                .noConsumptionRequest,
                "The transaction \(id) is a \(transaction.productType.appleName); Apple asks for consumption "
                    + "information only about consumables and auto-renewable subscriptions.",
                field: "transactionId", fix: "Request a refund of a consumable or auto-renewable transaction.")
        default:
            if let type = transaction.revocationType {
                throw KioskError(
                    .alreadyRevoked, "The transaction \(id) is already revoked (\(type)).", field: "transactionId",
                    fix: type == .familyRevoke
                        ? "Use a transaction that is not revoked."
                        : "Reverse the refund first with `kiosk test reverse-refund`.")
            }
        }
    }

    /// Revises `transaction` as the action says; false when the action changes no transaction (a declined refund, a
    /// refund request).
    public func apply(to transaction: inout StoreTransaction, now: Date) -> Bool {
        switch self {
        case .refund(let reason, let percentage):
            transaction.revocationDate = now
            transaction.revocationReason = reason
            transaction.revocationType = percentage == nil ? .refundFull : .refundProrated
            transaction.refundedMinorUnits =
                percentage.map { transaction.priceMinorUnits * $0 / 100 }
                ?? transaction.priceMinorUnits
        case .revoke:
            transaction.revocationDate = now
            transaction.revocationReason = 0
            transaction.revocationType = .familyRevoke
            transaction.refundedMinorUnits = 0
        case .reverseRefund:
            transaction.revocationDate = nil
            transaction.revocationReason = nil
            transaction.revocationType = nil
            transaction.refundedMinorUnits = 0
        case .declineRefund, .requestRefund:
            return false
        }
        return true
    }
}
