import Foundation
import KioskCore
import KioskSQL
import SQLKit

/// Who a transaction is for, and through which order.
struct GrantOwner: Sendable, Hashable {
    var userId: String
    var orderId: String?
}

/// What applying a transaction did.
enum GrantOutcome: Sendable, Equatable {
    /// Granted now (for a transaction already refunded: recorded, nothing given).
    case granted(revoked: Bool)
    /// Granted before to the same user; a newer state (refund, reversal, extension) may have been applied.
    case alreadyGranted(revoked: Bool)
    /// Granted before to another user: nothing changes.
    case grantedToAnotherUser(String)
    /// No user known yet: kept as unclaimed until the app sends it.
    case unclaimed

    /// The word the delivery answer uses.
    var deliveryOutcome: String {
        switch self {
        case .granted(let revoked): revoked ? "revoked" : "granted"
        case .alreadyGranted(let revoked): revoked ? "revoked" : "already_granted"
        case .grantedToAnotherUser: "granted_to_another_user"
        case .unclaimed: "unclaimed"
        }
    }
}

/// The grant ledger, inside one database transaction: every method's changes commit or roll back together, so a
/// grant, its balance credit, its order update and its history line are never half-written.
struct GrantLedger: Sendable {
    let session: SQLSession

    // MARK: Applying transactions

    /// Grants `facts` to `owner` exactly once, or brings an existing grant up to the newest state.
    ///
    /// Order of arrival never matters: the row's key (environment, transaction id) admits one grant, and a state
    /// is applied only when it supersedes the one held (`PurchaseFacts.supersedes`: the store's revision, then
    /// revocation over purchase, then dates). What was parked before a user was known (a refund that came first)
    /// is applied with the grant, unless `facts` supersedes it. A transaction refunded before it was ever granted
    /// is recorded revoked and credits nothing.
    func apply(
        _ facts: PurchaseFacts, owner: GrantOwner?, product: MerchantConfiguration.ProductSettings, source: String,
        now: Date
    ) async throws -> GrantOutcome {
        if let existing = try await grant(transactionId: facts.transactionId, environment: facts.environment) {
            try await rememberAppTransaction(of: facts, userId: existing.userId)
            // A newer signed state is the store's word whoever brings it (a refund carried by a notification
            // whose order names someone else still takes back the grant); the grant itself never changes hands.
            let updated = try await updateState(existing, to: facts, source: source, now: now)
            if let owner, owner.userId != existing.userId { return .grantedToAnotherUser(existing.userId) }
            return .alreadyGranted(revoked: updated.isRevoked)
        }
        guard let owner else {
            try await keepUnclaimed(facts, now: now)
            return .unclaimed
        }
        try await rememberAppTransaction(of: facts, userId: owner.userId)
        var record = GrantRecord(
            facts: facts, userId: owner.userId, orderId: owner.orderId, product: product, source: source,
            grantedAt: now)
        if let parked = try await unclaimed(transactionId: facts.transactionId, environment: facts.environment),
            !facts.supersedes(parked.state)
        {
            record.revokedDate = parked.revokedDate
            record.revocationReason = parked.revocationReason
            record.expiresDate = parked.expiresDate ?? record.expiresDate
            record.stateSignedDate = parked.state.signedDate
            record.stateRevision = parked.state.revision ?? facts.revision
            record.reinstated = parked.state.reinstated
        }
        guard try await insert(record) else {
            // Another transaction granted it between the read and the insert (PostgreSQL): apply on top of that.
            return try await apply(facts, owner: owner, product: product, source: source, now: now)
        }
        try await appendEvent(
            record, kind: record.isRevoked ? "revoked" : "granted", source: source, now: now,
            detail: record.isRevoked
                ? "recorded already refunded (\(facts.revocationReason ?? "revoked")); nothing given"
                : grantDetail(record))
        if let orderId = owner.orderId {
            try await session.run(
                """
                UPDATE orders SET state = 'delivered', transaction_id = \(bind: facts.transactionId),
                    delivered_at = \(bind: now.millisecondsSince1970)
                WHERE id = \(bind: orderId) AND transaction_id IS NULL
                """)
        }
        try await session.run(
            """
            DELETE FROM unclaimed_transactions
            WHERE environment = \(bind: facts.environment.rawValue) AND transaction_id = \(bind: facts.transactionId)
            """)
        return .granted(revoked: record.isRevoked)
    }

