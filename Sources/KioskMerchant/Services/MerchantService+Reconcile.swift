import Foundation
import KioskCore
import KioskProtocol
import KioskSQL

extension MerchantService {
    /// How far back reconciliation reads the store's notification history by default: a day inside the 180 days
    /// Apple's Get Notification History reaches, so clocks a little apart still agree.
    static let notificationHistoryDays: TimeInterval = 179

    /// Compares the store's transactions with the grant ledger and, when asked, repairs what differs.
    ///
    /// The store side is every transaction in the store's notification history since `since` plus the whole
    /// transaction history (App Store Server API) of every customer the ledger or that history names; each is
    /// verified like any signed data. Found: purchases with no grant (`not_granted`, or `no_user` when no order or
    /// earlier grant ties them to a user), refunds or reversals the ledger missed (`revocation_not_applied`), and
    /// grants the store knows no purchase for (`grant_without_purchase`, confirmed with Get Transaction Info).
    /// Repairs go through the same ledger as every other grant, so they too happen at most once.
    func reconcile(_ request: MerchantReconcileRequest) async throws -> MerchantReconcileReport {
        let app = try configuration.app(request.bundleId)
        guard let environment = StoreEnvironment(appleName: request.environment) else {
            throw KioskError(
                .invalidEnvironment, "environment must be Sandbox or Production; it is \(request.environment).",
                field: "environment", fix: "Send Sandbox or Production.")
        }
        let repair = request.repair ?? false
        let connection = StoreConnection(app: app, clock: clock)
        let now = clock.now()
        let end = request.until ?? now
        guard abs(end.timeIntervalSince(now)) <= 10 * 365 * 86_400 else {
            throw KioskError(
                .invalidUntil, "until must lie within ten years of the merchant's clock.", field: "until",
                fix: "Send the store's time (the sandbox clock), or leave until out for now.")
        }
        let since = request.since ?? end.addingTimeInterval(-Self.notificationHistoryDays * 86_400)
        guard since >= end.addingTimeInterval(-180 * 86_400), since <= end else {
            throw KioskError(
                .invalidSince,
                "since must lie within the 180 days before until (or now), which the store's notification history reaches back.",
                field: "since", fix: "Send a date of the last 180 days, or leave since out for the last 179.")
        }

        var store: [String: PurchaseFacts] = [:]
        func keep(_ facts: PurchaseFacts) {
            guard facts.bundleId == app.bundleId, facts.environment == environment else { return }
            if let known = store[facts.transactionId], !facts.supersedes(known.asHeld) { return }
            store[facts.transactionId] = facts
        }
        for signedPayload in try await connection.notificationHistory(from: since, to: end, environment: environment) {
            // A payload that fails verification is not the store's word: it is left out, and logged.
            do {
                if let facts = try await checks.notification(signedPayload).facts { keep(facts) }
            } catch {
                logger.warning(
                    "reconciliation skipped a notification that did not verify", metadata: ["error": "\(error)"])
            }
        }
        let (grants, unclaimed) = try await database.withSession { session in
            let ledger = GrantLedger(session: session)
            return (
                try await ledger.grants(bundleId: app.bundleId, environment: environment),
                try await ledger.unclaimedTransactionIds(bundleId: app.bundleId, environment: environment)
            )
        }
        var customers = Set(grants.map(\.originalTransactionId)).union(store.values.map(\.originalTransactionId))
        customers.formUnion(unclaimed)
        var looked = Set<String>()
        for original in customers.sorted() where !looked.contains(original) {
            for signed in try await connection.transactionHistory(original, environment: environment) {
                var facts = try await checks.transaction(signed, field: "history").facts
                facts.provenance = .present
                looked.insert(facts.originalTransactionId)
                keep(facts)
            }
        }

        let grantsById = Dictionary(grants.map { ($0.transactionId, $0) }, uniquingKeysWith: { first, _ in first })
        var findings: [MerchantReconcileReport.Finding] = []
        for facts in store.values.sorted(by: {
            ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId)
        }) {
            if let grant = grantsById[facts.transactionId] {
                // States are compared, not dates: the store's state differs from the grant's and is not older.
                guard grant.isRevoked != facts.isRevoked, facts.supersedes(grant.state) else { continue }
                var finding = MerchantReconcileReport.Finding(
                    kind: "revocation_not_applied", transactionId: facts.transactionId, productId: facts.productId,
                    userId: grant.userId, repair: nil,
                    detail: facts.isRevoked
                        ? "the store refunded or revoked it; the grant still stands"
                        : "the store reversed its refund; the grant is still revoked")
                if repair {
                    _ = try await database.withSession { session in
                        try await GrantLedger(session: session).updateState(
                            grant, to: facts, source: "reconciliation", now: now)
                    }
                    finding.repair = facts.isRevoked ? "revoked" : "reinstated"
                }
                findings.append(finding)
                continue
            }
            guard !facts.isRevoked, let product = app.products[facts.productId] else { continue }
            let tokenIsUser = app.settings.usersByAppAccountToken ?? false
            let owner = try await database.withSession {
                try await Orders(session: $0).ownerFromStore(facts, tokenIsUser: tokenIsUser)
            }
            guard let owner else {
                findings.append(
                    .init(
                        kind: "no_user", transactionId: facts.transactionId, productId: facts.productId, userId: nil,
                        repair: nil,
                        detail: "no order or earlier grant names its user; it is granted when the app sends it"))
                continue
            }
            var finding = MerchantReconcileReport.Finding(
                kind: "not_granted", transactionId: facts.transactionId, productId: facts.productId,
                userId: owner.userId, repair: nil, detail: "bought on \(facts.purchaseDate.iso8601) and never granted")
            if repair {
                let outcome = try await database.withSession { session in
                    try await GrantLedger(session: session).apply(
                        facts, owner: owner, product: product, source: "reconciliation", now: now)
                }
                finding.repair = outcome.deliveryOutcome
            }
            findings.append(finding)
        }
        for grant in grants where store[grant.transactionId] == nil && !grant.isRevoked {
            guard try await connection.transactionInfo(grant.transactionId, environment: environment) == nil else {
                continue
            }
            var finding = MerchantReconcileReport.Finding(
                kind: "grant_without_purchase", transactionId: grant.transactionId, productId: grant.productId,
                userId: grant.userId, repair: nil, detail: "the store knows no such transaction")
            if repair {
                try await database.withSession { session in
                    try await GrantLedger(session: session).revokeWithoutPurchase(grant, now: now)
                }
                finding.repair = "revoked"
            }
            findings.append(finding)
        }
        logger.info(
            "reconciliation",
            metadata: ["app": "\(app.bundleId)", "findings": "\(findings.count)", "repaired": "\(repair)"])
        return MerchantReconcileReport(
            bundleId: app.bundleId, environment: environment.appleName, storeTransactions: store.count,
            grants: grants.count, findings: findings, repaired: repair)
    }
}
