import Foundation
import KioskCore
import KioskSQL
import KioskSigning
import KioskStorage
import Logging

/// What happens to an auto-renewable subscription when its `nextEventAt` comes (Apple's semantics): it renews,
/// fails to renew and retries billing (in a grace period if the app has one), recovers, or expires.
///
/// Each event's effect, the row's next `nextEventAt`, the renewal's transaction and queue entry and the
/// notifications it causes commit in one database transaction; notifications are delivered and the account's
/// updates streams nudged after commit. A crash before commit leaves the row due, so it is acted on exactly once.
struct SubscriptionLifecycle: Sendable {
    let store: StoreContext

    /// Rows claimed and acted on per database transaction: large enough that a batch's commit and shared reads cost
    /// little per row, small enough that a purchase waiting for the write lock waits a fraction of a second.
    static let batchSize = 128

    var subscriptions: SubscriptionService {
        SubscriptionService(context: store)
    }

    /// Batches one process works on at once on PostgreSQL, where replicas already claim disjoint rows (`SKIP
    /// LOCKED`): one batch's statements run in the database while another's rows are signed here. SQLite has one
    /// writer, so one batch at a time.
    static let postgresWorkers = 2

    /// Acts on every subscription of `environment` whose event is due by `dueBy`, in time order, until none is
    /// due (a renewal's next period may itself be due). A row that fails is logged and left due for the next run.
    func runUntilQuiet(_ environment: StoreEnvironment, dueBy: Date) async -> LifecycleSummary {
        let workers = store.database.engine == "postgresql" ? Self.postgresWorkers : 1
        return await withTaskGroup(of: LifecycleSummary.self) { group in
            for _ in 0..<workers {
                group.addTask { await drain(environment, dueBy: dueBy, reservingAhead: workers > 1) }
            }
            var summary = LifecycleSummary()
            for await part in group { summary.add(part) }
            return summary
        }
    }

    /// One worker of ``runUntilQuiet(_:dueBy:)``: batch after batch until none is claimed.
    ///
    /// With `reservingAhead`, after a full batch (more is likely due) the worker reserves the next batch's
    /// identifiers in a transaction of its own before opening the batch: a batch taking them itself would hold the
    /// sequence rows' locks until its commit, and every other worker's batch (and every purchase) would wait for
    /// it. Values left when the worker stops, or reserved for a batch that failed, are gaps nothing relies on.
    private func drain(_ environment: StoreEnvironment, dueBy: Date, reservingAhead: Bool) async -> LifecycleSummary {
        var summary = LifecycleSummary()
        var failing: Set<Int64> = []
        var reserve = IdentifierReserve()
        var lastBatchWasFull = false
        while true {
            if reservingAhead, lastBatchWasFull {
                await reserveIdentifiers(for: environment, in: &reserve)
            }
            let batch: Batch
            do {
                batch = try await runBatch(environment, dueBy: dueBy, skipping: failing, reserve: reserve)
                reserve = batch.reserve
            } catch {
                store.logger.error(
                    "Subscription events failed; retrying them one by one",
                    metadata: ["environment": "\(environment.rawValue)", "error": "\(error)"])
                batch = await runOneByOne(environment, dueBy: dueBy, skipping: failing)
                reserve = IdentifierReserve()
            }
            lastBatchWasFull = batch.claimed == Self.batchSize
            summary.add(batch.summary)
            failing.formUnion(batch.failed)
            if batch.claimed > 0 { CrashPoint.renewalBatchCommitted.reach() }
            await store.ledger.publish(batch.effects)
            if batch.claimed == 0 || batch.claimed == batch.failed.count { return summary }
        }
    }

