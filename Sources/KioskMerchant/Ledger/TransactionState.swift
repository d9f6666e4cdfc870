import Foundation

/// The state the ledger holds for one transaction (a grant, or a purchase no user is known for yet), as far as
/// ordering goes: what an arriving state is compared with.
struct LedgerState: Sendable, Equatable {
    /// The store's revision of the state (`kioskRevision`); nil for data without one (Apple's, receipts).
    var revision: Int64?
    var signedDate: Date
    var isRevoked: Bool
    /// Standing again after a revocation was undone (a refund reversed).
    var reinstated: Bool
}

/// Where a signed state of a transaction comes from, which says whether a standing state may undo a revocation.
enum StateProvenance: String, Sendable, Hashable {
    /// A copy signed earlier and carried here: the app's signed transaction, a notification. It never undoes a
    /// revocation by itself: the app's older copy of a refunded purchase must not give it back.
    case copy
    /// The store's answer about the transaction now (verifyReceipt, Get Transaction Info, transaction history): a
    /// standing state signed after a revocation says the revocation was undone.
    case present
    /// A `REFUND_REVERSED` notification: its standing state undoes a revocation signed no later.
    case reversal
}

extension PurchaseFacts {
    /// Whether this state is newer than what the ledger holds, and so replaces it. State and the store's
    /// revisions decide, not arrival, and dates only where nothing else can:
    ///
    /// 1. Both carry the store's revision: the higher one is newer.
    /// 2. Two states that agree on standing or revoked: the later `signedDate` (an extension, say).
    /// 3. A revocation over a standing state: always, unless that state is a reinstatement signed no earlier — a
    ///    refund wins over its purchase whatever their dates, equal ones (a frozen clock, one millisecond) included.
    /// 4. A standing state over a revocation: only a reversal signed no earlier, or the store's present answer
    ///    signed later.
    func supersedes(_ held: LedgerState) -> Bool {
        if let revision, let heldRevision = held.revision { return revision > heldRevision }
        switch (isRevoked, held.isRevoked) {
        case (true, true), (false, false): return signedDate > held.signedDate
        case (true, false): return !held.reinstated || signedDate > held.signedDate
        case (false, true):
            switch provenance {
            case .copy: return false
            case .present: return signedDate > held.signedDate
            case .reversal: return signedDate >= held.signedDate
            }
        }
    }

    /// The state the ledger holds once this one replaced `held` (nil: nothing held before).
    func replacing(_ held: LedgerState?) -> LedgerState {
        LedgerState(
            revision: revision ?? held?.revision, signedDate: signedDate, isRevoked: isRevoked,
            reinstated: !isRevoked && (held?.isRevoked == true || held?.reinstated == true))
    }

    /// This state as if the ledger held it, for choosing the newest of several the store sent: a standing state
    /// the store gives as its present word, or as a reversal, counts as a reinstatement (only a later revocation
    /// replaces it).
    var asHeld: LedgerState {
        LedgerState(
            revision: revision, signedDate: signedDate, isRevoked: isRevoked,
            reinstated: !isRevoked && provenance != .copy)
    }
}
