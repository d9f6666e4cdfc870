import Foundation
import KioskCore
import KioskSQL

/// The store's database: SQLite (embedded default) or PostgreSQL, behind one interface.
///
/// Every operation that changes state runs inside `transaction`, so nothing is ever half-written.
public protocol KioskDatabase: Sendable {
    /// `sqlite` or `postgresql`.
    var engine: String { get }

    /// Runs `body` in one database transaction: commits if it returns, rolls back if it throws.
    func transaction<T: Sendable>(_ body: @Sendable (any StorageTransaction) async throws -> T) async throws -> T

    /// Runs `body` as a read, beside the writer instead of after it (SQLite's reader connections; on PostgreSQL
    /// statements outside any transaction): for requests that only read, such as a session lookup or `verifyReceipt`.
    /// On SQLite it sees every transaction committed before it began; on PostgreSQL each statement sees what was
    /// committed before that statement began (``SQLTransactionRunner/withReadSession(_:)``). Any write in it fails.
    func read<T: Sendable>(_ body: @Sendable (any StorageTransaction) async throws -> T) async throws -> T

    /// Checks the database answers (for `/health`); throws if it does not.
    func ping() async throws

    /// How many transactions run and wait for a connection now (for `/metrics`).
    var poolUse: DatabasePoolUse { get }

    /// SQLite: pages written to the write-ahead log since the database opened (for `/metrics`); nil on PostgreSQL.
    var logPagesWritten: Int? { get }

    /// SQLite: microseconds its one writer spent in transactions and their commits (for `/metrics`); nil on
    /// PostgreSQL.
    var writerBusyMicroseconds: Int? { get }

    /// SQLite: how many times the write-ahead log was synced, each sync making every commit before it durable (for
    /// `/metrics`); nil on PostgreSQL.
    var logSyncs: Int? { get }

    /// Statements this process ran since the database opened, `BEGIN` and `COMMIT` included (for `/metrics`); on
    /// PostgreSQL each one is a round trip.
    var statementsRun: Int { get }

    /// Closes connections. Call once, at shutdown.
    func close() async throws
}

/// Named counters for numbers Kiosk assigns (app ids, subscription group ids).
public enum IdentifierSequence: String, Sendable, CaseIterable {
    /// `appAppleId`s; the first is 1_400_000_001.
    case appAppleId = "app_apple_id"
    /// `subscriptionGroupIdentifier`s; the first is 21_000_001.
    case subscriptionGroupId = "subscription_group_id"
    /// Production transaction ids; the first is 1_000_000_000_000_001 (16 digits, like Apple's).
    case productionTransactionId = "production_transaction_id"
    /// Sandbox transaction ids; the first is 2_000_000_000_000_001.
    case sandboxTransactionId = "sandbox_transaction_id"
    /// Payment queue entries, one sequence for both environments; the updates stream's cursor. Taking it
    /// inside the inserting transaction orders entries by commit on both engines.
    case queueEntry = "queue_entry"
    /// `webOrderLineItemId`s of subscription periods, one sequence for both environments; the first is
    /// 8_000_000_000_000_001.
    case webOrderLineItemId = "web_order_line_item_id"
    /// App Store Connect offer codes (``OfferCodeCampaign``); the first is 6_100_000_001.
    case offerCodeCampaignId = "offer_code_campaign_id"
    /// Their batches of one-time codes and custom codes (``OfferCodeBatch``); the first is 6_200_000_001.
    case offerCodeBatchId = "offer_code_batch_id"
    /// Not an identifier: the version of the rows the store's read cache copies (apps, products, sessions,
    /// settings), bumped by every transaction that writes them.
    case cachedRowsVersion = "cached_rows_version"
}

/// The reads and writes available inside one database transaction: one repository per aggregate, each a small
/// protocol; the SQL implementation (`SQLStorageTransaction`) has them all, on both engines.
///
/// Aggregates are stored whole: a `Product` with its localizations, prices and offers; a `SubscriptionGroup`
/// with its localizations. Lookups return nil when nothing matches. Writes that break a uniqueness rule throw
/// `StorageError.uniqueViolation`.
public protocol StorageTransaction:
    SettingsRepository, CatalogRepository, AccountRepository, PaymentRepository, TransactionRepository,
    SubscriptionRepository, NotificationRepository, MoneyRepository, SigningRepository, TeamRepository,
    RetentionRepository
{}