    /// Tops `reserve` up to a full batch's identifiers of each sequence a renewal uses, in one transaction; on
    /// failure leaves it as it is (the batch then reserves what it lacks itself).
    private func reserveIdentifiers(for environment: StoreEnvironment, in reserve: inout IdentifierReserve) async {
        let sequences: [IdentifierSequence] = [
            environment == .production ? .productionTransactionId : .sandboxTransactionId, .webOrderLineItemId,
            .queueEntry,
        ]
        let wanted = sequences.map { ($0, Self.batchSize - reserve.count($0)) }.filter { $0.1 > 0 }
        do {
            let blocks = try await store.database.transaction { tx in
                var blocks: [(IdentifierSequence, ClosedRange<Int64>)] = []
                for (sequence, count) in wanted {
                    blocks.append((sequence, try await tx.nextIdentifiers(sequence, count: count)))
                }
                return blocks
            }
            for (sequence, block) in blocks { reserve.add(block, to: sequence) }
        } catch {
            store.logger.warning(
                "Identifiers could not be reserved ahead of a renewal batch", metadata: ["error": "\(error)"])
        }
    }

    /// What one database transaction did.
    private struct Batch: Sendable {
        var claimed = 0
        var failed: Set<Int64> = []
        var summary = LifecycleSummary()
        var effects = StoreEffects()
        /// The identifiers reserved and not used, committed with the batch.
        var reserve = IdentifierReserve()
    }

    private func runBatch(
        _ environment: StoreEnvironment, dueBy: Date, skipping failing: Set<Int64>, reserve: IdentifierReserve
    ) async throws -> Batch {
        try await store.database.transaction { tx in
            let claimed = try await tx.claimDueSubscriptions(
                environment: environment, dueBy: dueBy, limit: Self.batchSize + failing.count)
            var batch = Batch()
            let rows = claimed.filter { !failing.contains($0.originalTransactionId) }.prefix(Self.batchSize)
            let work = BatchWork(rows: rows.count, reserve: reserve, deferringInserts: true)
            try await work.prefetch(Array(rows), environment: environment, in: tx)
            for subscription in rows {
                batch.claimed += 1
                var row = subscription
                let outcome = try await act(
                    on: &row, at: subscription.nextEventAt ?? dueBy, in: tx, effects: &batch.effects, work: work)
                batch.summary.count(outcome)
                work.rowsLeft -= 1
            }
            try await work.flush(in: tx)
            batch.effects.deliver(work.notificationsInserted)
            batch.reserve = work.reserve
            return batch
        }
    }

    /// After a batch failed: each due row in its own transaction, so one bad row does not hold back the others.
    private func runOneByOne(_ environment: StoreEnvironment, dueBy: Date, skipping failing: Set<Int64>) async -> Batch
    {
        var batch = Batch()
        let due: [StoreSubscription]
        do {
            due = try await store.database.transaction { tx in
                try await tx.claimDueSubscriptions(
                    environment: environment, dueBy: dueBy, limit: Self.batchSize + failing.count)
            }
        } catch {
            store.logger.error("Due subscriptions could not be read", metadata: ["error": "\(error)"])
            return batch
        }
        for candidate in due where !failing.contains(candidate.originalTransactionId) {
            batch.claimed += 1
            do {
                let (outcome, effects) = try await store.database.transaction {
                    tx -> (LifecycleOutcome?, StoreEffects) in
                    guard
                        var row = try await tx.lockedSubscription(
                            originalTransactionId: candidate.originalTransactionId, environment: environment),
                        let at = row.nextEventAt, at <= dueBy
                    else { return (nil, StoreEffects()) }
                    var effects = StoreEffects()
                    return (try await act(on: &row, at: at, in: tx, effects: &effects), effects)
                }
                if let outcome { batch.summary.count(outcome) }
                batch.effects.merge(effects)
            } catch {
                batch.failed.insert(candidate.originalTransactionId)
                store.logger.error(
                    "Subscription event failed; it stays due",
                    metadata: [
                        "originalTransactionId": "\(candidate.originalTransactionId)",
                        "environment": "\(environment.rawValue)", "error": "\(error)",
                    ])
            }
        }
        return batch
    }

    // MARK: - Events