    /// Applies a newer state of a granted transaction: a refund takes back what it gave, a reversal gives it
    /// again, an extension moves its expiry. A state that does not supersede the one held changes nothing.
    @discardableResult
    func updateState(_ grant: GrantRecord, to facts: PurchaseFacts, source: String, now: Date) async throws
        -> GrantRecord
    {
        guard facts.supersedes(grant.state) else { return grant }
        let state = facts.replacing(grant.state)
        var updated = grant
        updated.revokedDate = facts.revocationDate
        updated.revocationReason = facts.revocationReason
        updated.expiresDate = facts.expiresDate ?? grant.expiresDate
        updated.stateSignedDate = state.signedDate
        updated.stateRevision = state.revision
        updated.reinstated = state.reinstated
        updated.stateChanges = grant.stateChanges + 1
        // Conditional on the state read, so two newer states applied at once cannot both count.
        let rows = try await session.all(
            """
            UPDATE grants SET revoked_date = \(bind: updated.revokedDate?.millisecondsSince1970),
                revocation_reason = \(bind: updated.revocationReason),
                expires_date = \(bind: updated.expiresDate?.millisecondsSince1970),
                state_signed_date = \(bind: updated.stateSignedDate.millisecondsSince1970),
                state_revision = \(bind: updated.stateRevision), reinstated = \(bind: updated.reinstated),
                state_changes = \(bind: updated.stateChanges)
            WHERE environment = \(bind: grant.environment.rawValue) AND transaction_id = \(bind: grant.transactionId)
                AND state_changes = \(bind: grant.stateChanges)
            RETURNING transaction_id
            """)
        guard !rows.isEmpty else {
            // Changed meanwhile: apply against what is there now.
            guard let current = try await self.grant(transactionId: grant.transactionId, environment: grant.environment)
            else { return grant }
            return try await updateState(current, to: facts, source: source, now: now)
        }
        if !grant.isRevoked, updated.isRevoked {
            try await appendEvent(
                updated, kind: "revoked", source: source, now: now,
                detail: "refunded or revoked (\(facts.revocationReason ?? "revoked")): \(takenBack(grant))")
        } else if grant.isRevoked, !updated.isRevoked {
            try await appendEvent(
                updated, kind: "reinstated", source: source, now: now,
                detail: "refund reversed: \(grantDetail(updated))")
        } else if updated.expiresDate != grant.expiresDate, let expires = updated.expiresDate {
            try await appendEvent(
                updated, kind: "expiry_changed", source: source, now: now, detail: "now expires \(expires.iso8601)")
        }
        return updated
    }

    /// Takes back a grant whose purchase the store does not know (reconciliation's repair): the store's present
    /// word, a revocation one past whatever the ledger holds.
    func revokeWithoutPurchase(_ grant: GrantRecord, now: Date) async throws {
        let facts = PurchaseFacts(
            environment: grant.environment, bundleId: grant.bundleId, transactionId: grant.transactionId,
            originalTransactionId: grant.originalTransactionId, productId: grant.productId, quantity: grant.quantity,
            purchaseDate: grant.purchaseDate, expiresDate: grant.expiresDate, revocationDate: now,
            revocationReason: "no_purchase_in_store", appAccountToken: nil,
            signedDate: max(now, grant.stateSignedDate.addingTimeInterval(0.001)),
            revision: grant.stateRevision.map { $0.saturatingAdding(1) }, provenance: .present)
        try await updateState(grant, to: facts, source: "reconciliation", now: now)
    }

    // MARK: Reads

    func grant(transactionId: String, environment: StoreEnvironment) async throws -> GrantRecord? {
        try await session.first(
            """
            SELECT * FROM grants
            WHERE environment = \(bind: environment.rawValue) AND transaction_id = \(bind: transactionId)
            """
        ).map(GrantRecord.init(row:))
    }

    /// A user's grants that unlock an entitlement (not the consumables, however many), oldest purchase first.
    func entitlementGrants(userId: String) async throws -> [GrantRecord] {
        try await session.all(
            """
            SELECT * FROM grants WHERE user_id = \(bind: userId) AND entitlement IS NOT NULL
            ORDER BY purchase_date, transaction_id
            """
        ).map(GrantRecord.init(row:))
    }

