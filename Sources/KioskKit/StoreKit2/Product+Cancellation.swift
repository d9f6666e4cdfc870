import Foundation
import KioskProtocol

extension Product.SubscriptionInfo {
    /// What the subscriber does with the retention message the App Store shows when they tap Cancel.
    public enum RetentionChoice: String, Sendable, Hashable, CaseIterable {
        /// They confirm the cancellation: auto-renew goes off.
        case cancel
        /// They take what is shown: the offer or plan switch, or they keep the subscription after a message.
        case accept
    }

    /// How a cancellation went: the subscription after it, and what the subscriber was shown.
    public struct CancellationOutcome: Sendable, Hashable {
        /// `cancelled` (auto-renew is off), `kept`, `switched`, `offer-redeemed` or `refused` (taking the offer
        /// failed; nothing changed); nil when auto-renew was already off.
        public let outcome: String?
        public let willAutoRenew: Bool
        public let autoRenewProductID: String
        public let expirationDate: Date
        /// What was shown: `message`, `alternate-product`, `promotional-offer`, `retention-offer` or `none`.
        public let shownKind: String?
        /// The retention message's header and body, when one was shown.
        public let messageHeader: String?
        public let messageBody: String?
        /// The product a plan switch or an offer is for, and the offer's identifier.
        public let productID: String?
        public let offerID: String?
        /// The whole story in one sentence.
        public let summary: String?

        init(_ answer: CancelSubscriptionResponse) {
            let event = answer.retention
            outcome = event?.outcome
            willAutoRenew = answer.autoRenewStatus
            autoRenewProductID = answer.autoRenewProductId
            expirationDate = Date(timeIntervalSince1970: TimeInterval(answer.expiresDate) / 1000)
            shownKind = event?.shown.kind
            messageHeader = event?.shown.header
            messageBody = event?.shown.body
            productID = event?.shown.productId
            offerID = event?.shown.offerIdentifier
            summary = event?.summary
        }
    }

    /// The subscriber taps Cancel for their subscription `originalTransactionID` in the App Store's
    /// manage-subscriptions sheet (what StoreKit's `AppStore.showManageSubscriptions(in:)` opens), and does
    /// `choice` with the retention message the App Store shows: the app's Get Retention Message endpoint's answer,
    /// else its retention offer, else its default message.
    ///
    /// `requestID` identifies this cancellation: send the same one again to retry after a failure, and the store
    /// answers the first outcome without changing anything twice.
    public static func cancelAutoRenew(
        originalTransactionID: UInt64, choice: RetentionChoice = .cancel, requestID: UUID = UUID()
    ) async throws -> CancellationOutcome {
        try await cancelAutoRenew(
            originalTransactionID: originalTransactionID, choice: choice, requestID: requestID,
            client: KioskKit.sharedClient)
    }

    /// ``cancelAutoRenew(originalTransactionID:choice:requestID:)`` through an explicit client.
    public static func cancelAutoRenew(
        originalTransactionID: UInt64, choice: RetentionChoice = .cancel, requestID: UUID = UUID(),
        client: KioskStoreClient
    ) async throws -> CancellationOutcome {
        do {
            return CancellationOutcome(
                try await client.cancelSubscription(
                    originalTransactionID,
                    CancelSubscriptionRequest(requestIdentifier: requestID, retentionChoice: choice.rawValue)))
        } catch {
            throw SKError(wrapping: error)
        }
    }
}