    /// What a subscription's event at `at` does, in `tx`; updates the row. A batch passes the `work` its rows share.
    func act(
        on subscription: inout StoreSubscription, at: Date, in tx: any StorageTransaction, effects: inout StoreEffects,
        work: BatchWork = BatchWork(rows: 1)
    ) async throws -> LifecycleOutcome {
        let context = try await Context.load(subscription, in: tx, work: work)
        guard let storefront = Storefront.named(context.latest.storefront) else {
            throw KioskError(
                .noPriceInStorefront,
                "The subscription \(subscription.originalTransactionId) was bought in \(context.latest.storefront), "
                    + "which is no storefront, so it cannot renew.", fix: "Restore the storefront's code.")
        }
        // A product removed from sale is not for sale, nor one the renewal cannot be priced for in the storefront
        // (no price, or, renewing into a new commitment, no monthly plan priced there).
        let product = context.renewalProduct.flatMap { $0.reviewState == .developerRemovedFromSale ? nil : $0 }
        let terms = subscription.renewalTerms(into: product, in: storefront, at: at, rules: context.rules)
        let decision = RenewalDecision.decide(
            for: subscription, at: at, rules: context.rules, productForSale: product != nil && terms != nil,
            paymentSucceeds: context.account.paymentOutcome == .approve && !subscription.failNextRenewal)
        switch decision {
        case .renew(let recovery):
            guard let product, let terms else {
                throw StorageError.engine(message: "renewal without a product for sale")
            }
            return try await renew(
                &subscription, product: product, terms: terms, storefront: storefront, at: at, recovery: recovery,
                context: context, in: tx, effects: &effects)
        case .startBillingRetry:
            return try await failRenewal(&subscription, at: at, context: context, in: tx, effects: &effects)
        case .retryLater:
            subscription.failNextRenewal = false
            subscription.nextEventAt = nextRetryEvent(subscription, after: at, rules: context.rules)
            subscription.updatedAt = at
            try await tx.updateSubscription(subscription)
            return .billingRetried
        case .endGracePeriod:
            subscription.state = .billingRetry
            subscription.gracePeriodExpiresAt = nil
            subscription.nextEventAt = nextRetryEvent(subscription, after: at, rules: context.rules)
            subscription.updatedAt = at
            try await tx.updateSubscription(subscription)
            try await notify(.gracePeriodExpired, subscription, at: at, context: context, in: tx, effects: &effects)
            return .gracePeriodExpired
        case .expire(let reason):
            return try await expire(&subscription, reason, at: at, context: context, in: tx, effects: &effects)
        case .nothing:
            subscription.nextEventAt = nil
            try await tx.updateSubscription(subscription)
            return .nothing
        }
    }

    /// What one more period of a continuing offer costs in `storefront`: the product's introductory or promotional
    /// offer, or the terms of the offer code (one-time, or an App Store Connect offer code's) or retention offer it
    /// was redeemed with.
    static func continuedOfferPrice(
        _ offer: AppliedOffer, product: Product, storefront: Storefront, in tx: any StorageTransaction
    ) async throws -> Int? {
        if offer.type == .retention {
            if offer.paymentMode == .freeTrial { return 0 }
            return try await tx.retentionOffers(appId: product.appId)
                .first { $0.productId == product.productId && $0.identifier == offer.identifier }?
                .schedule.price(in: storefront)
        }
        guard offer.type == .offerCode else { return product.price(of: offer, in: storefront) }
        if offer.paymentMode == .freeTrial { return 0 }
        // A custom code's campaign has no code rows of its own: its terms are the campaign's.
        let code = try await tx.offerCodes(appId: product.appId, productId: product.productId)
            .first { $0.referenceName == offer.identifier }?.schedule
        let campaign = try await tx.offerCodeCampaigns(appId: product.appId, productId: product.productId)
            .first { $0.name == offer.identifier }?.schedule
        return (code ?? campaign)?.pricing.price(in: storefront)
    }