    /// A user's grants of one product.
    func grants(userId: String, productId: String) async throws -> [GrantRecord] {
        try await session.all(
            "SELECT * FROM grants WHERE user_id = \(bind: userId) AND product_id = \(bind: productId)"
        ).map(GrantRecord.init(row:))
    }

    /// A user's balances: what the standing grants credit less what was spent, summed in the database from the
    /// grants and spends themselves (so a balance can never drift from the ledger), with how many standing and
    /// refunded purchases each counts. The grants' sums read one entry per balance grant of the user from
    /// `grants_user_balances`, not the grants' rows: about 0.15 µs a grant on SQLite.
    func balances(userId: String) async throws -> [BalanceSummary] {
        var balances: [String: BalanceSummary] = [:]
        for row in try await session.all(
            """
            SELECT balance_name,
                CAST(SUM(CASE WHEN revoked_date IS NULL THEN balance_amount ELSE 0 END) AS BIGINT) AS credited,
                CAST(SUM(CASE WHEN revoked_date IS NULL THEN 1 ELSE 0 END) AS BIGINT) AS standing,
                CAST(SUM(CASE WHEN revoked_date IS NULL THEN 0 ELSE 1 END) AS BIGINT) AS revoked
            FROM grants WHERE user_id = \(bind: userId) AND balance_name IS NOT NULL
            GROUP BY balance_name
            """)
        {
            let name = try row.decode(column: "balance_name", as: String.self)
            balances[name] = BalanceSummary(
                name: name, credited: try row.decode(column: "credited", as: Int64.self), spent: 0,
                standing: try row.decode(column: "standing", as: Int64.self),
                revoked: try row.decode(column: "revoked", as: Int64.self))
        }
        for row in try await session.all(
            """
            SELECT name, CAST(SUM(amount) AS BIGINT) AS spent FROM balance_spends WHERE user_id = \(bind: userId)
            GROUP BY name
            """)
        {
            let name = try row.decode(column: "name", as: String.self)
            balances[name, default: BalanceSummary(name: name, credited: 0, spent: 0, standing: 0, revoked: 0)].spent =
                try row.decode(column: "spent", as: Int64.self)
        }
        return balances.values.sorted { $0.name < $1.name }
    }

    /// An app's grants in one environment.
    func grants(bundleId: String, environment: StoreEnvironment) async throws -> [GrantRecord] {
        try await session.all(
            """
            SELECT * FROM grants WHERE bundle_id = \(bind: bundleId) AND environment = \(bind: environment.rawValue)
            ORDER BY purchase_date, transaction_id
            """
        ).map(GrantRecord.init(row:))
    }

    /// Who owns a subscription (or any transaction chain): the user its earlier transactions were granted to.
    func owner(originalTransactionId: String, environment: StoreEnvironment) async throws -> String? {
        try await session.first(
            """
            SELECT user_id FROM grants
            WHERE environment = \(bind: environment.rawValue)
                AND original_transaction_id = \(bind: originalTransactionId)
            ORDER BY purchase_date LIMIT 1
            """
        )?.decode(column: "user_id", as: String.self)
    }

    /// Remembers that the customer's app transaction (if the facts name one) is `userId`'s.
    private func rememberAppTransaction(of facts: PurchaseFacts, userId: String) async throws {
        guard let appTransactionId = facts.appTransactionId else { return }
        try await session.run(
            """
            INSERT INTO customer_app_transactions (environment, app_transaction_id, user_id, bundle_id)
            VALUES (\(bind: facts.environment.rawValue), \(bind: appTransactionId), \(bind: userId),
                \(bind: facts.bundleId))
            ON CONFLICT DO NOTHING
            """)
    }

    /// Records, for every user the customer's app transaction belongs to, that a parent or guardian withdrew
    /// consent (`RESCIND_CONSENT`); returns those users. A user who has no purchase with that app transaction yet
    /// cannot be found: none then.
    func recordConsentRescinded(
        appTransactionId: String, environment: StoreEnvironment, bundleId: String, notificationUUID: String, now: Date
    ) async throws -> [String] {
        let users = try await session.all(
            """
            SELECT user_id FROM customer_app_transactions
            WHERE environment = \(bind: environment.rawValue) AND app_transaction_id = \(bind: appTransactionId)
            ORDER BY user_id
            """
        ).map { try $0.decode(column: "user_id", as: String.self) }
        for user in users {
            try await session.run(
                """
                INSERT INTO ledger_events (user_id, at, environment, transaction_id, product_id, kind, source, detail,
                    state_change)
                VALUES (\(bind: user), \(bind: now.millisecondsSince1970), \(bind: environment.rawValue),
                    \(bind: appTransactionId), '', \(bind: LedgerEvent.consentRescinded), 'notification',
                    \(bind: "a parent or guardian withdrew consent for \(bundleId) (RESCIND_CONSENT \(notificationUUID))"),
                    0)
                """)
        }
        return users
    }

