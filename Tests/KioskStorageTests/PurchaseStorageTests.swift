import Foundation
import KioskCore
import Testing

@testable import KioskSQL
@testable import KioskStorage

/// The storage contract for purchases: accounts, sessions, payments, transactions, the queue and armed failures.
/// Each test runs once per engine in `TestEngine.all`.
@Suite("Purchase storage contract")
struct PurchaseStorageTests {
    @Test(arguments: TestEngine.all)
    func customerRoundTrip(engine: TestEngine) async throws {
        // Proves customers read back equal by id and by email in any case, list by email, update and delete.
        try await engine.withDatabase { database, _ in
            let grace = Fixtures.customer()
            let alan = Fixtures.customer(email: "alan@example.com")
            try await database.transaction {
                try await $0.insertAccount(grace)
                try await $0.insertAccount(alan)
            }
            try await database.transaction { transaction async throws in
                #expect(try await transaction.account(id: grace.id, environment: .production) == grace)
                #expect(try await transaction.account(email: "GRACE@Example.COM", environment: .production) == grace)
                #expect(
                    try await transaction.accounts(environment: .production, limit: nil, offset: 0) == [alan, grace])
                // Many at once, as a renewal batch reads them: unknown ids and other environments skipped.
                let many = try await transaction.accounts(ids: [grace.id, alan.id, UUID()], environment: .production)
                #expect(Set(many) == [grace, alan])
                #expect(try await transaction.accounts(ids: [grace.id], environment: .sandbox).isEmpty)
                #expect(try await transaction.accounts(ids: [], environment: .production).isEmpty)
            }

            var draft = grace
            draft.paymentOutcome = .approve
            draft.storefront = "FRA"
            draft.updatedAt = Fixtures.created
            let changed = draft
            try await database.transaction { try await $0.updateAccount(changed) }
            #expect(
                try await database.transaction { try await $0.account(id: grace.id, environment: .production) }
                    == changed)