    /// Charges the next period, which starts at `at`, on the `terms` Core decided
    /// (``StoreSubscription/renewalTerms(into:in:at:rules:)``): a new transaction of the same subscription. Inside a
    /// 12-month commitment it is the commitment's next monthly payment; at a commitment's end, or from an up-front
    /// period, a renewal under the monthly plan starts a new commitment; else the product's whole period is billed up
    /// front, a continuing offer pricing it.
    func renew(
        _ subscription: inout StoreSubscription, product: Product, terms: RenewalTerms, storefront: Storefront,
        at: Date, recovery: Bool, context: Context, in tx: any StorageTransaction, effects: inout StoreEffects
    ) async throws -> LifecycleOutcome {
        let previous = context.latest
        guard let duration = product.duration else {
            throw KioskError(
                .subscriptionProductWithoutDuration,
                "The product \(product.productId) has no subscription duration, so it cannot renew.",
                fix: "Give the product a duration, e.g. P1M.")
        }
        let commitment = terms.commitment
        // A pay-as-you-go offer continues at its price, one offer period per renewal, while periods remain (offers
        // are the up-front plan's).
        let offer = subscription.offerPeriodsRemaining > 0 && commitment == nil ? subscription.offer : nil
        let offerPrice =
            try await offer.asyncMap {
                try await Self.continuedOfferPrice($0, product: product, storefront: storefront, in: tx)
            } ?? nil
        let offerPeriodEnd = offer?.period.flatMap { OfferPeriod(iso8601: $0) }?.end(
            from: at, environment: subscription.environment)
        let id = try await context.work.identifier(
            subscription.environment == .production ? .productionTransactionId : .sandboxTransactionId, in: tx)
        var unsigned = StoreLedger.unsignedTransaction(
            TransactionTerms(
                environment: subscription.environment, app: context.app, accountId: subscription.accountId,
                product: product, storefront: storefront,
                original: (subscription.originalTransactionId, previous.originalPurchaseDate), purchaseDate: at,
                quantity: 1,
                priceMinorUnits: offerPrice ?? terms.priceMinorUnits,
                applicationUsername: previous.applicationUsername, appAccountToken: previous.appAccountToken,
                expiresDate: commitment.map(context.rules.periodEnd(of:)) ?? offerPeriodEnd
                    ?? context.rules.periodEnd(duration, from: at), reason: .renewal,
                offer: offer, commitment: commitment),
            id: id, webOrderLineItemId: try await context.work.identifier(.webOrderLineItemId, in: tx))
        let payload = StoreLedger.signingPayload(for: &unsigned, bundleId: context.app.bundleId, now: at)
        let renewal = try await context.work.insert(unsigned, signedWith: payload, by: store.signing, in: tx)
        try await context.work.recordSale(of: renewal, after: context.chain, in: tx)
        try await context.work.insert(
            StoreLedger.queueRecord(
                .purchased, about: renewal, sequence: try await context.work.identifier(.queueEntry, in: tx), now: at),
            in: tx)

        let continued = subscription.continuesCommitment
        subscription.productId = renewal.productId
        subscription.latestTransactionId = renewal.id
        subscription.commitment = commitment
        subscription.state = .active
        subscription.expiresAt = renewal.expiresDate ?? at
        subscription.nextEventAt = subscription.expiresAt
        subscription.expirationIntent = nil
        subscription.billingRetryStartedAt = nil
        subscription.gracePeriodExpiresAt = nil
        subscription.failNextRenewal = false
        // A consented price increase is now the price: nothing awaits consent any more. A commitment's monthly
        // payments keep its price; the increase waits for its renewal.
        if !continued {
            subscription.priceIncreaseStatus = nil
            subscription.renewalPriceMinorUnits = nil
        }
        // The sandbox's renewal limit counts renewals of the product's period: a commitment's monthly payments are one.
        if !continued { subscription.renewalCount += 1 }
        if offer != nil { subscription.offerPeriodsRemaining -= 1 }
        if subscription.offerPeriodsRemaining == 0 { subscription.offer = nil }
        subscription.updatedAt = at
        try await tx.updateSubscription(subscription)

        var renewed = context
        renewed.latest = renewal
        renewed.chain = context.chain.map { $0 + [renewal] }
        try await notify(
            .didRenew, subtype: recovery ? .billingRecovery : nil, subscription, at: at, context: renewed, in: tx,
            effects: &effects)
        effects.wake(
            QueueFeed.Key(
                environment: subscription.environment, accountId: subscription.accountId, appId: subscription.appId))
        return recovery ? .recovered : .renewed
    }

