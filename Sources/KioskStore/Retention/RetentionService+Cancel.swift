import Foundation
import KioskCore
import KioskProtocol
import KioskSQL
import KioskStorage

/// The real-time cancel flow: a subscriber turns auto-renew off (the `auto-renew-off` test control, or a customer
/// through the client protocol: "the subscriber taps Cancel"), the store asks the app's Get Retention Message endpoint what to show, within the budget, and
/// applies what the subscriber does with it. Without a usable answer the App Store's own behaviour applies: the
/// app's retention offer, else the default message, else nothing; the cancellation proceeds unless the subscriber
/// takes what is shown. Every time is recorded as a ``RetentionEvent``.
extension RetentionService {
    /// What the subscriber does with the retention message.
    enum Choice: String, CaseIterable {
        /// Confirms the cancellation: auto-renew goes off.
        case cancel
        /// Takes what is shown: switches plan, redeems the offer, or keeps the subscription after a message.
        case accept
    }

    /// Everything the flow reads before it calls the endpoint.
    private struct Setup: Sendable {
        var app: App
        var subscription: StoreSubscription
        /// The subscriber, as the purchases the flow makes see them.
        var client: ClientSession
        var realtimeURL: String?
    }

    /// The subscriber of the sandbox subscription `originalTransactionId` turns auto-renew off (the test control),
    /// and does `choice` (`cancel` when nil) with what they are shown. A subscription whose auto-renew is already
    /// off has nothing to cancel: it is answered as it is.
    ///
    /// `requestIdentifier` is the client's identifier of the request (the real-time request's
    /// `requestIdentifier`, and the idempotency key of a purchase the flow makes): a request repeated with it answers
    /// the outcome the first one recorded, without asking the endpoint again or changing anything. Nil only where
    /// there is no client to make one; a new one is made.
    func cancel(bundleId: String, originalTransactionId: Int64, choice: String?, requestIdentifier: UUID?)
        async throws -> TestSubscriptionInfo
    {
        let (row, event) = try await cancel(
            originalTransactionId, environment: .sandbox, choice: choice,
            requestIdentifier: requestIdentifier ?? UUID()
        ) { tx in
            let app = try await CatalogService.requireApp(bundleId, in: tx)
            guard
                let subscription = try await tx.subscription(
                    originalTransactionId: originalTransactionId, environment: .sandbox),
                subscription.appId == app.id
            else {
                throw KioskError(
                    .subscriptionNotFound,
                    "The app \(bundleId) has no sandbox subscription with original transaction id "
                        + "\(originalTransactionId).", field: "originalTransactionId",
                    fix: "List them with `kiosk test subscriptions --app \(bundleId) --tester EMAIL`.")
            }
            guard let tester = try await tx.account(id: subscription.accountId, environment: .sandbox) else {
                throw KioskError(.testerNotFound, "The subscription's tester was deleted.")
            }
            return (subscription, try TestControlsService.client(tester: tester, app: app))
        }
        return SubscriptionTestControls.info(row, retention: event)
    }

    /// The signed-in customer of `client` taps Cancel for their subscription `originalTransactionId` in the
    /// session's app (the App Store's manage-subscriptions sheet), and does what `request` says with what they are
    /// shown; idempotent by the request's identifier.
    public func cancel(originalTransactionId: Int64, _ request: CancelSubscriptionRequest, for client: ClientSession)
        async throws -> CancelSubscriptionResponse
    {
        let (row, event) = try await cancel(
            originalTransactionId, environment: client.environment, choice: request.retentionChoice,
            requestIdentifier: request.requestIdentifier
        ) { tx in
            guard
                let subscription = try await tx.subscription(
                    originalTransactionId: originalTransactionId, environment: client.environment),
                subscription.appId == client.app.id, subscription.accountId == client.account.id
            else {
                throw KioskError(
                    .subscriptionNotFound,
                    "You have no subscription with original transaction id \(originalTransactionId) in this app.",
                    field: "originalTransactionId")
            }
            return (subscription, client)
        }
        return CancelSubscriptionResponse(
            originalTransactionId: String(row.originalTransactionId), autoRenewStatus: row.autoRenewEnabled,
            autoRenewProductId: row.autoRenewProductId, expiresDate: row.expiresAt.millisecondsSince1970,
            retention: event)
    }

