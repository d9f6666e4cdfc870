import Foundation
import KioskCore
import KioskTestSupport
import Testing

@testable import KioskSQL
@testable import KioskStorage

/// One set of behaviours every engine must show; each test runs once per engine in `TestEngine.all`.
@Suite("Storage contract")
struct StorageContractTests {
    /// A marker for runs without PostgreSQL, so a skipped half of the suite is visible in the output.
    @Test(.enabled(if: TestEnvironment.runs(.postgreSQL), TestEngine.postgresSkipReason))
    func postgresqlIsTested() async throws {
        // Proves the PostgreSQL URL given to the suite opens a PostgreSQL database.
        try await TestEngine.postgresql.withDatabase { database, _ in
            #expect(database.engine == "postgresql")
        }
    }

    @Test(arguments: TestEngine.all)
    func appRoundTrip(engine: TestEngine) async throws {
        // Proves an app, with its secret and both lists of notification URLs, reads back equal by id and bundle id.
        try await engine.withDatabase { database, _ in
            let app = Fixtures.app()
            let other = Fixtures.app(id: 1_400_000_002, bundleId: "com.example.aardvark")
            try await database.transaction {
                try await $0.insertApp(app); try await $0.insertApp(other)
            }
            let byId = try await database.transaction { try await $0.app(id: app.id) }
            let byBundle = try await database.transaction { try await $0.app(bundleId: app.bundleId) }
            let all = try await database.transaction { try await $0.apps() }
            #expect(byId == app)
            #expect(byBundle == app)
            #expect(all == [other, app])

            var draft = app
            draft.sharedSecret = nil
            draft.productionNotificationURLs = []
            draft.name = "Renamed"
            let changed = draft
            try await database.transaction { try await $0.updateApp(changed) }
            #expect(try await database.transaction { try await $0.app(id: app.id) } == changed)
            #expect(try await database.transaction { try await $0.app(bundleId: "com.missing") } == nil)
        }
    }

    @Test(arguments: TestEngine.all)
    func productRoundTrip(engine: TestEngine) async throws {
        // Proves a product with localizations, custom prices, offers (with their prices) and a territory
        // availability reads back equal, and that an update replaces its children rather than adding to them.
        try await engine.withDatabase { database, _ in
            let product = Fixtures.product()
            let simple = Product(
                appId: product.appId, productId: "com.example.game.coins", referenceName: "Coins", type: .consumable,
                createdAt: Fixtures.created, updatedAt: Fixtures.created
            )
            try await database.transaction {
                try await $0.insertApp(Fixtures.app())
                try await $0.insertProduct(product)
                try await $0.insertProduct(simple)
            }
            #expect(
                try await database.transaction {
                    try await $0.product(appId: product.appId, productId: product.productId)
                } == product)
            #expect(
                try await database.transaction { try await $0.products(appId: product.appId) } == [simple, product])