    /// The renewal charge failed: billing retry begins, in a grace period when the app has one and the payment may
    /// have it (``RenewalRules/gracePeriodEnd(from:days:billingPlan:)``: never the monthly plan's).
    private func failRenewal(
        _ subscription: inout StoreSubscription, at: Date, context: Context, in tx: any StorageTransaction,
        effects: inout StoreEffects
    ) async throws -> LifecycleOutcome {
        subscription.failNextRenewal = false
        subscription.billingRetryStartedAt = at
        subscription.gracePeriodExpiresAt = context.rules.gracePeriodEnd(
            from: at, days: context.app.billingGracePeriodDays, billingPlan: subscription.nextBillingPlan)
        subscription.state = subscription.gracePeriodExpiresAt == nil ? .billingRetry : .gracePeriod
        subscription.nextEventAt = nextRetryEvent(subscription, after: at, rules: context.rules)
        subscription.updatedAt = at
        try await tx.updateSubscription(subscription)
        try await notify(
            .didFailToRenew, subtype: subscription.state == .gracePeriod ? .gracePeriod : nil, subscription,
            at: at, context: context, in: tx, effects: &effects)
        return .billingRetryStarted
    }

    /// The earliest of the next billing retry, the end of the grace period and the end of the retry window.
    private func nextRetryEvent(_ subscription: StoreSubscription, after at: Date, rules: RenewalRules) -> Date {
        let started = subscription.billingRetryStartedAt ?? at
        let candidates = [
            rules.nextRetry(after: at, startedAt: started, billingPlan: subscription.nextBillingPlan),
            subscription.gracePeriodExpiresAt.flatMap { $0 > at ? $0 : nil },
            rules.retryEnd(from: started, billingPlan: subscription.nextBillingPlan),
        ]
        return candidates.compactMap { $0 }.min()!
    }

    /// Ends the subscription for `reason`: no further events.
    func expire(
        _ subscription: inout StoreSubscription, _ reason: RenewalDecision.ExpirationReason, at: Date, context: Context,
        in tx: any StorageTransaction, effects: inout StoreEffects
    ) async throws -> LifecycleOutcome {
        subscription.state = .expired
        subscription.expirationIntent = reason.intent
        subscription.autoRenewEnabled = false
        subscription.nextEventAt = nil
        subscription.billingRetryStartedAt = nil
        subscription.gracePeriodExpiresAt = nil
        subscription.failNextRenewal = false
        subscription.updatedAt = at
        try await tx.updateSubscription(subscription)
        try await notify(
            .expired, subtype: reason.subtype, subscription, at: at, context: context, in: tx,
            effects: &effects)
        return .expired
    }

    /// Inserts a notification about the subscription, with its current transaction, renewal info and status.
    func notify(
        _ type: NotificationType, subtype: NotificationSubtype? = nil, _ subscription: StoreSubscription, at: Date,
        context: Context,
        in tx: any StorageTransaction, effects: inout StoreEffects
    ) async throws {
        // Renewal info reads the database where the batch did not read ahead for it (the chain; an ended
        // subscription's win-back history): what the batch has yet to insert goes in first.
        if context.chain == nil || subscription.state == .expired || subscription.state == .revoked {
            try await context.work.flush(in: tx)
        }
        let renewalInfo = try await subscriptions.renewalInfo(
            for: subscription, latest: context.latest, chain: context.chain, autoRenewProduct: context.renewalProduct,
            now: at, in: tx)
        let content = NotificationContent(
            type: type, subtype: subtype, transaction: context.latest, status: subscription.state.appleStatus)
        if let notification = try await context.work.insertNotification(
            content, renewalInfo: renewalInfo, app: context.app, environment: subscription.environment, now: at,
            store: store, in: tx)
        {
            effects.deliver([notification])
        }
    }

