import Foundation
import KioskCore
import KioskProtocol
import Synchronization

/// A payment in the queue and what the store made of it.
///
/// The queue keeps one object per payment: an Ask to Buy payment's object goes from `deferred` to `purchased` or
/// `failed`. Its properties change on the queue's callback queue just before observers are told.
public final class SKPaymentTransaction: Sendable, CustomStringConvertible {
    /// Identifies the transaction on this device.
    let id: UUID
    private let record: Mutex<StoredTransaction>

    init(_ record: StoredTransaction) {
        self.id = record.id
        self.record = Mutex(record)
    }

    func update(_ record: StoredTransaction) {
        self.record.withLock { $0 = record }
    }

    var stored: StoredTransaction { record.withLock { $0 } }

    /// The payment, with the `applicationUsername` it was made with (kept even when the transaction comes back
    /// at a later launch).
    public var payment: SKPayment { SKPayment(stored.payment) }

    public var transactionState: SKPaymentTransactionState {
        let stored = stored
        if stored.localError != nil { return .failed }
        switch stored.entry?.state {
        case nil, .promoted: return .purchasing
        case .purchased: return .purchased
        case .failed: return .failed
        case .deferred: return .deferred
        case .restored: return .restored
        // Revocations never become transactions of the queue (they reach observers as revoked entitlements).
        case .revoked: return .purchased
        }
    }

    /// The store's transaction id; set when `purchased` or `restored`.
    public var transactionIdentifier: String? { stored.entry?.transaction?.transactionId }

    /// When the store charged (or restored); set when `purchased` or `restored`.
    public var transactionDate: Date? {
        stored.entry?.transaction.flatMap { Date(checkedMillisecondsSince1970: $0.purchaseDate) }
    }

    /// For a restored transaction, the original purchase.
    public var original: SKPaymentTransaction? {
        guard var entry = stored.entry, entry.state == .restored, var info = entry.transaction else { return nil }
        info.transactionId = info.originalTransactionId
        info.purchaseDate = info.originalPurchaseDate
        entry.transaction = info
        entry.state = .purchased
        return SKPaymentTransaction(StoredTransaction(id: UUID(), entry: entry))
    }

    /// Why the payment failed; set when `failed`.
    public var error: (any Error)? {
        let stored = stored
        return (stored.localError ?? stored.entry?.error).map(SKError.init)
    }

    /// The iOS 6-style transaction receipt (`verifyReceipt` accepts it); set when `purchased` or `restored` and
    /// the store made one.
    public var transactionReceipt: Data? {
        guard let text = stored.entry?.transaction?.transactionReceipt, !text.isEmpty else { return nil }
        return Data(base64Encoded: text)
    }

    /// Kiosk addition: the signed transaction (compact JWS, App Store `JWSTransactionDecodedPayload`) to send to
    /// the app's server for verification; set when `purchased` or `restored`.
    public var signedTransaction: String? { stored.entry?.transaction?.signedTransaction }

    public var description: String {
        "SKPaymentTransaction(\(payment.productIdentifier), \(transactionState)\(transactionIdentifier.map { ", id \($0)" } ?? ""))"
    }
}