/// Settings and the counters of the numbers Kiosk assigns.
public protocol SettingsRepository: Sendable {
    func nextIdentifier(_ sequence: IdentifierSequence) async throws -> Int64
    /// Reserves `count` (at least 1) consecutive values of `sequence` in one statement, for work that needs many.
    func nextIdentifiers(_ sequence: IdentifierSequence, count: Int) async throws -> ClosedRange<Int64>
    func setting(_ key: String) async throws -> String?
    func setSetting(_ key: String, to value: String?) async throws
    /// Stores `value` under `key` unless the key has a value; returns the value stored afterwards. Two processes
    /// doing this at once agree on one value (the first to commit), where read-then-write could each keep their own.
    func settingInsertingIfAbsent(_ key: String, value: String) async throws -> String
}

/// Apps, their products and subscription groups, their In-App Purchase keys and offer codes.
public protocol CatalogRepository: Sendable {
    func insertApp(_ app: App) async throws
    func updateApp(_ app: App) async throws
    func app(id: App.ID) async throws -> App?
    func app(bundleId: String) async throws -> App?
    /// All apps, ordered by bundle id.
    func apps() async throws -> [App]
    func insertProduct(_ product: Product) async throws
    func updateProduct(_ product: Product) async throws
    /// Finds deleted products too (check `deletedAt`): their ids stay reserved forever.
    func product(appId: App.ID, productId: String) async throws -> Product?
    /// All products of an app, deleted ones included, ordered by product id.
    func products(appId: App.ID) async throws -> [Product]
    /// How many products the app has, deleted ones included (their ids stay reserved).
    func productCount(appId: App.ID) async throws -> Int
    /// One page of the app's products that are not deleted, ordered by product id.
    func liveProducts(appId: App.ID, limit: Int, offset: Int) async throws -> [Product]
    /// How many of the app's products are not deleted.
    func liveProductCount(appId: App.ID) async throws -> Int
    func insertGroup(_ group: SubscriptionGroup) async throws
    func updateGroup(_ group: SubscriptionGroup) async throws
    func deleteGroup(id: SubscriptionGroup.ID) async throws
    func group(id: SubscriptionGroup.ID) async throws -> SubscriptionGroup?
    /// All groups of an app, ordered by reference name.
    func groups(appId: App.ID) async throws -> [SubscriptionGroup]
    func insertKey(_ key: InAppPurchaseKey) async throws
    func updateKey(_ key: InAppPurchaseKey) async throws
    func key(id: InAppPurchaseKey.ID) async throws -> InAppPurchaseKey?
    /// All keys of an app, revoked ones included, ordered by creation.
    func keys(appId: App.ID) async throws -> [InAppPurchaseKey]
    /// Stores a new code; false (and nothing changes) when the code is taken.
    func insertOfferCode(_ code: OfferCode) async throws -> Bool
    func offerCode(_ code: String) async throws -> OfferCode?
    /// The app's codes, optionally of one product, oldest first.
    func offerCodes(appId: App.ID, productId: String?) async throws -> [OfferCode]
    /// Marks the code redeemed by `accountId` unless it was redeemed before; false (and nothing changes) then.
    func redeemOfferCode(_ code: String, accountId: UUID, at date: Date) async throws -> Bool
    func insertOfferCodeCampaign(_ campaign: OfferCodeCampaign) async throws
    func setOfferCodeCampaignActive(id: OfferCodeCampaign.ID, active: Bool) async throws
    func offerCodeCampaign(id: OfferCodeCampaign.ID) async throws -> OfferCodeCampaign?
    /// A product's campaigns, oldest first.
    func offerCodeCampaigns(appId: App.ID, productId: String) async throws -> [OfferCodeCampaign]
    func insertOfferCodeBatch(_ batch: OfferCodeBatch) async throws
    func setOfferCodeBatchActive(id: OfferCodeBatch.ID, active: Bool) async throws
    func offerCodeBatch(id: OfferCodeBatch.ID) async throws -> OfferCodeBatch?
    /// A campaign's batches, oldest first.
    func offerCodeBatches(campaignId: OfferCodeCampaign.ID) async throws -> [OfferCodeBatch]
    /// The app's batch whose custom code is `code` (upper case).
    func customCodeBatch(appId: App.ID, code: String) async throws -> OfferCodeBatch?
    /// A batch's one-time codes, by code.
    func offerCodes(batchId: OfferCodeBatch.ID) async throws -> [OfferCode]
    /// Counts `accountId`'s redemption of a custom code, unless every code was redeemed or the account redeemed it
    /// before (then nothing changes).
    func redeemCustomCode(batchId: OfferCodeBatch.ID, accountId: UUID, at date: Date) async throws
        -> CustomCodeRedemption
}