    /// What an event needs besides the row: its app, account, latest transaction, the product it renews into
    /// and the timing rules of its environment and tester.
    struct Context {
        var app: App
        var account: StoreAccount
        var latest: StoreTransaction
        /// Every transaction of the subscription, `latest` included, when the batch read them; nil: read when needed.
        var chain: [StoreTransaction]?
        var renewalProduct: Product?
        var rules: RenewalRules
        var work: BatchWork

        static func load(
            _ subscription: StoreSubscription, in tx: any StorageTransaction, work: BatchWork = BatchWork(rows: 1)
        ) async throws -> Context {
            let environment = subscription.environment
            var chain = work.chain(of: subscription.originalTransactionId)
            var latest = chain?.first { $0.id == subscription.latestTransactionId }
            if latest == nil {
                chain = nil
                try await work.flush(in: tx)
                latest = try await tx.transaction(id: subscription.latestTransactionId, environment: environment)
            }
            guard let app = try await work.app(id: subscription.appId, in: tx), let latest else {
                throw StorageError.engine(
                    message: "subscription \(subscription.originalTransactionId) lost its app or latest transaction")
            }
            guard let account = try await work.account(id: subscription.accountId, environment: environment, in: tx)
            else {
                throw StorageError.engine(
                    message: "subscription \(subscription.originalTransactionId) lost its account")
            }
            let storeAccount = StoreAccount(account)
            return Context(
                app: app, account: storeAccount, latest: latest, chain: chain,
                renewalProduct: try await work.product(
                    appId: app.id, productId: subscription.nextRenewalProductId, in: tx),
                rules: storeAccount.renewalRules, work: work)
        }
    }

    /// What the rows of one batch share, read, reserved or written once per batch instead of once per row: their apps
    /// and products (events change neither), their accounts and transactions, blocks of identifiers (a block holds as
    /// many values as rows are left, so a batch where every row renews numbers its transactions without gaps), and
    /// their inserts.
    ///
    /// `deferringInserts`: the renewals' transactions, queue entries and notifications are kept until ``flush(in:)``
    /// (which a batch calls before it commits, and before any read that could see them), then inserted with one
    /// statement per table. Their signatures (a renewal's transaction, and each notification with the renewal info
    /// it carries) are made meanwhile, in tasks of their own: on another core while the batch goes on with its next
    /// rows' statements. Made in the order of the rows, they are inserted in that order. A batch that fails before
    /// ``flush(in:)`` leaves its tasks to finish and drops what they made: nothing signed leaves the transaction.
    final class BatchWork {
        private let defersInserts: Bool
        private var transactionsToInsert: [Task<StoreTransaction, any Error>] = []
        /// The batch's renewals by transaction id, signed or being signed: a notification about one carries its signed
        /// form.
        private var transactionsBeingSigned: [StoreTransaction.ID: Task<StoreTransaction, any Error>] = [:]
        private var queueRecordsToInsert: [QueueRecord] = []
        private var notificationsToInsert: [Task<ServerNotification, any Error>] = []
        /// The notifications ``flush(in:)`` inserted, for the batch to deliver once it commits.
        private(set) var notificationsInserted: [ServerNotification] = []
        private var moneyEventsToInsert: [MoneyEvent] = []
        /// What the batch's sales are priced under, read once.
        private var salesTerms: (taxRules: [TaxRule], agreement: PaidAppsAgreement)?
        private var apps: [Int64: App] = [:]
        private var products: [String: Product?] = [:]
        /// Identifiers reserved and not yet used.
        private(set) var reserve: IdentifierReserve
        /// The batch's accounts and subscriptions' transactions, read in one statement each; taken once each.
        private var accounts: [Account.ID: Account] = [:]
        private var chains: [StoreTransaction.ID: [StoreTransaction]] = [:]
        /// Rows of the batch not yet acted on.
        var rowsLeft: Int

