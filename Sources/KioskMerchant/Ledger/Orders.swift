import Foundation
import KioskCore
import KioskSQL

/// Orders inside one database transaction, and the rules that tie a transaction to its order and user.
struct Orders: Sendable {
    let session: SQLSession

    func order(id: String) async throws -> OrderRecord? {
        try await session.first("SELECT * FROM orders WHERE id = \(bind: id)").map(OrderRecord.init(row:))
    }

    func order(appAccountToken: UUID) async throws -> OrderRecord? {
        try await session.first(
            "SELECT * FROM orders WHERE app_account_token = \(bind: appAccountToken.uuidString.lowercased())"
        ).map(OrderRecord.init(row:))
    }

    func order(transactionId: String) async throws -> OrderRecord? {
        try await session.first("SELECT * FROM orders WHERE transaction_id = \(bind: transactionId) LIMIT 1")
            .map(OrderRecord.init(row:))
    }

    /// The order `id` if `userId` owns it in the app; a clear refusal otherwise.
    func ownedOrder(id: String, userId: String, bundleId: String) async throws -> OrderRecord {
        guard let order = try await order(id: id), order.bundleId == bundleId else {
            throw KioskError(
                .unknownOrder, "There is no order \(id) for \(bundleId).", field: "orderId",
                fix: "Send the orderId the merchant answered when the order was created.")
        }
        guard order.userId == userId else { throw Self.anotherUsersOrder(order.id) }
        return order
    }

    /// Who an app's delivery is for: the submitting user, through the order the transaction names.
    ///
    /// The order is found by the transaction's `appAccountToken`; when a redelivered transaction lost it (seed
    /// 004: `applicationUsername` can come back nil), by the `orderId` the app kept, or by an earlier binding of
    /// the same transaction. An order of another user is refused; a transaction with no order (restored, bought
    /// outside the app) is the submitting user's.
    func ownerForApp(_ facts: PurchaseFacts, userId: String, requestedOrderId: String?, bundleId: String)
        async throws -> GrantOwner
    {
        var found: OrderRecord?
        if let token = facts.appAccountToken { found = try await order(appAccountToken: token) }
        if found == nil, let requestedOrderId {
            found = try await ownedOrder(id: requestedOrderId, userId: userId, bundleId: bundleId)
        }
        if found == nil { found = try await order(transactionId: facts.transactionId) }
        guard let order = found else { return GrantOwner(userId: userId, orderId: nil) }
        guard order.userId == userId else { throw Self.anotherUsersOrder(order.id) }
        // The user paid, so the purchase is theirs either way; the order is bound only to the transaction that
        // fulfils it (same product, not delivered by another transaction).
        return GrantOwner(userId: userId, orderId: order.fulfilled(by: facts) ? order.id : nil)
    }

    /// Who a transaction the store told us of (notification, reconciliation) is for: its order's user, else the
    /// user its subscription's earlier transactions went to, else (when the app passes its users' ids as app
    /// account tokens, `usersByAppAccountToken`) the user its token names; nil when nobody is known yet.
    func ownerFromStore(_ facts: PurchaseFacts, tokenIsUser: Bool) async throws -> GrantOwner? {
        if let token = facts.appAccountToken, let order = try await order(appAccountToken: token) {
            // Renewals carry the first purchase's token: same user, but the order stays with its own transaction.
            return GrantOwner(userId: order.userId, orderId: order.fulfilled(by: facts) ? order.id : nil)
        }
        if let order = try await order(transactionId: facts.transactionId) {
            return GrantOwner(userId: order.userId, orderId: order.id)
        }
        if let userId = try await GrantLedger(session: session).owner(
            originalTransactionId: facts.originalTransactionId, environment: facts.environment)
        {
            return GrantOwner(userId: userId, orderId: nil)
        }
        if tokenIsUser, let token = facts.appAccountToken {
            return GrantOwner(userId: token.uuidString.lowercased(), orderId: nil)
        }
        return nil
    }

    private static func anotherUsersOrder(_ id: String) -> KioskError {
        KioskError(
            .orderOfAnotherUser, "Order \(id) belongs to another user; nothing was granted.", field: "orderId",
            fix: "Deliver a purchase as the user who ordered it.")
    }
}

extension OrderRecord {
    /// Whether `facts` is the purchase this order was made for: its product, and no other transaction took it.
    func fulfilled(by facts: PurchaseFacts) -> Bool {
        productId == facts.productId && (transactionId == nil || transactionId == facts.transactionId)
    }
}