/// What redeeming a custom offer code did.
public enum CustomCodeRedemption: Sendable, Equatable {
    case redeemed
    /// The account redeemed this code before.
    case alreadyRedeemed
    /// As many customers as the batch has codes redeemed it.
    case noneLeft
}

/// Accounts (sandbox testers and customers) and their client sessions.
public protocol AccountRepository: Sendable {
    func insertAccount(_ account: Account) async throws
    func updateAccount(_ account: Account) async throws
    func deleteAccount(id: Account.ID) async throws
    func account(id: Account.ID, environment: StoreEnvironment) async throws -> Account?
    /// The accounts among `ids` that exist, in one statement (for work on many rows at once), in no set order.
    func accounts(ids: [Account.ID], environment: StoreEnvironment) async throws -> [Account]
    /// `email` is compared lower-cased.
    func account(email: String, environment: StoreEnvironment) async throws -> Account?
    /// Up to `limit` (nil: all) of the environment's accounts from `offset`, ordered by email in the database's
    /// collation, so that pages follow one another on either engine.
    func accounts(environment: StoreEnvironment, limit: Int?, offset: Int) async throws -> [Account]
    /// How many accounts the environment has.
    func accountCount(environment: StoreEnvironment) async throws -> Int
    func insertSession(_ session: StoreSession) async throws
    func session(tokenHash: String) async throws -> StoreSession?
    func deleteSession(tokenHash: String) async throws
    /// The accounts whose transactions in `environment` carry `appAccountToken`.
    func accountIds(appAccountToken: UUID, environment: StoreEnvironment) async throws -> [UUID]
}

/// Payments, the payment queue and the failures armed by the test controls.
public protocol PaymentRepository: Sendable {
    /// Throws `uniqueViolation(constraint: "payments.idempotency_key")` when the account already has a payment
    /// with this key in this app.
    func insertPayment(_ payment: Payment) async throws
    func updatePayment(_ payment: Payment) async throws
    func payment(id: Payment.ID) async throws -> Payment?
    func payment(accountId: UUID, appId: App.ID, idempotencyKey: String) async throws -> Payment?
    /// Payments of an app in one environment, optionally of one account and in one state, oldest first.
    func payments(appId: App.ID, environment: StoreEnvironment, accountId: UUID?, state: PaymentState?)
        async throws -> [Payment]
    /// Inserts the records, many rows per statement.
    func insertQueueRecords(_ records: [QueueRecord]) async throws
    /// Sets `finishedAt` if it is nil; returns the record as stored afterwards (nil if there is none).
    func finishQueueRecord(sequence: Int64, at date: Date) async throws -> QueueRecord?
    func queueRecord(sequence: Int64) async throws -> QueueRecord?
    /// Every record of one payment, by sequence.
    func queueRecords(paymentId: Payment.ID) async throws -> [QueueRecord]
    /// Unfinished records of one account in one app, by sequence.
    func unfinishedQueueRecords(accountId: UUID, appId: App.ID, environment: StoreEnvironment) async throws
        -> [QueueRecord]
    /// Records with `sequence > after`, by sequence, at most `limit`.
    func queueRecords(accountId: UUID, appId: App.ID, environment: StoreEnvironment, after: Int64, limit: Int)
        async throws -> [QueueRecord]
    /// The highest sequence handed out so far (0 when none).
    func latestQueueSequence() async throws -> Int64
    /// Replaces the armed failure of `failure.api` in its app (`remaining == 0` removes it).
    func setArmedFailure(_ failure: ArmedFailure) async throws
    func armedFailures(appId: App.ID) async throws -> [ArmedFailure]
    /// Uses up one call of an armed failure: returns its error code and decrements it, or nil if none is armed.
    func consumeArmedFailure(appId: App.ID, api: ArmedFailure.API) async throws -> Int?
}