        init(rows: Int, reserve: IdentifierReserve = IdentifierReserve(), deferringInserts: Bool = false) {
            rowsLeft = rows
            self.reserve = reserve
            defersInserts = deferringInserts
        }

        /// Inserts `transaction` signed with `payload` (``StoreLedger/signingPayload(for:bundleId:now:)``); returns it
        /// signed, or, deferring, as it is: its signature is made beside the batch's next statements.
        func insert(
            _ transaction: StoreTransaction, signedWith payload: JWSTransactionDecodedPayload, by signing: StoreSigning,
            in tx: any StorageTransaction
        ) async throws -> StoreTransaction {
            let sign = { @Sendable in
                var signed = transaction
                signed.signedTransaction = try signing.sign(payload, environment: transaction.environment)
                return signed
            }
            guard defersInserts else {
                let signed = try sign()
                try await tx.insertTransaction(signed)
                return signed
            }
            let task = Task(operation: sign)
            transactionsToInsert.append(task)
            transactionsBeingSigned[transaction.id] = task
            return transaction
        }

        func insert(_ record: QueueRecord, in tx: any StorageTransaction) async throws {
            if defersInserts { queueRecordsToInsert.append(record) } else { try await tx.insertQueueRecord(record) }
        }

        /// Inserts a notification of `content`, carrying `renewalInfo` signed, and returns it to deliver once the
        /// change commits; deferring, it is signed beside the batch's next statements (with its transaction's
        /// signature, when that is still being made) and returns nil: the batch delivers
        /// ``notificationsInserted``.
        func insertNotification(
            _ content: NotificationContent, renewalInfo: JWSRenewalInfoDecodedPayload, app: App,
            environment: StoreEnvironment, now: Date, store: StoreContext, in tx: any StorageTransaction
        ) async throws -> ServerNotification? {
            let transactionBeingSigned = content.transaction.flatMap {
                $0.signedTransaction.isEmpty ? transactionsBeingSigned[$0.id] : nil
            }
            let sign = { @Sendable in
                var content = content
                if let transactionBeingSigned { content.transaction = try await transactionBeingSigned.value }
                content.signedRenewalInfo = try store.signing.sign(renewalInfo, environment: environment)
                return try store.notifications.make(content, app: app, environment: environment, now: now)
            }
            guard defersInserts else {
                let notification = try await sign()
                try await tx.insertNotification(notification)
                return notification
            }
            notificationsToInsert.append(Task(operation: sign))
            return nil
        }

        /// Records what the renewal `transaction` is worth (``SalesLedger``); `chain`: the subscription's
        /// transactions before it, read now when nil.
        func recordSale(
            of transaction: StoreTransaction, after chain: [StoreTransaction]?, in tx: any StorageTransaction
        )
            async throws
        {
            if salesTerms == nil { salesTerms = (try await tx.taxRules(), try await CatalogService.agreement(in: tx)) }
            guard let terms = salesTerms else { return }
            var history = chain
            if history == nil {
                try await flush(in: tx)
                history = try await tx.transactions(
                    originalTransactionIds: [transaction.originalTransactionId], environment: transaction.environment)
            }
            let event = SalesLedger.sale(
                transaction, kind: .renewal, chain: history ?? [], taxRules: terms.taxRules, agreement: terms.agreement)
            if defersInserts { moneyEventsToInsert.append(event) } else { try await tx.insertMoneyEvents([event]) }
        }

