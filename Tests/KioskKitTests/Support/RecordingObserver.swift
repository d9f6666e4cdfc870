import Foundation
import Synchronization
import Testing

@testable import KioskKit

/// An observer that records every callback as an event tests can await, and answers `shouldAddStorePayment`
/// with a fixed answer.
final class RecordingObserver: SKPaymentTransactionObserver, Sendable {
    enum Event: Sendable, Equatable, CustomStringConvertible {
        /// Product id and state of each transaction in one `updatedTransactions` call.
        case updated([Change])
        case removed([Change])
        case restoreFinished
        case restoreFailed(SKError.Code)
        case shouldAddStorePayment(productId: String, quantity: Int)
        /// Product ids of one `didRevokeEntitlementsForProductIdentifiers` call.
        case revoked([String])

        var description: String {
            switch self {
            case .updated(let changes): "updated\(changes)"
            case .removed(let changes): "removed\(changes)"
            case .restoreFinished: "restoreFinished"
            case .restoreFailed(let code): "restoreFailed(\(code))"
            case .shouldAddStorePayment(let productId, let quantity): "shouldAdd(\(productId)×\(quantity))"
            case .revoked(let productIds): "revoked\(productIds)"
            }
        }
    }

    struct Change: Sendable, Equatable, CustomStringConvertible {
        var productId: String
        var state: SKPaymentTransactionState
        var description: String { "\(productId):\(state)" }
    }

    private let recorded = Mutex<(events: [Event], read: Int)>(([], 0))
    private let addStorePayments: Bool
    /// Every transaction object delivered, newest last, so tests can finish them.
    let delivered = Mutex<[SKPaymentTransaction]>([])
    /// Payments kept when `shouldAddStorePayment` answered false.
    let postponed = Mutex<[SKPayment]>([])

    init(addStorePayments: Bool = true) {
        self.addStorePayments = addStorePayments
    }

    /// Every event so far.
    var events: [Event] { recorded.withLock { $0.events } }

    /// The next event not returned yet; nil (and a test issue) if none arrives within `seconds` (60: the full
    /// suite keeps both cores busy, and a sleeping task may wake long after it asked to). The events are looked at
    /// once more after every sleep, so a wake-up past the deadline still finds an event that arrived meanwhile.
    func next(within seconds: Double = 60, sourceLocation: SourceLocation = #_sourceLocation) async -> Event? {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while true {
            let event = recorded.withLock { recorded -> Event? in
                guard recorded.read < recorded.events.count else { return nil }
                recorded.read += 1
                return recorded.events[recorded.read - 1]
            }
            if let event { return event }
            if ContinuousClock.now >= deadline { break }
            try? await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("No observer event within \(seconds) s; got \(events)", sourceLocation: sourceLocation)
        return nil
    }

    /// Awaits the next event and checks it is `expected`, reporting the actual event otherwise.
    func expectNext(_ expected: Event, sourceLocation: SourceLocation = #_sourceLocation) async {
        let event = await next(sourceLocation: sourceLocation)
        #expect(event == expected, "all events: \(events)", sourceLocation: sourceLocation)
    }

    private func record(_ event: Event) {
        recorded.withLock { $0.events.append(event) }
    }

    func paymentQueue(_ queue: SKPaymentQueue, updatedTransactions transactions: [SKPaymentTransaction]) {
        delivered.withLock { $0 += transactions }
        record(.updated(transactions.map(Self.change)))
    }

    func paymentQueue(_ queue: SKPaymentQueue, removedTransactions transactions: [SKPaymentTransaction]) {
        record(.removed(transactions.map(Self.change)))
    }

    func paymentQueueRestoreCompletedTransactionsFinished(_ queue: SKPaymentQueue) {
        record(.restoreFinished)
    }

    func paymentQueue(_ queue: SKPaymentQueue, restoreCompletedTransactionsFailedWithError error: any Error) {
        record(.restoreFailed((error as? SKError)?.code ?? .unknown))
    }

    func paymentQueue(_ queue: SKPaymentQueue, shouldAddStorePayment payment: SKPayment, for product: SKProduct) -> Bool
    {
        record(.shouldAddStorePayment(productId: product.productIdentifier, quantity: payment.quantity))
        if !addStorePayments { postponed.withLock { $0.append(payment) } }
        return addStorePayments
    }

    func paymentQueue(_ queue: SKPaymentQueue, didRevokeEntitlementsForProductIdentifiers productIdentifiers: [String])
    {
        record(.revoked(productIdentifiers))
    }

    private static func change(_ transaction: SKPaymentTransaction) -> Change {
        Change(productId: transaction.payment.productIdentifier, state: transaction.transactionState)
    }
}
