import Foundation
import KioskCore
import KioskSQL
import KioskSigning

extension MerchantService {
    /// Takes one App Store Server Notification V2: verifies the payload and its nested signed data, applies the
    /// transaction's newest state to the ledger (granting a purchase the app never reported), and records the
    /// notification's UUID in the same database transaction, so a retry of it changes nothing. Returns only once
    /// all of that is committed; the HTTP answer is 200 only then.
    ///
    /// - Returns: What it did: `granted`, `already_granted`, `revoked`, `granted_to_another_user` (the order names
    ///   another user than the grant's: the state applies, the grant stays with its user), `unclaimed`,
    ///   `consent_rescinded` (recorded for the users of the customer's app transaction), `recorded` (no transaction
    ///   in it, or no user known for its app transaction) or `duplicate`.
    func takeNotification(signedPayload: String) async throws -> String {
        let notification = try await checks.notification(signedPayload)
        let payload = notification.payload
        // Unknown products are refused (not 200), so the store retries once the configuration names them.
        let product = try notification.facts.map {
            try self.product($0.productId, of: notification.app, field: "signedPayload")
        }
        let now = clock.now()
        let outcome = try await database.withSession { session in
            let fresh = try await session.all(
                """
                INSERT INTO received_notifications (uuid, notification_type, subtype, environment, bundle_id,
                    transaction_id, signed_date, outcome, received_at)
                VALUES (\(bind: payload.notificationUUID), \(bind: payload.notificationType.rawValue), \(bind: payload.subtype?.rawValue),
                    \(bind: notification.environment.rawValue), \(bind: notification.app.bundleId),
                    \(bind: notification.facts?.transactionId), \(bind: payload.signedDate),
                    'pending', \(bind: now.millisecondsSince1970))
                ON CONFLICT (uuid) DO NOTHING
                RETURNING uuid
                """)
            guard !fresh.isEmpty else { return "duplicate" }
            let ledger = GrantLedger(session: session)
            if let renewal = notification.renewal {
                try await ledger.saveRenewalState(renewal)
            }
            var outcome = "recorded"
            if payload.notificationType == .rescindConsent, let appTransaction = notification.appTransaction {
                let users = try await ledger.recordConsentRescinded(
                    appTransactionId: appTransaction.appTransactionId, environment: notification.environment,
                    bundleId: notification.app.bundleId, notificationUUID: payload.notificationUUID, now: now)
                if !users.isEmpty { outcome = LedgerEvent.consentRescinded }
            }
            if let facts = notification.facts, let product {
                let owner = try await Orders(session: session).ownerFromStore(
                    facts, tokenIsUser: notification.app.settings.usersByAppAccountToken ?? false)
                outcome = try await ledger.apply(
                    facts, owner: owner, product: product, source: "notification", now: now
                ).deliveryOutcome
            }
            try await session.run(
                "UPDATE received_notifications SET outcome = \(bind: outcome) WHERE uuid = \(bind: payload.notificationUUID)"
            )
            return outcome
        }
        if outcome != "duplicate" { CrashPoint.notificationCommitted.reach() }
        if payload.notificationType == .consumptionRequest, outcome != "duplicate",
            notification.app.settings.sendConsumptionInformation == true, let facts = notification.facts
        {
            await sendConsumptionInformation(facts, app: notification.app, environment: notification.environment)
        }
        logger.info(
            "notification",
            metadata: [
                "type": "\(payload.notificationType)", "subtype": "\(payload.subtype?.rawValue ?? "")",
                "uuid": "\(payload.notificationUUID)", "outcome": "\(outcome)",
            ])
        return outcome
    }

    /// Tells the store whether the purchase a CONSUMPTION_REQUEST names was delivered (granted and not taken back).
    /// A failure is logged, not answered: the notification is taken, and Apple decides without the information.
    private func sendConsumptionInformation(
        _ facts: PurchaseFacts, app: LoadedMerchantConfiguration.LoadedApp, environment: StoreEnvironment
    ) async {
        do {
            let grant = try await database.withSession {
                try await GrantLedger(session: $0).grant(transactionId: facts.transactionId, environment: environment)
            }
            let delivered = grant.map { !$0.isRevoked } ?? false
            let taken = try await StoreConnection(app: app, clock: clock).sendConsumptionInformation(
                facts.transactionId, delivered: delivered, environment: environment)
            logger.info(
                "consumption information",
                metadata: [
                    "transactionId": "\(facts.transactionId)", "delivered": "\(delivered)", "taken": "\(taken)",
                ])
        } catch {
            logger.warning(
                "consumption information not sent",
                metadata: ["transactionId": "\(facts.transactionId)", "error": "\(error)"])
        }
    }
}