    /// A user's ledger history, oldest first.
    func events(userId: String) async throws -> [LedgerEvent] {
        try await session.all(
            """
            SELECT * FROM ledger_events WHERE user_id = \(bind: userId) ORDER BY at, transaction_id, state_change
            """
        ).map(LedgerEvent.init(row:))
    }

    /// The state parked for a transaction no user was known for, if any.
    func unclaimed(transactionId: String, environment: StoreEnvironment) async throws -> UnclaimedRecord? {
        try await session.first(
            """
            SELECT * FROM unclaimed_transactions
            WHERE environment = \(bind: environment.rawValue) AND transaction_id = \(bind: transactionId)
            """
        ).map(UnclaimedRecord.init(row:))
    }

    /// Unclaimed transactions of an app in one environment.
    func unclaimedTransactionIds(bundleId: String, environment: StoreEnvironment) async throws -> [String] {
        try await session.all(
            """
            SELECT transaction_id FROM unclaimed_transactions
            WHERE bundle_id = \(bind: bundleId) AND environment = \(bind: environment.rawValue)
            """
        ).map { try $0.decode(column: "transaction_id", as: String.self) }
    }

    // MARK: Renewal info

    /// Keeps the renewal info if it was signed after the one stored.
    func saveRenewalState(_ state: RenewalState) async throws {
        try await session.run(
            """
            INSERT INTO renewal_states (environment, original_transaction_id, auto_renew_status, auto_renew_product_id,
                expiration_intent, grace_period_expires_date, signed_date)
            VALUES (\(bind: state.environment.rawValue), \(bind: state.originalTransactionId),
                \(bind: Int64(state.autoRenewStatus)), \(bind: state.autoRenewProductId),
                \(bind: state.expirationIntent.map(Int64.init)),
                \(bind: state.gracePeriodExpiresDate?.millisecondsSince1970),
                \(bind: state.signedDate.millisecondsSince1970))
            ON CONFLICT (environment, original_transaction_id) DO UPDATE SET
                auto_renew_status = excluded.auto_renew_status, auto_renew_product_id = excluded.auto_renew_product_id,
                expiration_intent = excluded.expiration_intent,
                grace_period_expires_date = excluded.grace_period_expires_date, signed_date = excluded.signed_date
            WHERE renewal_states.signed_date < excluded.signed_date
            """)
    }

    func renewalStates(originalTransactionIds: [String], environment: StoreEnvironment) async throws -> [RenewalState] {
        guard !originalTransactionIds.isEmpty else { return [] }
        return try await session.all(
            """
            SELECT * FROM renewal_states WHERE environment = \(bind: environment.rawValue)
                AND original_transaction_id IN (\(binds: originalTransactionIds))
            """
        ).map(RenewalState.init(row:))
    }

    // MARK: Writes

    /// Inserts the grant unless the transaction has one; false then.
    private func insert(_ grant: GrantRecord) async throws -> Bool {
        let rows = try await session.all(
            """
            INSERT INTO grants (environment, transaction_id, original_transaction_id, bundle_id, user_id, order_id,
                product_id, product_kind, quantity, entitlement, balance_name, balance_amount, purchase_date,
                expires_date, revoked_date, revocation_reason, state_signed_date, state_revision, reinstated,
                state_changes, source, granted_at)
            VALUES (\(bind: grant.environment.rawValue), \(bind: grant.transactionId),
                \(bind: grant.originalTransactionId), \(bind: grant.bundleId), \(bind: grant.userId),
                \(bind: grant.orderId), \(bind: grant.productId), \(bind: grant.productKind.rawValue),
                \(bind: Int64(grant.quantity)), \(bind: grant.entitlement), \(bind: grant.balanceName),
                \(bind: grant.balanceAmount), \(bind: grant.purchaseDate.millisecondsSince1970),
                \(bind: grant.expiresDate?.millisecondsSince1970), \(bind: grant.revokedDate?.millisecondsSince1970),
                \(bind: grant.revocationReason), \(bind: grant.stateSignedDate.millisecondsSince1970),
                \(bind: grant.stateRevision), \(bind: grant.reinstated), \(bind: grant.stateChanges),
                \(bind: grant.source), \(bind: grant.grantedAt.millisecondsSince1970))
            ON CONFLICT (environment, transaction_id) DO NOTHING
            RETURNING transaction_id
            """)
        return !rows.isEmpty
    }