    /// The flow: `find` reads the subscription and its subscriber in the first transaction; answers the
    /// subscription after it and the event (nil when auto-renew was already off).
    private func cancel(
        _ originalTransactionId: Int64, environment: StoreEnvironment, choice text: String?, requestIdentifier: UUID,
        find: @Sendable @escaping (any StorageTransaction) async throws -> (StoreSubscription, ClientSession)
    ) async throws -> (StoreSubscription, RetentionEvent?) {
        guard let choice = Choice(rawValue: text ?? Choice.cancel.rawValue) else {
            throw KioskError(
                .invalidDecision,
                "'\(text?.prefix(32) ?? "")' is not something a subscriber does with a retention "
                    + "message.", field: "retentionChoice", fix: "Use cancel or accept.")
        }
        let requestIdentifier = requestIdentifier.uuidString.lowercased()
        let found = try await database.transaction { tx -> Found in
            let (subscription, client) = try await find(tx)
            if let first = try await Self.recordedEvent(requestIdentifier, of: subscription, in: tx) {
                return .repeated(subscription, first)
            }
            guard [.active, .billingRetry, .gracePeriod].contains(subscription.state) else {
                throw KioskError(
                    .subscriptionState,
                    "The subscription \(originalTransactionId) is \(subscription.state.rawValue); turning auto-renew "
                        + "off needs it active, billing_retry or grace_period.")
            }
            return .new(
                Setup(
                    app: client.app, subscription: subscription, client: client,
                    realtimeURL: try await tx.retentionRealtimeURL(appId: client.app.id, environment: environment)))
        }
        let setup: Setup
        switch found {
        case .repeated(let row, let first): return (row, first)
        case .new(let new): setup = new
        }
        guard setup.subscription.autoRenewEnabled else { return (setup.subscription, nil) }

        let subscription = setup.subscription
        let storefront = setup.client.storefront
        let locale = storefront.defaultLocale.replacingOccurrences(of: "_", with: "-")
        var realtime: RetentionEvent.Realtime?
        var answer: RealtimeResponseBody?
        if let url = setup.realtimeURL {
            let signed = try signedRealtimeRequest(
                app: setup.app, environment: environment, originalTransactionId: originalTransactionId,
                productId: subscription.productId, locale: locale, requestIdentifier: requestIdentifier,
                now: clocks.now(environment))
            let call = await call(url, signedPayload: signed, budget: budget)
            let budgetMilliseconds = Self.milliseconds(budget)
            switch call.result {
            case .answered(let body):
                answer = body
                realtime = RetentionEvent.Realtime(
                    url: url, result: "answered", httpStatus: 200, milliseconds: call.milliseconds,
                    budgetMilliseconds: budgetMilliseconds)
            case .failed(let result, let status, let reason):
                realtime = RetentionEvent.Realtime(
                    url: url, result: result == .timedOut ? "timed-out" : "failed", httpStatus: status,
                    sendAttemptResult: result.rawValue, milliseconds: call.milliseconds,
                    budgetMilliseconds: budgetMilliseconds, reason: reason)
            }
        }
        let (shown, source, unusable) = try await database.transaction {
            [answer] tx -> (Presentation, String, String?) in
            var unusable: String?
            if let answer {
                do {
                    return (
                        try await presentation(of: answer, for: subscription, storefront: storefront, in: tx),
                        "realtime", nil
                    )
                } catch let error as UnusableAnswer {
                    unusable = error.reason
                }
            }
            let (fallback, source) = try await fallback(
                for: subscription, storefront: storefront, locale: locale, in: tx)
            return (fallback, source, unusable)
        }
        if let unusable {
            realtime?.result = "invalid-answer"
            realtime?.reason = unusable
        }
        var event = RetentionEvent(
            requestIdentifier: requestIdentifier, environment: environment.appleName,
            originalTransactionId: String(originalTransactionId), productId: subscription.productId,
            userLocale: locale, date: clocks.now(environment).millisecondsSince1970, source: source,
            realtime: realtime, shown: shown.shown, choice: choice.rawValue, outcome: "", summary: "")

        let row: StoreSubscription
        switch (shown, choice) {
        case (.nothing, _), (_, .cancel):
            event.choice = Choice.cancel.rawValue
            do {
                row = try await turnAutoRenewOff(subscription, event: event, app: setup.app)
            } catch StorageError.uniqueViolation(let constraint) where constraint == Self.eventKey {
                return try await firstOutcome(requestIdentifier, of: subscription)
            }
            return (row, try await recorded(event, outcome: "cancelled", row: row))
        case (.message, .accept):
            event.outcome = "kept"
            row = subscription
        case (.alternateProduct(_, let productId, let plan), .accept):
            let taken = await take(
                productId: productId, plan: plan, offer: nil, setup: setup, requestIdentifier: requestIdentifier,
                success: "switched")
            (event.outcome, event.transactionId, event.summary) = (
                taken.outcome, taken.transactionId, taken.refusal ?? ""
            )
            row = subscription
        case (.promotionalOffer(_, let offer), .accept):
            let taken = await take(
                productId: offer.productId, plan: .billedUpFront, offer: offer, setup: setup,
                requestIdentifier: requestIdentifier, success: "offer-redeemed")
            (event.outcome, event.transactionId, event.summary) = (
                taken.outcome, taken.transactionId, taken.refusal ?? ""
            )
            row = subscription
        case (.retentionOffer(let offer, _), .accept):
            do {
                let redeemed = try await redeem(offer, subscription: subscription, storefront: storefront, event: event)
                return (redeemed, try await recorded(event, outcome: "offer-redeemed", row: redeemed, store: false))
            } catch StorageError.uniqueViolation(let constraint) where constraint == Self.eventKey {
                return try await firstOutcome(requestIdentifier, of: subscription)
            } catch let error as KioskError {
                event.outcome = "refused"
                event.summary = error.message
                row = subscription
            }
        }
        let final = try await database.transaction { tx in
            try await tx.subscription(originalTransactionId: originalTransactionId, environment: environment) ?? row
        }
        do {
            return (final, try await recorded(event, outcome: event.outcome, row: final))
        } catch StorageError.uniqueViolation(let constraint) where constraint == Self.eventKey {
            return try await firstOutcome(requestIdentifier, of: subscription)
        }
    }