/// Server notifications, their delivery attempts, and the backlog.
public protocol NotificationRepository: Sendable {
    /// Inserts the notifications, many rows per statement.
    func insertNotifications(_ notifications: [ServerNotification]) async throws
    func notification(uuid: String) async throws -> ServerNotification?
    /// The notification `POST /inApps/v1/notifications/test` made with this token, in that app and environment.
    func notification(testToken: String, appId: App.ID, environment: StoreEnvironment) async throws
        -> ServerNotification?
    /// Sets a notification's delivery state, when its next attempt is due and how many scheduled attempts it had;
    /// releases its lease.
    func updateNotificationState(
        uuid: String, state: ServerNotification.State, nextAttemptAt: Date?, attemptCount: Int
    ) async throws
    /// Ends the delivery of the notifications `uuids` in `state` (no next attempt, lease released, attempt counts
    /// kept): a round's notifications that had nowhere to go, in one statement.
    func endNotifications(uuids: [String], in state: ServerNotification.State) async throws
    /// Claims up to `limit` pending notifications of `environment` due by `dueBy` (their environment's clock) that
    /// no store process holds (lease free by `now`, base clock), leasing them until `leaseUntil` (PostgreSQL: `FOR
    /// UPDATE SKIP LOCKED`, so concurrent replicas claim different rows). Oldest schedule first.
    func claimDueNotifications(
        environment: StoreEnvironment, dueBy: Date, now: Date, leaseUntil: Date, limit: Int
    ) async throws -> [ServerNotification]
    /// An app's notifications in one environment, newest first, at most `limit`.
    func notifications(appId: App.ID, environment: StoreEnvironment, limit: Int) async throws -> [ServerNotification]
    /// One page of an app's notification history, oldest first (by creation, then UUID).
    func notifications(_ query: NotificationHistoryQuery) async throws -> [ServerNotification]
    func insertNotificationAttempt(_ attempt: NotificationAttempt) async throws
    /// The attempts of these notifications, oldest first.
    func notificationAttempts(uuids: [String]) async throws -> [NotificationAttempt]
    /// How many of the environment's notifications are committed and not yet delivered, and the oldest one's
    /// creation.
    func notificationBacklog(environment: StoreEnvironment) async throws -> (count: Int, oldest: Date?)
}

/// Subscriptions, their renewal extensions and promotional offer nonces.
public protocol SubscriptionRepository: Sendable {
    /// Throws `uniqueViolation(constraint: "renewal_extensions.request_identifier")` when the app already made a
    /// request with this identifier in this environment.
    func insertRenewalExtensionRequest(_ request: RenewalExtensionRequest) async throws
    func updateRenewalExtensionRequest(_ request: RenewalExtensionRequest) async throws
    func renewalExtensionRequest(requestIdentifier: String, appId: App.ID, environment: StoreEnvironment)
        async throws -> RenewalExtensionRequest?
    /// Records that one subscription was extended by the request `requestIdentifier`.
    func insertSubscriptionExtension(
        originalTransactionId: Int64, environment: StoreEnvironment, requestIdentifier: String, extendByDays: Int,
        at date: Date) async throws
    /// How many extensions the subscription got at or after `since`.
    func subscriptionExtensionCount(originalTransactionId: Int64, environment: StoreEnvironment, since: Date)
        async throws -> Int
    /// The latest transaction of every subscription (original transaction id) of an app whose latest transaction
    /// is for `productId`, by original transaction id.
    func latestSubscriptionTransactions(productId: String, appId: App.ID, environment: StoreEnvironment)
        async throws -> [StoreTransaction]
    /// Throws `uniqueViolation` when the subscription (environment, original transaction id) exists.
    func insertSubscription(_ subscription: StoreSubscription) async throws
    /// Writes the subscription's state over its row; its app, account, group and creation stay as inserted.
    func updateSubscription(_ subscription: StoreSubscription) async throws
    func subscription(originalTransactionId: Int64, environment: StoreEnvironment) async throws -> StoreSubscription?
    /// Every subscription of one account in one app, by original transaction id.
    func subscriptions(accountId: UUID, appId: App.ID, environment: StoreEnvironment) async throws
        -> [StoreSubscription]
    /// Up to `limit` subscriptions whose `nextEventAt` is at or before `dueBy`, earliest first, claimed for this
    /// transaction: on PostgreSQL locked (`FOR UPDATE SKIP LOCKED`) so no other replica takes them until it ends.
    func claimDueSubscriptions(environment: StoreEnvironment, dueBy: Date, limit: Int) async throws
        -> [StoreSubscription]
    /// One subscription, locked for the rest of this transaction on PostgreSQL (waiting for another holder), so
    /// a test control and the scheduler never act on it at once.
    func lockedSubscription(originalTransactionId: Int64, environment: StoreEnvironment) async throws
        -> StoreSubscription?
    /// Records that a promotional offer signature with `nonce` was redeemed in the app; false (and nothing
    /// changes) when the nonce was used before.
    func useOfferNonce(_ nonce: UUID, appId: App.ID, environment: StoreEnvironment, at date: Date) async throws -> Bool
    /// When the environment's earliest subscription event (renewal, expiry, retry) is or was due.
    func earliestDueSubscription(environment: StoreEnvironment) async throws -> Date?
}