    /// Remembers (or updates to a newer state, by the same order as grants) a purchase no user can be found for
    /// yet.
    private func keepUnclaimed(_ facts: PurchaseFacts, now: Date) async throws {
        let state = facts.replacing(nil)
        let inserted = try await session.all(
            """
            INSERT INTO unclaimed_transactions (environment, transaction_id, original_transaction_id, bundle_id,
                product_id, revoked_date, revocation_reason, expires_date, state_signed_date, state_revision,
                reinstated, state_changes, received_at)
            VALUES (\(bind: facts.environment.rawValue), \(bind: facts.transactionId),
                \(bind: facts.originalTransactionId), \(bind: facts.bundleId), \(bind: facts.productId),
                \(bind: facts.revocationDate?.millisecondsSince1970), \(bind: facts.revocationReason),
                \(bind: facts.expiresDate?.millisecondsSince1970), \(bind: state.signedDate.millisecondsSince1970),
                \(bind: state.revision), \(bind: state.reinstated), 0, \(bind: now.millisecondsSince1970))
            ON CONFLICT (environment, transaction_id) DO NOTHING
            RETURNING transaction_id
            """)
        guard inserted.isEmpty,
            let parked = try await unclaimed(transactionId: facts.transactionId, environment: facts.environment),
            facts.supersedes(parked.state)
        else { return }
        let updated = facts.replacing(parked.state)
        let rows = try await session.all(
            """
            UPDATE unclaimed_transactions SET revoked_date = \(bind: facts.revocationDate?.millisecondsSince1970),
                revocation_reason = \(bind: facts.revocationReason),
                expires_date = \(bind: (facts.expiresDate ?? parked.expiresDate)?.millisecondsSince1970),
                state_signed_date = \(bind: updated.signedDate.millisecondsSince1970),
                state_revision = \(bind: updated.revision), reinstated = \(bind: updated.reinstated),
                state_changes = \(bind: parked.stateChanges + 1)
            WHERE environment = \(bind: facts.environment.rawValue) AND transaction_id = \(bind: facts.transactionId)
                AND state_changes = \(bind: parked.stateChanges)
            RETURNING transaction_id
            """)
        // Changed meanwhile: decide again against what is there now.
        if rows.isEmpty { try await keepUnclaimed(facts, now: now) }
    }

    private func appendEvent(_ grant: GrantRecord, kind: String, source: String, now: Date, detail: String) async throws
    {
        try await session.run(
            """
            INSERT INTO ledger_events (user_id, at, environment, transaction_id, product_id, kind, source, detail,
                state_change)
            VALUES (\(bind: grant.userId), \(bind: now.millisecondsSince1970), \(bind: grant.environment.rawValue),
                \(bind: grant.transactionId), \(bind: grant.productId), \(bind: kind), \(bind: source),
                \(bind: detail), \(bind: grant.stateChanges))
            """)
    }

    private func grantDetail(_ grant: GrantRecord) -> String {
        var parts: [String] = []
        if let name = grant.balanceName { parts.append("+\(grant.balanceAmount) \(name)") }
        if let entitlement = grant.entitlement {
            parts.append(grant.expiresDate.map { "\(entitlement) until \($0.iso8601)" } ?? entitlement)
        }
        return parts.isEmpty ? "recorded" : parts.joined(separator: ", ")
    }

    private func takenBack(_ grant: GrantRecord) -> String {
        var parts: [String] = []
        if let name = grant.balanceName { parts.append("-\(grant.balanceAmount) \(name)") }
        if let entitlement = grant.entitlement { parts.append("\(entitlement) no longer from this transaction") }
        return parts.isEmpty ? "nothing to take back" : parts.joined(separator: ", ")
    }
}

extension Date {
    /// `2026-12-01T00:00:00Z`.
    var iso8601: String { ISO8601DateFormatter().string(from: self) }
}