    /// The constraint a request's identifier, recorded twice, violates.
    private static let eventKey = "retention_events.request_id"

    /// What the first read of a request found: the outcome a request with its identifier already recorded, or
    /// what the flow needs to run.
    private enum Found: Sendable {
        case repeated(StoreSubscription, RetentionEvent)
        case new(Setup)
    }

    /// The event a request with `requestIdentifier` recorded for `subscription`, if one did; a client's identifier
    /// that another subscription's request recorded is refused.
    private static func recordedEvent(
        _ requestIdentifier: String, of subscription: StoreSubscription, in tx: any StorageTransaction
    ) async throws -> RetentionEvent? {
        guard let record = try await tx.retentionEvent(requestId: requestIdentifier) else { return nil }
        guard record.appId == subscription.appId, record.environment == subscription.environment,
            record.originalTransactionId == subscription.originalTransactionId
        else {
            throw KioskError(
                .idempotencyKeyReused,
                "The request identifier \(requestIdentifier) was used for another subscription.",
                field: "requestIdentifier", fix: "Make a new request identifier for each cancellation.")
        }
        do {
            return try JSONDecoder().decode(RetentionEvent.self, from: Data(record.event.utf8))
        } catch {
            throw StorageError.engine(message: "a retention event is not the JSON Kiosk stores: \(error)")
        }
    }

    /// The answer to a request whose identifier a concurrent one recorded first: that one's outcome.
    private func firstOutcome(_ requestIdentifier: String, of subscription: StoreSubscription) async throws
        -> (StoreSubscription, RetentionEvent?)
    {
        try await database.transaction { tx in
            let row =
                try await tx.subscription(
                    originalTransactionId: subscription.originalTransactionId, environment: subscription.environment)
                ?? subscription
            guard let first = try await Self.recordedEvent(requestIdentifier, of: row, in: tx) else {
                throw StorageError.engine(message: "the retention event \(requestIdentifier) vanished")
            }
            return (row, first)
        }
    }