        /// Inserts what was deferred, one statement per table, once its signatures are made.
        func flush(in tx: any StorageTransaction) async throws {
            var transactions: [StoreTransaction] = []
            for task in transactionsToInsert { transactions.append(try await task.value) }
            var notifications: [ServerNotification] = []
            for task in notificationsToInsert { notifications.append(try await task.value) }
            try await tx.insertTransactions(transactions)
            try await tx.insertQueueRecords(queueRecordsToInsert)
            try await tx.insertNotifications(notifications)
            try await tx.insertMoneyEvents(moneyEventsToInsert)
            notificationsInserted += notifications
            transactionsToInsert = []
            queueRecordsToInsert = []
            notificationsToInsert = []
            moneyEventsToInsert = []
        }

        /// Reads the accounts and transactions of `rows` in two statements.
        func prefetch(_ rows: [StoreSubscription], environment: StoreEnvironment, in tx: any StorageTransaction)
            async throws
        {
            for account in try await tx.accounts(ids: rows.map(\.accountId), environment: environment) {
                accounts[account.id] = account
            }
            chains = Dictionary(
                grouping: try await tx.transactions(
                    originalTransactionIds: rows.map(\.originalTransactionId), environment: environment),
                by: \.originalTransactionId)
        }

        /// The account, from the prefetched ones (each handed out once: a row's event may change it) or read now.
        func account(id: Account.ID, environment: StoreEnvironment, in tx: any StorageTransaction) async throws
            -> Account?
        {
            if let account = accounts.removeValue(forKey: id) { return account }
            return try await tx.account(id: id, environment: environment)
        }

        /// The subscription's transactions, when prefetched and not yet handed out (each is handed out once).
        func chain(of originalTransactionId: StoreTransaction.ID) -> [StoreTransaction]? {
            chains.removeValue(forKey: originalTransactionId)
        }

        func app(id: Int64, in tx: any StorageTransaction) async throws -> App? {
            if let app = apps[id] { return app }
            let app = try await tx.app(id: id)
            apps[id] = app
            return app
        }

        func product(appId: Int64, productId: String, in tx: any StorageTransaction) async throws -> Product? {
            let key = "\(appId) \(productId)"
            if let product = products[key] { return product }
            let product = try await tx.product(appId: appId, productId: productId)
            products[key] = .some(product)
            return product
        }

        /// The next value of `sequence`, from this batch's block, reserving a new block when it is used up.
        func identifier(_ sequence: IdentifierSequence, in tx: any StorageTransaction) async throws -> Int64 {
            if let value = reserve.take(sequence) { return value }
            let block = try await tx.nextIdentifiers(sequence, count: max(1, rowsLeft))
            reserve.add(block, to: sequence)
            return reserve.take(sequence) ?? block.lowerBound
        }
    }

    /// Identifier values reserved and not yet used, per sequence, lowest first.
    struct IdentifierReserve: Sendable {
        private var blocks: [IdentifierSequence: [ClosedRange<Int64>]] = [:]

        func count(_ sequence: IdentifierSequence) -> Int {
            blocks[sequence, default: []].reduce(0) { $0 + $1.count }
        }

        mutating func add(_ block: ClosedRange<Int64>, to sequence: IdentifierSequence) {
            blocks[sequence, default: []].append(block)
        }

        /// The lowest value left of `sequence`, now used; nil when none is left.
        mutating func take(_ sequence: IdentifierSequence) -> Int64? {
            guard var queue = blocks[sequence], let block = queue.first else { return nil }
            if block.lowerBound < block.upperBound {
                queue[0] = (block.lowerBound + 1)...block.upperBound
            } else {
                queue.removeFirst()
            }
            blocks[sequence] = queue
            return block.lowerBound
        }
    }
}

/// What one subscription event did.
enum LifecycleOutcome: Sendable {
    case renewed, recovered, expired, billingRetryStarted, billingRetried, gracePeriodExpired, nothing
}