/// Transactions, app transactions, transaction history and consumption reports.
public protocol TransactionRepository: Sendable {
    /// Inserts the transactions, many rows per statement.
    func insertTransactions(_ transactions: [StoreTransaction]) async throws
    /// Stores a transaction signed anew: only over the revision before its own (`revision - 1`), so of two changes
    /// made at once from the same state one lands and the other throws.
    func updateTransaction(_ transaction: StoreTransaction) async throws
    func transaction(id: StoreTransaction.ID, environment: StoreEnvironment) async throws -> StoreTransaction?
    /// Every transaction of the subscriptions (or single purchases) `originalTransactionIds`, in one statement (for
    /// work on many rows at once), in no set order.
    func transactions(originalTransactionIds: [StoreTransaction.ID], environment: StoreEnvironment) async throws
        -> [StoreTransaction]
    /// Every transaction of one account in one app, oldest first (by purchase date, then id).
    func transactions(accountId: UUID, appId: App.ID, environment: StoreEnvironment) async throws
        -> [StoreTransaction]
    /// Deletes the transaction and the queue entries that show it; returns how many transactions went.
    func deleteTransaction(id: StoreTransaction.ID, environment: StoreEnvironment) async throws -> Int
    /// Deletes all transactions (and their queue entries, payments and subscriptions) of one account in one app:
    /// the account starts over, eligible for introductory offers again.
    func deleteTransactions(accountId: UUID, appId: App.ID, environment: StoreEnvironment) async throws -> Int
    /// Inserts the app transaction unless the account already has one in the app; returns the one stored.
    func ensureAppTransaction(_ appTransaction: StoreAppTransaction) async throws -> StoreAppTransaction
    func appTransaction(accountId: UUID, appId: App.ID, environment: StoreEnvironment) async throws
        -> StoreAppTransaction?
    /// Records that consent for the app transaction was withdrawn, reported by notification `uuid`, unless it
    /// already was; returns whether this call recorded it.
    func rescindConsent(_ appTransaction: StoreAppTransaction, notificationUUID uuid: String) async throws -> Bool
    /// The account whose transaction id, original transaction id or app transaction id `anyTransactionId` is,
    /// in the app; nil when it is none of them.
    func accountId(anyTransactionId: Int64, appId: App.ID, environment: StoreEnvironment) async throws -> UUID?
    /// One page of an account's transactions (`query.limit` at most), in the query's order.
    func transactionHistory(_ query: TransactionHistoryQuery) async throws -> [StoreTransaction]
    /// The app's transactions with this order id, by id.
    func transactions(orderId: String, appId: App.ID, environment: StoreEnvironment) async throws
        -> [StoreTransaction]
    /// The app's transactions that continue `originalTransactionId` (itself included), by id.
    func transactions(originalTransactionId: Int64, appId: App.ID, environment: StoreEnvironment) async throws
        -> [StoreTransaction]
    /// Every transaction bought at or before `end` of the auto-renewable subscriptions that had a period ending, or a
    /// refund, at or after `start`: what the subscriptions dashboard counts in `start..<end`, each subscription's
    /// chain whole (its earlier periods too), by purchase date then id.
    func subscriptionChains(environment: StoreEnvironment, from start: Date, to end: Date) async throws
        -> [StoreTransaction]
    /// Replaces the transaction's consumption report.
    func saveConsumptionReport(_ report: ConsumptionReport) async throws
    func consumptionReport(transactionId: Int64, environment: StoreEnvironment) async throws -> ConsumptionReport?
    /// Records the transaction that the payment redeeming the code answered.
    func setOfferCodeTransaction(_ code: String, appId: App.ID, accountId: UUID, transactionId: Int64) async throws
}