    /// Confirms the cancellation: auto-renew off and `DID_CHANGE_RENEWAL_STATUS`/`AUTO_RENEW_DISABLED`, with the
    /// event, in one database transaction.
    private func turnAutoRenewOff(_ subscription: StoreSubscription, event: RetentionEvent, app: App) async throws
        -> StoreSubscription
    {
        let now = clocks.now(subscription.environment)
        return try await ledger.commit { tx, effects in
            guard
                var row = try await tx.lockedSubscription(
                    originalTransactionId: subscription.originalTransactionId, environment: subscription.environment)
            else { throw KioskError(.subscriptionNotFound, "The subscription was deleted meanwhile.") }
            if row.autoRenewEnabled, [.active, .billingRetry, .gracePeriod].contains(row.state) {
                row.autoRenewEnabled = false
                row.updatedAt = now
                try await tx.updateSubscription(row)
                try await lifecycle.notify(
                    .didChangeRenewalStatus, subtype: .autoRenewDisabled, row, at: now,
                    context: try await SubscriptionLifecycle.Context.load(row, in: tx), in: tx, effects: &effects)
            }
            var event = event
            event.outcome = "cancelled"
            event.summary = Self.summary(event, row: row)
            try await tx.insertRetentionEvent(try Self.record(event, subscription: row))
            return row
        }
    }

    /// Takes a plan switch or a promotional offer as the App Store does: a purchase of the product under `plan` by
    /// the subscriber (the one payment path, outside the app), which the store's usual rules price and notify
    /// (`DID_CHANGE_RENEWAL_PREF`, `OFFER_REDEEMED`) and which checks the offer's signature and nonce. The request's
    /// identifier is the purchase's idempotency key: a repeated request buys once.
    private func take(
        productId: String, plan: BillingPlanType, offer: SignedPromotion?, setup: Setup, requestIdentifier: String,
        success: String
    ) async -> (outcome: String, transactionId: String?, refusal: String?) {
        do {
            var order = try PaymentOrder(
                TestPurchaseRequest(
                    tester: setup.client.account.email, productId: productId,
                    idempotencyKey: "retention-\(requestIdentifier)",
                    billingPlanType: plan == .monthly ? plan.rawValue : nil))
            if let offer {
                order.offer = offer.offer
                order.appAccountToken = offer.appAccountToken
            }
            let entry = try await purchases.place(order, client: setup.client)
            guard entry.state == .purchased else {
                return ("refused", nil, entry.error?.message ?? "the purchase was \(entry.state.rawValue)")
            }
            return (success, entry.transaction?.transactionId, nil)
        } catch let error as KioskError {
            return ("refused", nil, error.message)
        } catch {
            return ("refused", nil, "\(error)")
        }
    }

    /// Redeems the app's retention offer for the next renewal of the product the subscription renews into:
    /// `OFFER_REDEEMED` without a subtype (an offer for an active subscription), with the event.
    private func redeem(
        _ offer: RetentionOffer, subscription: StoreSubscription, storefront: Storefront, event: RetentionEvent
    ) async throws -> StoreSubscription {
        let now = clocks.now(subscription.environment)
        return try await ledger.commit { tx, effects in
            guard
                var row = try await tx.lockedSubscription(
                    originalTransactionId: subscription.originalTransactionId, environment: subscription.environment),
                row.autoRenewEnabled, row.state == .active
            else {
                throw KioskError(
                    .subscriptionState, "The subscription changed meanwhile; the retention offer no longer applies.")
            }
            // Eligibility again, under the row's lock: a concurrent acceptance may have redeemed an offer already.
            guard
                let current = try await eligibleRetentionOffer(for: row, storefront: storefront, in: tx),
                current.identifier == offer.identifier,
                let terms = current.schedule.terms(.retention, identifier: current.identifier, in: storefront)
            else {
                throw KioskError(
                    .offerNotFound,
                    "The retention offer '\(offer.identifier)' no longer applies: it is gone, has no price in "
                        + "\(storefront.code), or an offer was redeemed meanwhile.")
            }
            row.deferOffer(terms)
            row.updatedAt = now
            try await tx.updateSubscription(row)
            try await lifecycle.notify(
                .offerRedeemed, row, at: now, context: try await SubscriptionLifecycle.Context.load(row, in: tx),
                in: tx, effects: &effects)
            var event = event
            event.outcome = "offer-redeemed"
            event.summary = Self.summary(event, row: row)
            try await tx.insertRetentionEvent(try Self.record(event, subscription: row))
            return row
        }
    }