            var draft = product
            draft.localizations.removeFirst()
            draft.pricing = Pricing(tier: nil, customPrices: ["GBR": 449])
            draft.introductoryOffers = [draft.introductoryOffers[2]]
            draft.introductoryOffers[0].pricing.customPrices["USA"] = 899
            draft.promotionalOffers.removeLast()
            draft.promotionalOffers[0].pricing = Pricing()
            draft.winBackOffers.removeFirst()
            draft.winBackOffers[0].pricing.customPrices = ["JPN": 300]
            draft.winBackOffers[0].timeSinceLastSubscribedInMonths.maximum = nil
            draft.winBackOffers[0].endDate = nil
            draft.territoryAvailability?.territories.remove("JPN")
            draft.subscription = nil
            draft.duration = nil
            let changed = draft
            try await database.transaction { try await $0.updateProduct(changed) }
            #expect(
                try await database.transaction {
                    try await $0.product(appId: product.appId, productId: product.productId)
                } == changed)
            #expect(
                try await database.transaction {
                    try await $0.product(appId: product.appId, productId: "com.example.none")
                } == nil)
        }
    }

    @Test(arguments: TestEngine.all)
    func groupRoundTrip(engine: TestEngine) async throws {
        // Proves groups with localizations read back equal, list by reference name, update, and delete whole.
        try await engine.withDatabase { database, _ in
            let group = Fixtures.group()
            let other = Fixtures.group(id: 21_000_002, name: "Basic")
            try await database.transaction {
                try await $0.insertApp(Fixtures.app())
                try await $0.insertGroup(group)
                try await $0.insertGroup(other)
            }
            #expect(try await database.transaction { try await $0.group(id: group.id) } == group)
            #expect(try await database.transaction { try await $0.groups(appId: group.appId) } == [other, group])

            var draft = group
            draft.localizations = [SubscriptionGroupLocalization(locale: "fr_FR", name: "Prime")]
            draft.referenceName = "Premium+"
            let changed = draft
            try await database.transaction { try await $0.updateGroup(changed) }
            #expect(try await database.transaction { try await $0.group(id: group.id) } == changed)

            try await database.transaction { try await $0.deleteGroup(id: group.id) }
            #expect(try await database.transaction { try await $0.group(id: group.id) } == nil)
            // The localizations went with the group: the same id can be inserted again without conflicts.
            try await database.transaction { try await $0.insertGroup(group) }
            #expect(try await database.transaction { try await $0.group(id: group.id) } == group)
        }
    }

    @Test(arguments: TestEngine.all)
    func testerRoundTrip(engine: TestEngine) async throws {
        // Proves testers read back equal by id and by email in any case, list by email, update and delete.
        try await engine.withDatabase { database, _ in
            let ada = Fixtures.tester()
            let bob = Fixtures.tester(email: "bob@example.com")
            try await database.transaction {
                try await $0.insertAccount(bob); try await $0.insertAccount(ada)
            }
            #expect(try await database.transaction { try await $0.account(id: ada.id, environment: .sandbox) } == ada)
            #expect(
                try await database.transaction { try await $0.account(email: "ADA@Example.com", environment: .sandbox) }
                    == ada)
            #expect(
                try await database.transaction { try await $0.accounts(environment: .sandbox, limit: nil, offset: 0) }
                    == [ada, bob])
            // Pages follow one another and the count is the whole environment's.
            let cyd = Fixtures.tester(email: "cyd@example.com")
            try await database.transaction { try await $0.insertAccount(cyd) }
            let (first, second, count) = try await database.transaction { tx in
                (
                    try await tx.accounts(environment: .sandbox, limit: 2, offset: 0),
                    try await tx.accounts(environment: .sandbox, limit: 2, offset: 2),
                    try await tx.accountCount(environment: .sandbox)
                )
            }
            #expect(first == [ada, bob])
            #expect(second == [cyd])
            #expect(count == 3)
            #expect(try await database.transaction { try await $0.accountCount(environment: .production) } == 0)
            try await database.transaction { try await $0.deleteAccount(id: cyd.id) }
            #expect(
                try await database.transaction { try await $0.account(id: ada.id, environment: .production) } == nil)

            var draft = ada
            draft.sandbox = SandboxSettings()
            draft.paymentOutcome = .approve
            draft.storefront = "JPN"
            let changed = draft
            try await database.transaction { try await $0.updateAccount(changed) }
            #expect(
                try await database.transaction { try await $0.account(id: ada.id, environment: .sandbox) } == changed)

            try await database.transaction { try await $0.deleteAccount(id: ada.id) }
            #expect(try await database.transaction { try await $0.account(id: ada.id, environment: .sandbox) } == nil)
            #expect(
                try await database.transaction { try await $0.accounts(environment: .sandbox, limit: nil, offset: 0) }
                    == [bob])
        }
    }

    @Test(arguments: TestEngine.all)
    func keyRoundTrip(engine: TestEngine) async throws {
        // Proves keys read back equal, list by creation time with revoked ones included, and record revocation.
        try await engine.withDatabase { database, _ in
            let later = Fixtures.key(id: "AAAAAAAAAA", createdAt: Fixtures.updated)
            let earlier = Fixtures.key(id: "ZZZZZZZZZZ")
            try await database.transaction {
                try await $0.insertApp(Fixtures.app())
                try await $0.insertKey(later)
                try await $0.insertKey(earlier)
            }
            #expect(try await database.transaction { try await $0.key(id: later.id) } == later)
            var draft = earlier
            draft.revokedAt = Fixtures.updated
            let revoked = draft
            try await database.transaction { try await $0.updateKey(revoked) }
            #expect(try await database.transaction { try await $0.keys(appId: later.appId) } == [revoked, later])
            #expect(try await database.transaction { try await $0.key(id: "NOPE000000") } == nil)
        }
    }

    @Test(arguments: TestEngine.all)
    func settingsSetReplaceAndRemove(engine: TestEngine) async throws {
        // Proves a setting can be stored, overwritten and removed by setting nil.
        try await engine.withDatabase { database, _ in
            try await database.transaction { try await $0.setSetting("agreement", to: "pending") }
            try await database.transaction { try await $0.setSetting("agreement", to: "active") }
            #expect(try await database.transaction { try await $0.setting("agreement") } == "active")
            try await database.transaction { try await $0.setSetting("agreement", to: nil) }
            #expect(try await database.transaction { try await $0.setting("agreement") } == nil)
        }
    }

    @Test(arguments: TestEngine.all)
    func settingInsertedIfAbsentKeepsTheFirstValue(engine: TestEngine) async throws {
        // Proves the first value stored under a key stays, and every later insert answers it instead of its own.
        try await engine.withDatabase { database, _ in
            let first = try await database.transaction { try await $0.settingInsertingIfAbsent("issuer", value: "a") }
            let second = try await database.transaction { try await $0.settingInsertingIfAbsent("issuer", value: "b") }
            #expect(first == "a" && second == "a")
            #expect(try await database.transaction { try await $0.setting("issuer") } == "a")
        }
    }

    @Test(arguments: TestEngine.all)
    func signingChainIsInsertedOnceAndSwappedByVersion(engine: TestEngine) async throws {
        // Proves a chain is stored once per environment (a second insert loses and changes nothing), reads back
        // equal, and is replaced only by a writer that names its current version.
        try await engine.withDatabase { database, _ in
            let chain = Fixtures.sealedChain(.sandbox, version: 1, marker: "first")
            let rival = Fixtures.sealedChain(.sandbox, version: 1, marker: "rival")
            let inserted = try await database.transaction { try await $0.insertSigningChainIfAbsent(chain) }
            let rivalInserted = try await database.transaction { try await $0.insertSigningChainIfAbsent(rival) }
            #expect(inserted && !rivalInserted)
            #expect(try await database.transaction { try await $0.signingChain(environment: .sandbox) } == chain)
            #expect(try await database.transaction { try await $0.signingChain(environment: .production) } == nil)

            let reissued = Fixtures.sealedChain(.sandbox, version: 2, marker: "reissued")
            let stale = Fixtures.sealedChain(.sandbox, version: 2, marker: "stale")
            let swapped = try await database.transaction {
                try await $0.replaceSigningChain(reissued, replacingVersion: 1)
            }
            let staleSwapped = try await database.transaction {
                try await $0.replaceSigningChain(stale, replacingVersion: 1)
            }
            #expect(swapped && !staleSwapped)
            #expect(try await database.transaction { try await $0.signingChain(environment: .sandbox) } == reissued)
        }
    }

    @Test(.enabled(if: TestEnvironment.runs(.postgreSQL), TestEngine.postgresSkipReason))
    func concurrentSigningChainInsertsHaveOneWinner() async throws {
        // Proves replicas racing to store the first chain agree: exactly one insert wins, and every transaction
        // reads the winner's chain afterwards.
        try await TestEngine.postgresql.withDatabase { database, _ in
            let winners = try await withThrowingTaskGroup(of: (Bool, SealedSigningChain?).self) { group in
                for index in 0..<4 {
                    group.addTask {
                        try await database.transaction { tx in
                            let inserted = try await tx.insertSigningChainIfAbsent(
                                Fixtures.sealedChain(.production, version: 1, marker: "replica \(index)"))
                            return (inserted, try await tx.signingChain(environment: .production))
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(winners.filter(\.0).count == 1)
            let stored = try await database.transaction { try await $0.signingChain(environment: .production) }
            #expect(winners.allSatisfy { $0.1 == stored })
        }
    }

    /// A write that breaks a uniqueness rule, and the constraint name it must report.
    enum Duplicate: String, CaseIterable, Sendable {
        case bundleId = "apps.bundle_id"
        case appId = "apps.id"
        case productId = "products.product_id"
        case accountEmail = "accounts.email"
        case groupReferenceName = "subscription_groups.reference_name"
        case keyId = "iap_keys.id"

        /// Writes the first row, then the conflicting one.
        func write(_ transaction: any StorageTransaction) async throws {
            try await transaction.insertApp(Fixtures.app())
            switch self {
            case .bundleId:
                try await transaction.insertApp(Fixtures.app(id: 1_400_000_002))
            case .appId:
                try await transaction.insertApp(Fixtures.app(bundleId: "com.example.other"))
            case .productId:
                try await transaction.insertProduct(Fixtures.product())
                try await transaction.insertProduct(Fixtures.product())
            case .accountEmail:
                try await transaction.insertAccount(Fixtures.tester(email: "ada@example.com"))
                try await transaction.insertAccount(Fixtures.tester(email: "Ada@EXAMPLE.com"))
            case .groupReferenceName:
                try await transaction.insertGroup(Fixtures.group())
                try await transaction.insertGroup(Fixtures.group(id: 21_000_002))
            case .keyId:
                try await transaction.insertKey(Fixtures.key())
                try await transaction.insertKey(Fixtures.key())
            }
        }
    }

    @Test(arguments: TestEngine.all, Duplicate.allCases)
    func uniqueViolationNamesTheConstraint(engine: TestEngine, duplicate: Duplicate) async throws {
        // Proves each uniqueness rule throws uniqueViolation with the same readable name on every engine, and
        // that the failed transaction leaves nothing behind.
        try await engine.withDatabase { database, _ in
            await #expect(throws: StorageError.uniqueViolation(constraint: duplicate.rawValue)) {
                try await database.transaction { try await duplicate.write($0) }
            }
            let apps = try await database.transaction { try await $0.apps() }
            #expect(apps.isEmpty)
        }
    }

    @Test(arguments: TestEngine.all)
    func uniqueViolationCanBeCaughtInsideTheTransaction(engine: TestEngine) async throws {
        // Proves the typed error reaches the caller at the statement, so it can be turned into a KioskError there.
        try await engine.withDatabase { database, _ in
            try await database.transaction { try await $0.insertApp(Fixtures.app()) }
            let caught = try await database.transaction { transaction -> StorageError? in
                do {
                    try await transaction.insertApp(Fixtures.app(id: 1_400_000_009))
                    return nil
                } catch let error as StorageError {
                    return error
                }
            }
            #expect(caught == .uniqueViolation(constraint: "apps.bundle_id"))
        }
    }

    struct Abort: Error, Equatable {}

    @Test(arguments: TestEngine.all)
    func thrownErrorRollsBackEverything(engine: TestEngine) async throws {
        // Proves a body that throws after several writes leaves none of them, and its error reaches the caller.
        try await engine.withDatabase { database, _ in
            await #expect(throws: Abort()) {
                try await database.transaction { transaction in
                    try await transaction.insertApp(Fixtures.app())
                    try await transaction.insertProduct(Fixtures.product())
                    try await transaction.setSetting("k", to: "v")
                    _ = try await transaction.nextIdentifier(.appAppleId)
                    throw Abort()
                }
            }
            try await database.transaction { transaction in
                #expect(try await transaction.apps().isEmpty)
                #expect(try await transaction.products(appId: 1_400_000_001).isEmpty)
                let setting = try await transaction.setting("k")
                #expect(setting == nil)
            }
        }
    }

    @Test(arguments: TestEngine.all)
    func cancelledTaskLeavesNoOpenTransaction(engine: TestEngine) async throws {
        // Proves a transaction whose task is cancelled mid-body rolls back and the database stays usable.
        try await engine.withDatabase { database, _ in
            // Cancelled once the body has written, not after a guessed delay.
            let (wrote, signal) = AsyncStream.makeStream(of: Void.self)
            let task = Task {
                try await database.transaction { transaction in
                    try await transaction.insertApp(Fixtures.app())
                    signal.yield()
                    // Until cancelled.
                    try await Task.sleep(for: .seconds(3600))
                }
            }
            var iterator = wrote.makeAsyncIterator()
            try #require(await iterator.next() != nil, "the body did not run")
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            try await database.transaction { try await $0.insertApp(Fixtures.app(id: 1_400_000_002, bundleId: "b")) }
            #expect(try await database.transaction { try await $0.apps() }.map(\.id) == [1_400_000_002])
        }
    }

    @Test(arguments: TestEngine.all)
    func deletedProductIsStillFound(engine: TestEngine) async throws {
        // Proves a deleted product keeps its row: lookups return it with deletedAt, and its id cannot be reused.
        try await engine.withDatabase { database, _ in
            let original = Fixtures.product()
            try await database.transaction {
                try await $0.insertApp(Fixtures.app())
                try await $0.insertProduct(original)
            }
            var draft = original
            draft.deletedAt = Fixtures.updated
            let product = draft
            try await database.transaction { try await $0.updateProduct(product) }
            let found = try await database.transaction {
                try await $0.product(appId: product.appId, productId: product.productId)
            }
            #expect(found == product)
            #expect(found?.deletedAt == Fixtures.updated)
            #expect(try await database.transaction { try await $0.products(appId: product.appId) } == [product])
            await #expect(throws: StorageError.uniqueViolation(constraint: "products.product_id")) {
                try await database.transaction { try await $0.insertProduct(Fixtures.product()) }
            }
        }
    }

    @Test(arguments: TestEngine.all)
    func sequencesStartRightIncreaseAndPersist(engine: TestEngine) async throws {
        // Proves each sequence starts at Apple-like values, counts up on its own, and continues after a reopen.
        try await engine.withDatabase { database, url in
            let first = try await database.transaction { transaction in
                [
                    try await transaction.nextIdentifier(.appAppleId),
                    try await transaction.nextIdentifier(.appAppleId),
                    try await transaction.nextIdentifier(.subscriptionGroupId),
                ]
            }
            #expect(first == [1_400_000_001, 1_400_000_002, 21_000_001])

            let reopened = try await TestEngine.open(url)
            let next = try await reopened.transaction { try await $0.nextIdentifier(.appAppleId) }
            try await reopened.close()
            #expect(next == 1_400_000_003)
        }
    }

    @Test(arguments: TestEngine.all)
    func migrationsApplyOnce(engine: TestEngine) async throws {
        // Proves opening the same database again applies nothing twice and keeps the data.
        try await engine.withDatabase { database, url in
            try await database.transaction { try await $0.insertApp(Fixtures.app()) }
            let again = try await TestEngine.open(url)
            let migrations = try await again.scalar("SELECT COUNT(*) AS n FROM schema_migrations")
            let apps = try await again.transaction { try await $0.apps() }
            try await again.close()
            #expect(migrations == Int64(Migration.all.count))
            #expect(apps == [Fixtures.app()])
        }
    }

    @Test(.enabled(if: TestEnvironment.runs(.postgreSQL), TestEngine.postgresSkipReason))
    func simultaneousOpensMigrateOnce() async throws {
        // Proves several servers' openers starting together on one fresh PostgreSQL schema all succeed and apply
        // each migration exactly once, thanks to the advisory lock.
        let engine = TestEngine.postgresql
        try await engine.withDatabase { database, _ in
            // withDatabase migrated a throwaway place; start over on a fresh one shared by four openers.
            let fresh = try engine.makeURL()
            let opened = try await withThrowingTaskGroup(of: (any KioskDatabase).self) { group in
                for _ in 0..<4 {
                    group.addTask { try await TestEngine.open(fresh) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let migrations = try await opened[0].scalar("SELECT COUNT(*) AS n FROM schema_migrations")
            #expect(migrations == Int64(Migration.all.count))
            for database in opened { try await database.close() }
            try await engine.discard(url: fresh, using: database)
        }
    }

    @Test(arguments: TestEngine.all)
    func foreignKeysAreEnforced(engine: TestEngine) async throws {
        // Proves a product of an app that does not exist is refused by the foreign key, so foreign keys are on.
        try await engine.withDatabase { database, _ in
            let error = await #expect(throws: StorageError.self) {
                try await database.transaction { try await $0.insertProduct(Fixtures.product()) }
            }
            guard case .engine(let message) = error else {
                Issue.record("expected the engine's foreign key error, got \(String(describing: error))")
                return
            }
            #expect(message.lowercased().contains("foreign key"), "\(message)")
            let products = try await database.transaction { try await $0.products(appId: Fixtures.app().id) }
            #expect(products.isEmpty)
        }
    }

    @Test(arguments: TestEngine.all)
    func updatingAMissingRowThrows(engine: TestEngine) async throws {
        // Proves an update of something never inserted is an error rather than a silent no-op.
        try await engine.withDatabase { database, _ in
            let app = Fixtures.app()
            await expectNoSuchRow("app \(app.id)") {
                try await database.transaction { try await $0.updateApp(app) }
            }
            let tester = Fixtures.tester()
            await expectNoSuchRow("tester \(tester.id)") {
                try await database.transaction { try await $0.updateAccount(tester) }
            }
            let apps = try await database.transaction { try await $0.apps() }
            let testers = try await database.transaction {
                try await $0.accounts(environment: .sandbox, limit: nil, offset: 0)
            }
            #expect(apps.isEmpty && testers.isEmpty, "nothing was written: \(apps) \(testers)")
        }
    }

    @Test(arguments: TestEngine.all)
    func concurrentTransactionsAllCommit(engine: TestEngine) async throws {
        // Proves 50 transactions started at once each get their own identifier and all commit, with no busy errors.
        try await engine.withDatabase { database, _ in
            let ids = try await withThrowingTaskGroup(of: Int64.self) { group in
                for index in 0..<50 {
                    group.addTask {
                        try await database.transaction { transaction in
                            let id = try await transaction.nextIdentifier(.appAppleId)
                            try await transaction.insertApp(Fixtures.app(id: id, bundleId: "com.example.app\(index)"))
                            return id
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(Set(ids) == Set((1...50).map { 1_400_000_000 + Int64($0) }))
            #expect(try await database.transaction { try await $0.apps() }.count == 50)
        }
    }

    @Test(arguments: TestEngine.all)
    func pingAnswers(engine: TestEngine) async throws {
        // Proves the health check reaches the database.
        try await engine.withDatabase { database, _ in
            try await database.ping()
            #expect(database.engine == engine.rawValue)
        }
    }

    @Test(arguments: TestEngine.all)
    func concurrentTransactionsKeepTheirOwnOutcome(engine: TestEngine) async throws {
        // Proves that transactions started together (SQLite runs them in shared commits) each keep their own
        // outcome: every one that returned is stored with its value, every one that threw left nothing behind,
        // even when it threw after writing.
        try await engine.withDatabase { database, _ in
            struct Refused: Error {}
            let outcomes = await withTaskGroup(of: (Int, Bool).self) { group in
                for number in 0..<60 {
                    group.addTask {
                        do {
                            let stored = try await database.transaction { tx -> String in
                                try await tx.setSetting("key-\(number)", to: "value-\(number)")
                                if number % 3 == 0 { throw Refused() }
                                return try await tx.setting("key-\(number)") ?? ""
                            }
                            return (number, stored == "value-\(number)")
                        } catch {
                            return (number, error is Refused)
                        }
                    }
                }
                return await group.reduce(into: [Int: Bool]()) { $0[$1.0] = $1.1 }
            }
            #expect(outcomes.count == 60)
            #expect(outcomes.values.allSatisfy { $0 })
            let stored = try await database.transaction { tx in
                var values: [String?] = []
                for number in 0..<60 { values.append(try await tx.setting("key-\(number)")) }
                return values
            }
            for number in 0..<60 {
                #expect(stored[number] == (number % 3 == 0 ? nil : "value-\(number)"), "key-\(number)")
            }
        }
    }
}