/// Money events (sales, refunds), tax rules and exchange rates.
public protocol MoneyRepository: Sendable {
    /// Inserts the events, many rows per statement; one event per transaction revision.
    func insertMoneyEvents(_ events: [MoneyEvent]) async throws
    /// The environment's events in `start..<end`, by time, then transaction and revision.
    func moneyEvents(environment: StoreEnvironment, from start: Date, to end: Date) async throws -> [MoneyEvent]
    /// One transaction's events, by revision.
    func moneyEvents(transactionId: Int64, environment: StoreEnvironment) async throws -> [MoneyEvent]
    /// Stores the rule; one with the same storefront and effective date is replaced.
    func setTaxRule(_ rule: TaxRule) async throws
    /// The operator's tax rules (not the built-in table), by storefront and effective date.
    func taxRules() async throws -> [TaxRule]
    /// Stores the rate; one with the same currency and effective date is replaced.
    func setExchangeRate(_ rate: ExchangeRate) async throws
    /// The operator's exchange rates, by currency and effective date.
    func exchangeRates() async throws -> [ExchangeRate]
}

/// The signing chains every replica signs with, and revoked certificates.
public protocol SigningRepository: Sendable {
    /// Records a revocation unless the certificate (environment and serial) is already revoked; returns the stored
    /// revocation, the earlier one if there was one, so revoking twice changes nothing.
    func insertCertificateRevocation(_ revocation: CertificateRevocation) async throws -> CertificateRevocation
    /// The revoked certificates of one environment, oldest first.
    func certificateRevocations(environment: StoreEnvironment) async throws -> [CertificateRevocation]
    func signingChain(environment: StoreEnvironment) async throws -> SealedSigningChain?
    /// Stores the environment's chain unless it has one; false (and nothing changes) when it has. A concurrent
    /// insert waits for the other transaction and then loses to it (PostgreSQL), so two replicas never both win.
    func insertSigningChainIfAbsent(_ chain: SealedSigningChain) async throws -> Bool
    /// Replaces the environment's chain if its stored version is still `expected` (compare and swap); false (and
    /// nothing changes) when another process changed it meanwhile.
    func replaceSigningChain(_ chain: SealedSigningChain, replacingVersion expected: Int64) async throws -> Bool
}

/// The team: App Store Connect API keys, console users, the audit log and `kiosk check` runs.
public protocol TeamRepository: Sendable {
    func insertTeamKey(_ key: TeamAPIKey) async throws
    func updateTeamKey(_ key: TeamAPIKey) async throws
    func teamKey(id: TeamAPIKey.ID) async throws -> TeamAPIKey?
    /// Every team key, revoked ones included, by creation.
    func teamKeys() async throws -> [TeamAPIKey]
    func insertAuditEntry(_ entry: AuditEntry) async throws
    /// Records a `kiosk check` run and forgets all but the newest `limit` runs.
    func insertCheckRun(_ run: CheckRunRecord, keepingNewest limit: Int) async throws
    /// The newest `limit` runs, newest first, without their reports.
    func checkRuns(limit: Int) async throws -> [CheckRunRecord]
    func checkRun(id: String) async throws -> CheckRunRecord?
    /// The newest `limit` entries, newest first.
    func auditEntries(limit: Int) async throws -> [AuditEntry]
    func insertConsoleUser(_ user: ConsoleUser) async throws
    func updateConsoleUser(_ user: ConsoleUser) async throws
    /// The user with `email` (lower-cased), disabled or not.
    func consoleUser(email: String) async throws -> ConsoleUser?
    /// Every console user, by email.
    func consoleUsers() async throws -> [ConsoleUser]
    /// Records that the console sessions `key` names ended at `endedAt` (a later end replaces an earlier one), kept
    /// until `expiresAt`; forgets the records whose sessions have all expired by `endedAt`.
    func endConsoleSessions(_ key: String, at endedAt: Date, keptUntil expiresAt: Date) async throws
    /// The latest end recorded under any of `keys`; nil when none.
    func consoleSessionsEnded(_ keys: [String]) async throws -> Date?
}

extension TransactionRepository {
    public func insertTransaction(_ transaction: StoreTransaction) async throws {
        try await insertTransactions([transaction])
    }
}

extension PaymentRepository {
    public func insertQueueRecord(_ record: QueueRecord) async throws {
        try await insertQueueRecords([record])
    }
}

extension NotificationRepository {
    public func insertNotification(_ notification: ServerNotification) async throws {
        try await insertNotifications([notification])
    }
}