    /// `event` with its outcome and summary, stored unless it already was (`store: false`).
    private func recorded(_ event: RetentionEvent, outcome: String, row: StoreSubscription, store: Bool = true)
        async throws -> RetentionEvent
    {
        var event = event
        event.outcome = outcome
        let refusal = outcome == "refused" ? event.summary : nil
        event.summary = Self.summary(event, row: row, refusal: refusal)
        if store, outcome != "cancelled" {
            try await database.transaction { [event] tx in
                try await tx.insertRetentionEvent(try Self.record(event, subscription: row))
            }
        }
        return event
    }

    static func record(_ event: RetentionEvent, subscription: StoreSubscription) throws -> RetentionEventRecord {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return RetentionEventRecord(
            requestId: event.requestIdentifier, appId: subscription.appId, environment: subscription.environment,
            originalTransactionId: subscription.originalTransactionId,
            createdAt: Date(millisecondsSince1970: event.date),
            event: String(decoding: try encoder.encode(event), as: UTF8.self))
    }

    /// The event in one sentence: how the endpoint answered, what the subscriber saw, what came of it.
    static func summary(_ event: RetentionEvent, row: StoreSubscription?, refusal: String? = nil) -> String {
        var parts: [String] = []
        if let realtime = event.realtime {
            switch realtime.result {
            case "answered": parts.append("The endpoint answered in \(realtime.milliseconds) ms")
            case "timed-out":
                parts.append("The endpoint did not answer within \(realtime.budgetMilliseconds) ms")
            case "invalid-answer":
                parts.append("The endpoint's answer could not be shown (\(realtime.reason ?? "invalid"))")
            default: parts.append("The endpoint failed (\(realtime.reason ?? realtime.result))")
            }
        } else {
            parts.append("The app has no real-time URL")
        }
        let shown = event.shown
        let message = shown.messageIdentifier.map { "message \($0)" } ?? "no message"
        let saw: String =
            switch shown.kind {
            case "message":
                event.source == "default" ? "the default \(message)" : message
            case "alternate-product": "\(message), offering a switch to \(shown.productId ?? "")"
            case "promotional-offer":
                "\(message) with the promotional offer \(shown.offerIdentifier ?? "") of \(shown.productId ?? "")"
            case "retention-offer":
                "the retention offer \(shown.offerIdentifier ?? "") of \(shown.productId ?? "")"
                    + (shown.messageIdentifier.map { " with the default message \($0)" } ?? "")
            default: "no retention message"
            }
        parts.append("the subscriber saw \(saw)")
        let ended = row.map { " (the subscription ends at \(AppleDateText.gmt($0.expiresAt)))" } ?? ""
        let outcome: String =
            switch event.outcome {
            case "cancelled": "and cancelled: auto-renew is off\(ended)"
            case "kept": "and kept the subscription: auto-renew stays on"
            case "switched": "and switched to \(shown.productId ?? "")"
            case "offer-redeemed":
                "and redeemed the offer \(shown.offerIdentifier ?? ""), which applies from the next renewal"
                    + (shown.kind == "promotional-offer" ? " or now, as its purchase says" : "")
            case "refused": "and took it, but the store refused: \(refusal ?? "no reason"); nothing changed"
            default: "and \(event.outcome)"
            }
        parts.append(outcome)
        return parts.joined(separator: "; ") + "."
    }
}