            try await database.transaction { try await $0.deleteAccount(id: grace.id) }
            #expect(
                try await database.transaction { try await $0.account(id: grace.id, environment: .production) } == nil)
            #expect(
                try await database.transaction {
                    try await $0.account(email: "nobody@example.com", environment: .production)
                } == nil)
            #expect(
                try await database.transaction {
                    try await $0.accounts(environment: .production, limit: nil, offset: 0)
                } == [alan])
            await expectNoSuchRow("customer \(grace.id)") {
                try await database.transaction { try await $0.updateAccount(changed) }
            }
        }
    }

    @Test(arguments: TestEngine.all)
    func customerEmailIsUniqueRegardlessOfCase(engine: TestEngine) async throws {
        // Proves a second customer whose email differs only in case is refused as accounts.email, while a tester with
        // the same email is another account: an email is unique within its environment.
        try await engine.withDatabase { database, _ in
            let grace = Fixtures.customer(email: "grace@example.com")
            try await database.transaction { try await $0.insertAccount(grace) }
            await #expect(throws: StorageError.uniqueViolation(constraint: "accounts.email")) {
                try await database.transaction {
                    try await $0.insertAccount(Fixtures.customer(email: "Grace@EXAMPLE.com"))
                }
            }
            #expect(
                try await database.transaction {
                    try await $0.accounts(environment: .production, limit: nil, offset: 0)
                } == [grace])
            let tester = Fixtures.tester(email: "GRACE@example.com")
            try await database.transaction { try await $0.insertAccount(tester) }
            #expect(
                try await database.transaction {
                    try await $0.account(email: "grace@example.com", environment: .sandbox)
                }
                    == tester)
        }
    }

    @Test(arguments: TestEngine.all)
    func testerPaymentOutcomeRoundTrips(engine: TestEngine) async throws {
        // Proves every payment outcome of a tester is written, read back and updated.
        try await engine.withDatabase { database, _ in
            for outcome in PaymentOutcome.allCases {
                var draft = Fixtures.tester(email: "\(outcome.rawValue)@example.com")
                draft.paymentOutcome = outcome
                let tester = draft
                try await database.transaction { try await $0.insertAccount(tester) }
                let stored = try await database.transaction {
                    try await $0.account(id: tester.id, environment: .sandbox)
                }
                #expect(stored?.paymentOutcome == outcome)
            }
            let approving = try await database.transaction {
                try await $0.account(email: "approve@example.com", environment: .sandbox)
            }
            var draft = try #require(approving)
            draft.paymentOutcome = .decline
            let changed = draft
            try await database.transaction { try await $0.updateAccount(changed) }
            #expect(
                try await database.transaction { try await $0.account(id: changed.id, environment: .sandbox) }
                    == changed)
        }
    }

    @Test
    func testersFromBeforeMigration2Approve() async throws {
        // Proves a tester stored before migration 2 reads back with the `approve` outcome (SQLite only: the DDL is
        // one text for both engines, and only SQLite can be opened here without the migrations).
        let (url, directory) = try TestEngine.newSQLiteFile()
        defer { try? FileManager.default.removeItem(at: directory) }
        let old = try await DatabaseOpener.open(url: url, migrations: [.catalog], logger: TestEngine.logger)
        let id = UUID()
        try await old.withSession { session in
            try await session.run(
                """
                INSERT INTO testers (id, email, password_hash, first_name, last_name, storefront, interrupt_purchases,
                    ask_to_buy, renewal_rate, created_at, updated_at)
                VALUES (\(bind: id.uuidString.lowercased()), 'old@example.com', 'hash', 'Old', 'Tester', 'USA',
                    FALSE, FALSE, '5m', 0, 0)
                """
            )
        }
        try await old.close()

        let database = try await TestEngine.open(url)
        let tester = try await database.transaction { try await $0.account(id: id, environment: .sandbox) }
        try await database.close()
        #expect(tester?.paymentOutcome == .approve && tester?.sandbox?.renewalRate == .monthlyEvery5Minutes)
    }

    @Test
    func testersAndCustomersFromBeforeMigration8BecomeAccounts() async throws {
        // Proves migration 8 moves a tester and a customer who share an email into `accounts`, each in its own
        // environment with its own settings (SQLite only, for the reason above).
        let (url, directory) = try TestEngine.newSQLiteFile()
        defer { try? FileManager.default.removeItem(at: directory) }
        let old = try await DatabaseOpener.open(
            url: url, migrations: Array(Migration.all.prefix(7)), logger: TestEngine.logger)
        let testerId = UUID()
        let customerId = UUID()
        try await old.withSession { session in
            try await session.run(
                """
                INSERT INTO testers (id, email, password_hash, first_name, last_name, storefront, interrupt_purchases,
                    ask_to_buy, renewal_rate, payment_outcome, purchase_history_cleared_at, created_at, updated_at)
                VALUES (\(bind: testerId.uuidString.lowercased()), 'both@example.com', 'hash', 'Test', 'Er', 'USA',
                    TRUE, FALSE, '5m', 'decline', 42, 1, 2)
                """
            )
            try await session.run(
                """
                INSERT INTO customers (id, email, password_hash, first_name, last_name, storefront, payment_outcome,
                    created_at, updated_at)
                VALUES (\(bind: customerId.uuidString.lowercased()), 'Both@example.com', 'hash', 'Cus', 'Tomer', 'FRA',
                    'approve', 3, 4)
                """
            )
        }
        try await old.close()

        let database = try await TestEngine.open(url)
        let (tester, customer) = try await database.transaction {
            (
                try await $0.account(email: "both@example.com", environment: .sandbox),
                try await $0.account(email: "both@example.com", environment: .production)
            )
        }
        try await database.close()
        #expect(tester?.id == testerId && tester?.paymentOutcome == .decline)
        #expect(tester?.sandbox?.interruptPurchases == true && tester?.sandbox?.renewalRate == .monthlyEvery5Minutes)
        #expect(tester?.sandbox?.purchaseHistoryClearedAt == Date(millisecondsSince1970: 42))
        #expect(customer?.id == customerId && customer?.storefront == "FRA" && customer?.sandbox == nil)
    }

    @Test(arguments: TestEngine.all)
    func sessionRoundTrip(engine: TestEngine) async throws {
        // Proves a session reads back equal by token hash and is gone after delete.
        try await engine.withDatabase { database, _ in
            let session = Fixtures.session(accountId: UUID())
            try await database.transaction {
                try await $0.insertApp(Fixtures.app())
                try await $0.insertSession(session)
            }
            #expect(try await database.transaction { try await $0.session(tokenHash: session.tokenHash) } == session)
            try await database.transaction { try await $0.deleteSession(tokenHash: session.tokenHash) }
            #expect(try await database.transaction { try await $0.session(tokenHash: session.tokenHash) } == nil)
        }
    }

    @Test(arguments: TestEngine.all)
    func paymentRoundTrip(engine: TestEngine) async throws {
        // Proves payments with all optional fields set and unset read back equal by id and by idempotency key,
        // and that an update replaces every field.
        try await engine.withDatabase { database, _ in
            let account = UUID()
            let full = Fixtures.payment(accountId: account)
            let minimal = Fixtures.payment(accountId: account, minimal: true)
            try await database.transaction {
                try await $0.insertApp(Fixtures.app())
                try await $0.insertPayment(full)
                try await $0.insertPayment(minimal)
            }
            try await database.transaction { transaction async throws in
                #expect(try await transaction.payment(id: full.id) == full)
                #expect(try await transaction.payment(id: minimal.id) == minimal)
                let byKey = try await transaction.payment(
                    accountId: account, appId: full.appId, idempotencyKey: "key-1")
                let otherAccount = try await transaction.payment(
                    accountId: UUID(), appId: full.appId, idempotencyKey: "key-1")
                #expect(byKey == full)
                #expect(otherAccount == nil)
            }

            var draft = full
            draft.state = .purchased
            draft.errorCode = nil
            draft.errorReason = nil
            draft.appAccountToken = nil
            draft.transactionId = 2_000_000_000_000_005
            draft.updatedAt = Fixtures.created
            let changed = draft
            try await database.transaction { try await $0.updatePayment(changed) }
            #expect(try await database.transaction { try await $0.payment(id: full.id) } == changed)
            let unknown = Fixtures.payment(accountId: account)
            await expectNoSuchRow("payment \(unknown.id)") {
                try await database.transaction { try await $0.updatePayment(unknown) }
            }
        }
    }

    @Test(arguments: TestEngine.all)
    func paymentsFilterAndListOldestFirst(engine: TestEngine) async throws {
        // Proves payments() lists oldest first, and that nil account and state filters mean "any".
        try await engine.withDatabase { database, _ in
            let ada = UUID()
            let bob = UUID()
            let newest = Fixtures.payment(accountId: ada, idempotencyKey: "a2", createdAt: Fixtures.updated)
            let oldest = Fixtures.payment(accountId: ada, createdAt: Fixtures.created, minimal: true)
            let bobs = Fixtures.payment(accountId: bob, idempotencyKey: "b1", createdAt: Fixtures.created + 1)
            let production = Fixtures.payment(accountId: ada, environment: .production, idempotencyKey: "p1")
            try await database.transaction {
                try await $0.insertApp(Fixtures.app())
                for payment in [newest, oldest, bobs, production] { try await $0.insertPayment(payment) }
            }
            let appId = Fixtures.app().id
            let all = try await database.transaction {
                try await $0.payments(appId: appId, environment: .sandbox, accountId: nil, state: nil)
            }
            #expect(all == [oldest, bobs, newest])
            let adas = try await database.transaction {
                try await $0.payments(appId: appId, environment: .sandbox, accountId: ada, state: nil)
            }
            #expect(adas == [oldest, newest])
            let failed = try await database.transaction {
                try await $0.payments(appId: appId, environment: .sandbox, accountId: ada, state: .failed)
            }
            #expect(failed == [newest])
            let deferred = try await database.transaction {
                try await $0.payments(appId: appId, environment: .sandbox, accountId: nil, state: .deferred)
            }
            #expect(deferred.isEmpty)
        }
    }

    @Test(arguments: TestEngine.all)
    func idempotencyKeyIsUniquePerAccountAndApp(engine: TestEngine) async throws {
        // Proves a reused idempotency key of the same account and app is refused as payments.idempotency_key,
        // while another account may use it and payments without a key never collide.
        try await engine.withDatabase { database, _ in
            let account = UUID()
            try await database.transaction {
                try await $0.insertApp(Fixtures.app())
                try await $0.insertPayment(Fixtures.payment(accountId: account))
                try await $0.insertPayment(Fixtures.payment(accountId: UUID()))
                try await $0.insertPayment(Fixtures.payment(accountId: account, minimal: true))
                try await $0.insertPayment(Fixtures.payment(accountId: account, minimal: true))
            }
            await #expect(throws: StorageError.uniqueViolation(constraint: "payments.idempotency_key")) {
                try await database.transaction { try await $0.insertPayment(Fixtures.payment(accountId: account)) }
            }
            let stored = try await database.transaction {
                try await $0.payments(appId: Fixtures.app().id, environment: .sandbox, accountId: nil, state: nil)
            }
            #expect(stored.count == 4)
        }
    }

    @Test(arguments: TestEngine.all)
    func manyRowsInsertAtOnceOrNotAtAll(engine: TestEngine) async throws {
        // Proves the many-row inserts a renewal batch uses store every row as given, also past one statement's
        // limit of bound values (2,000 transactions bind 68,000: above SQLite's and PostgreSQL's caps), and that a
        // duplicate among them fails the insert with the usual unique violation and stores none of them.
        try await engine.withDatabase { database, _ in
            let account = UUID()
            let transactions = (0..<2_000).map { index in
                Fixtures.transaction(id: 2_000_000_000_100_000 + Int64(index), accountId: account)
            }
            let records = (1...3).map { Fixtures.queueRecord(sequence: $0, accountId: account) }
            try await database.transaction {
                try await $0.insertApp(Fixtures.app())
                try await $0.insertTransactions(transactions)
                try await $0.insertQueueRecords(records)
            }
            try await database.transaction { transaction async throws in
                let stored = try await transaction.transactions(
                    accountId: account, appId: Fixtures.app().id, environment: .sandbox)
                #expect(stored == transactions)
                for record in records {
                    #expect(try await transaction.queueRecord(sequence: record.sequence) == record)
                }
            }

            let fresh = Fixtures.transaction(id: 2_000_000_000_200_000, accountId: account)
            await #expect(throws: StorageError.uniqueViolation(constraint: "transactions.id")) {
                try await database.transaction { try await $0.insertTransactions([fresh, transactions[7]]) }
            }
            #expect(
                try await database.transaction { try await $0.transaction(id: fresh.id, environment: .sandbox) } == nil)
        }
    }

    @Test(arguments: TestEngine.all)
    func transactionRoundTrip(engine: TestEngine) async throws {
        // Proves transactions with all optional fields set and unset read back equal, are keyed per environment,
        // list oldest first (by purchase date, then id), and update every field, only over the revision before.
        try await engine.withDatabase { database, _ in
            let account = UUID()
            let later = Fixtures.transaction(
                id: 2_000_000_000_000_001, accountId: account, purchaseDate: Fixtures.updated)
            let full = Fixtures.transaction(id: 2_000_000_000_000_003, accountId: account)
            let minimal = Fixtures.transaction(id: 2_000_000_000_000_002, accountId: account, minimal: true)
            let production = Fixtures.transaction(id: full.id, environment: .production, accountId: account)
            try await database.transaction {
                try await $0.insertApp(Fixtures.app())
                for transaction in [later, full, minimal, production] { try await $0.insertTransaction(transaction) }
            }
            try await database.transaction { transaction async throws in
                #expect(try await transaction.transaction(id: full.id, environment: .sandbox) == full)
                #expect(try await transaction.transaction(id: minimal.id, environment: .sandbox) == minimal)
                #expect(try await transaction.transaction(id: full.id, environment: .production) == production)
                #expect(try await transaction.transaction(id: minimal.id, environment: .production) == nil)
                #expect(
                    try await transaction.transactions(accountId: account, appId: full.appId, environment: .sandbox)
                        == [minimal, full, later])
                // Whole subscriptions at once, as a renewal batch reads them: by original transaction id, only those
                // of the environment, unknown ids skipped.
                let many = try await transaction.transactions(
                    originalTransactionIds: [full.originalTransactionId, later.originalTransactionId, 42],
                    environment: .sandbox)
                #expect(Set(many.map(\.id)) == [full.id, later.id])
                #expect(many.first { $0.id == full.id } == full)
                #expect(
                    try await transaction.transactions(
                        originalTransactionIds: [minimal.originalTransactionId], environment: .production
                    ).isEmpty)
                #expect(try await transaction.transactions(originalTransactionIds: [], environment: .sandbox).isEmpty)
            }

            var draft = minimal
            draft.revocationDate = Fixtures.updated
            draft.revocationReason = 0
            draft.signedTransaction = "re.signed.jws"
            draft.revision += 1
            let changed = draft
            try await database.transaction { try await $0.updateTransaction(changed) }
            try await database.transaction { transaction async throws in
                #expect(try await transaction.transaction(id: minimal.id, environment: .sandbox) == changed)
                #expect(try await transaction.transaction(id: minimal.id, environment: .production) == nil)
            }
            // A second change made from the same read (another request, another replica) does not land.
            var concurrent = minimal
            concurrent.refundedMinorUnits = 1
            concurrent.revision += 1
            let stale = concurrent
            await #expect(throws: StorageError.self) {
                try await database.transaction { try await $0.updateTransaction(stale) }
            }
            #expect(
                try await database.transaction { try await $0.transaction(id: minimal.id, environment: .sandbox) }
                    == changed)
        }
    }

    @Test(arguments: TestEngine.all)
    func deleteTransactionTakesItsQueueEntries(engine: TestEngine) async throws {
        // Proves deleting a transaction removes the entries showing or restoring it, and only those, and
        // counts what went.
        try await engine.withDatabase { database, _ in
            let account = UUID()
            let doomed = Fixtures.transaction(id: 2_000_000_000_000_001, accountId: account)
            let kept = Fixtures.transaction(id: 2_000_000_000_000_002, accountId: account)
            var purchased = Fixtures.queueRecord(sequence: 1, accountId: account, transactionId: doomed.id)
            purchased.state = .purchased
            purchased.restoreTransactionId = nil
            let restored = Fixtures.queueRecord(sequence: 2, accountId: account, transactionId: doomed.id)
            let other = Fixtures.queueRecord(sequence: 3, accountId: account, transactionId: kept.id)
            let production = Fixtures.queueRecord(
                sequence: 4, environment: .production, accountId: account, transactionId: doomed.id)
            try await database.transaction { [purchased] in
                try await $0.insertApp(Fixtures.app())
                try await $0.insertTransaction(doomed)
                try await $0.insertTransaction(kept)
                for record in [purchased, restored, other, production] { try await $0.insertQueueRecord(record) }
            }
            let deleted = try await database.transaction { transaction in
                [
                    try await transaction.deleteTransaction(id: doomed.id, environment: .sandbox),
                    try await transaction.deleteTransaction(id: doomed.id, environment: .sandbox),
                ]
            }
            #expect(deleted == [1, 0])
            try await database.transaction { transaction async throws in
                #expect(
                    try await transaction.transactions(accountId: account, appId: kept.appId, environment: .sandbox)
                        == [kept])
                #expect(try await transaction.queueRecord(sequence: 1) == nil)
                #expect(try await transaction.queueRecord(sequence: 2) == nil)
                #expect(try await transaction.queueRecord(sequence: 3) == other)
                #expect(try await transaction.queueRecord(sequence: 4) == production)
            }
        }
    }

    @Test(arguments: TestEngine.all)
    func deleteTransactionsOfAnAccount(engine: TestEngine) async throws {
        // Proves deleting an account's transactions in one app and environment also removes its queue entries and
        // payments there, counts the transactions, and leaves other accounts and environments alone.
        try await engine.withDatabase { database, _ in
            let ada = UUID()
            let bob = UUID()
            let adaPayment = Fixtures.payment(accountId: ada)
            let bobPayment = Fixtures.payment(accountId: bob)
            let adaProductionPayment = Fixtures.payment(accountId: ada, environment: .production, idempotencyKey: "p")
            let bobTransaction = Fixtures.transaction(id: 2_000_000_000_000_003, accountId: bob)
            let adaProduction = Fixtures.transaction(
                id: 1_000_000_000_000_001, environment: .production, accountId: ada)
            let bobRecord = Fixtures.queueRecord(sequence: 3, accountId: bob, transactionId: bobTransaction.id)
            let adaProductionRecord = Fixtures.queueRecord(
                sequence: 4, environment: .production, accountId: ada, transactionId: adaProduction.id)
            try await database.transaction {
                try await $0.insertApp(Fixtures.app())
                for payment in [adaPayment, bobPayment, adaProductionPayment] { try await $0.insertPayment(payment) }
                try await $0.insertTransaction(Fixtures.transaction(id: 2_000_000_000_000_001, accountId: ada))
                try await $0.insertTransaction(Fixtures.transaction(id: 2_000_000_000_000_002, accountId: ada))
                try await $0.insertTransaction(bobTransaction)
                try await $0.insertTransaction(adaProduction)
                try await $0.insertQueueRecord(Fixtures.queueRecord(sequence: 1, accountId: ada))
                try await $0.insertQueueRecord(Fixtures.queueRecord(sequence: 2, accountId: ada, minimal: true))
                try await $0.insertQueueRecord(bobRecord)
                try await $0.insertQueueRecord(adaProductionRecord)
            }
            let appId = Fixtures.app().id
            let deleted = try await database.transaction {
                try await $0.deleteTransactions(accountId: ada, appId: appId, environment: .sandbox)
            }
            #expect(deleted == 2)
            try await database.transaction { transaction async throws in
                func transactions(_ account: UUID, _ environment: StoreEnvironment) async throws -> [StoreTransaction] {
                    try await transaction.transactions(accountId: account, appId: appId, environment: environment)
                }
                let adasEntries = try await transaction.queueRecords(
                    accountId: ada, appId: appId, environment: .sandbox, after: 0, limit: 10)
                #expect(try await transactions(ada, .sandbox).isEmpty)
                #expect(adasEntries.isEmpty)
                #expect(try await transaction.payment(id: adaPayment.id) == nil)
                #expect(try await transactions(bob, .sandbox) == [bobTransaction])
                #expect(try await transactions(ada, .production) == [adaProduction])
                #expect(try await transaction.queueRecord(sequence: 3) == bobRecord)
                #expect(try await transaction.queueRecord(sequence: 4) == adaProductionRecord)
                #expect(try await transaction.payment(id: bobPayment.id) == bobPayment)
                #expect(try await transaction.payment(id: adaProductionPayment.id) == adaProductionPayment)
            }
        }
    }

    @Test(arguments: TestEngine.all)
    func queueRecordRoundTrip(engine: TestEngine) async throws {
        // Proves queue records with all optional fields set and unset read back equal by sequence.
        try await engine.withDatabase { database, _ in
            let account = UUID()
            let full = Fixtures.queueRecord(sequence: 1, accountId: account)
            let minimal = Fixtures.queueRecord(sequence: 2, accountId: account, minimal: true)
            try await database.transaction {
                try await $0.insertApp(Fixtures.app())
                try await $0.insertQueueRecord(full)
                try await $0.insertQueueRecord(minimal)
            }
            try await database.transaction { transaction async throws in
                #expect(try await transaction.queueRecord(sequence: 1) == full)
                #expect(try await transaction.queueRecord(sequence: 2) == minimal)
                #expect(try await transaction.queueRecord(sequence: 3) == nil)
            }
        }
    }

    @Test(arguments: TestEngine.all)
    func finishingIsIdempotent(engine: TestEngine) async throws {
        // Proves finishing sets the date once (a second finish keeps the first), drops the record from the
        // unfinished list, and that finishing an unknown sequence returns nil.
        try await engine.withDatabase { database, _ in
            let account = UUID()
            let first = Fixtures.queueRecord(sequence: 1, accountId: account, minimal: true)
            let second = Fixtures.queueRecord(sequence: 2, accountId: account, minimal: true)
            try await database.transaction {
                try await $0.insertApp(Fixtures.app())
                try await $0.insertQueueRecord(first)
                try await $0.insertQueueRecord(second)
            }
            let appId = Fixtures.app().id
            func unfinished() async throws -> [QueueRecord] {
                try await database.transaction {
                    try await $0.unfinishedQueueRecords(accountId: account, appId: appId, environment: .sandbox)
                }
            }
            #expect(try await unfinished() == [first, second])

            var finished = first
            finished.finishedAt = Fixtures.created
            func finish(_ sequence: Int64, at date: Date) async throws -> QueueRecord? {
                try await database.transaction { try await $0.finishQueueRecord(sequence: sequence, at: date) }
            }
            let once = try await finish(1, at: Fixtures.created)
            let twice = try await finish(1, at: Fixtures.updated)
            let missing = try await finish(9, at: Fixtures.updated)
            #expect(once == finished)
            #expect(twice == finished)
            #expect(missing == nil)
            #expect(try await database.transaction { try await $0.queueRecord(sequence: 1) } == finished)
            #expect(try await unfinished() == [second])
        }
    }

    @Test(arguments: TestEngine.all)
    func queueRecordsPageByCursor(engine: TestEngine) async throws {
        // Proves paging after a cursor returns an account's records in sequence order, `limit` at a time, skipping
        // other accounts' records, and that the latest sequence is 0 when empty, then the highest stored.
        try await engine.withDatabase { database, _ in
            let account = UUID()
            #expect(try await database.transaction { try await $0.latestQueueSequence() } == 0)
            let records = (1...6).map { sequence in
                Fixtures.queueRecord(sequence: sequence, accountId: sequence == 3 ? UUID() : account, minimal: true)
            }
            try await database.transaction {
                try await $0.insertApp(Fixtures.app())
                for record in records.reversed() { try await $0.insertQueueRecord(record) }
            }
            let appId = Fixtures.app().id
            func page(after: Int64) async throws -> [Int64] {
                try await database.transaction {
                    try await $0.queueRecords(
                        accountId: account, appId: appId, environment: .sandbox, after: after, limit: 2)
                }
                .map(\.sequence)
            }
            #expect(try await page(after: 0) == [1, 2])
            #expect(try await page(after: 2) == [4, 5])
            #expect(try await page(after: 5) == [6])
            #expect(try await page(after: 6) == [])
            #expect(try await database.transaction { try await $0.latestQueueSequence() } == 6)
        }
    }

    @Test(arguments: TestEngine.all)
    func armedFailuresCountDownToNil(engine: TestEngine) async throws {
        // Proves an armed failure answers its error code `remaining` times, then nil and is gone; that setting
        // replaces it, 0 removes it, and other apps and APIs are untouched.
        try await engine.withDatabase { database, _ in
            let appId = Fixtures.app().id
            let otherApp = Fixtures.app(id: 1_400_000_002, bundleId: "com.example.other")
            let restore = ArmedFailure(appId: appId, api: .restore, remaining: 5, errorCode: 0)
            let elsewhere = ArmedFailure(appId: otherApp.id, api: .purchase, remaining: 1, errorCode: 2)
            try await database.transaction {
                try await $0.insertApp(Fixtures.app())
                try await $0.insertApp(otherApp)
                try await $0.setArmedFailure(ArmedFailure(appId: appId, api: .purchase, remaining: 9, errorCode: 4))
                try await $0.setArmedFailure(ArmedFailure(appId: appId, api: .purchase, remaining: 2, errorCode: 3))
                try await $0.setArmedFailure(restore)
                try await $0.setArmedFailure(elsewhere)
            }
            let purchase = ArmedFailure(appId: appId, api: .purchase, remaining: 2, errorCode: 3)
            let armed = try await database.transaction { try await $0.armedFailures(appId: appId) }
            #expect(armed == [purchase, restore])

            let codes = try await database.transaction { transaction in
                [
                    try await transaction.consumeArmedFailure(appId: appId, api: .purchase),
                    try await transaction.consumeArmedFailure(appId: appId, api: .purchase),
                    try await transaction.consumeArmedFailure(appId: appId, api: .purchase),
                    try await transaction.consumeArmedFailure(appId: appId, api: .products),
                ]
            }
            #expect(codes == [3, 3, nil, nil])
            #expect(try await database.transaction { try await $0.armedFailures(appId: appId) } == [restore])

            try await database.transaction {
                try await $0.setArmedFailure(ArmedFailure(appId: appId, api: .restore, remaining: 0, errorCode: 0))
            }
            #expect(try await database.transaction { try await $0.armedFailures(appId: appId) }.isEmpty)
            #expect(try await database.transaction { try await $0.armedFailures(appId: otherApp.id) } == [elsewhere])
        }
    }

    @Test(arguments: TestEngine.all)
    func concurrentConsumersNeverOveruseAnArmedFailure(engine: TestEngine) async throws {
        // Proves 20 transactions consuming a failure armed for 5 calls at once get exactly 5 error codes.
        try await engine.withDatabase { database, _ in
            let appId = Fixtures.app().id
            try await database.transaction {
                try await $0.insertApp(Fixtures.app())
                try await $0.setArmedFailure(ArmedFailure(appId: appId, api: .receipt, remaining: 5, errorCode: 7))
            }
            let codes = try await withThrowingTaskGroup(of: Int?.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        try await database.transaction { try await $0.consumeArmedFailure(appId: appId, api: .receipt) }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(codes.compactMap { $0 } == Array(repeating: 7, count: 5))
            #expect(try await database.transaction { try await $0.armedFailures(appId: appId) }.isEmpty)
        }
    }

    @Test(arguments: TestEngine.all)
    func purchaseSequencesStartRight(engine: TestEngine) async throws {
        // Proves transaction ids start at Apple-like 16-digit values per environment and queue entries at 1,
        // each counting up on its own.
        try await engine.withDatabase { database, _ in
            let values = try await database.transaction { transaction in
                [
                    try await transaction.nextIdentifier(.productionTransactionId),
                    try await transaction.nextIdentifier(.sandboxTransactionId),
                    try await transaction.nextIdentifier(.queueEntry),
                    try await transaction.nextIdentifier(.productionTransactionId),
                    try await transaction.nextIdentifier(.queueEntry),
                ]
            }
            #expect(values == [1_000_000_000_000_001, 2_000_000_000_000_001, 1, 1_000_000_000_000_002, 2])
        }
    }

    @Test(arguments: TestEngine.all)
    func identifierBlocksAreConsecutiveAndNeverShared(engine: TestEngine) async throws {
        // Proves a block of identifiers (as a renewal batch reserves) is consecutive from the sequence's first
        // value, and single identifiers and later blocks continue after it, on a fresh and on a used sequence.
        try await engine.withDatabase { database, _ in
            let (block, single, next) = try await database.transaction { transaction in
                (
                    try await transaction.nextIdentifiers(.sandboxTransactionId, count: 5),
                    try await transaction.nextIdentifier(.sandboxTransactionId),
                    try await transaction.nextIdentifiers(.sandboxTransactionId, count: 3)
                )
            }
            #expect(block == 2_000_000_000_000_001...2_000_000_000_000_005)
            #expect(single == 2_000_000_000_000_006)
            #expect(next == 2_000_000_000_000_007...2_000_000_000_000_009)
        }
    }
}
