import KioskCore

/// The store's database: SQLite (embedded default) or PostgreSQL, behind one interface.
///
/// Every operation that changes state runs inside `transaction`, so nothing is ever half-written.
public protocol KioskDatabase: Sendable {
    /// `sqlite` or `postgresql`.
    var engine: String { get }

    /// Runs `body` in one database transaction: commits if it returns, rolls back if it throws.
    func transaction<T: Sendable>(_ body: @Sendable (any StorageTransaction) async throws -> T) async throws -> T

    /// Checks the database answers (for `/health`); throws if it does not.
    func ping() async throws

    /// Closes connections. Call once, at shutdown.
    func close() async throws
}

/// Named counters for numbers Kiosk assigns (app ids, subscription group ids).
public enum IdentifierSequence: String, Sendable, CaseIterable {
    /// `appAppleId`s; the first is 1_400_000_001.
    case appAppleId = "app_apple_id"
    /// `subscriptionGroupIdentifier`s; the first is 21_000_001.
    case subscriptionGroupId = "subscription_group_id"
}

/// The reads and writes available inside one database transaction.
///
/// Aggregates are stored whole: a `Product` with its localizations, prices and offers; a `SubscriptionGroup`
/// with its localizations. Lookups return nil when nothing matches. Writes that break a uniqueness rule throw
/// `StorageError.uniqueViolation`.
public protocol StorageTransaction: Sendable {
    func nextIdentifier(_ sequence: IdentifierSequence) async throws -> Int64

    func setting(_ key: String) async throws -> String?
    func setSetting(_ key: String, to value: String?) async throws

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

    func insertGroup(_ group: SubscriptionGroup) async throws
    func updateGroup(_ group: SubscriptionGroup) async throws
    func deleteGroup(id: SubscriptionGroup.ID) async throws
    func group(id: SubscriptionGroup.ID) async throws -> SubscriptionGroup?
    /// All groups of an app, ordered by reference name.
    func groups(appId: App.ID) async throws -> [SubscriptionGroup]

    func insertTester(_ tester: Tester) async throws
    func updateTester(_ tester: Tester) async throws
    func deleteTester(id: Tester.ID) async throws
    func tester(id: Tester.ID) async throws -> Tester?
    /// `email` is compared lower-cased.
    func tester(email: String) async throws -> Tester?
    /// All testers, ordered by email.
    func testers() async throws -> [Tester]

    func insertKey(_ key: InAppPurchaseKey) async throws
    func updateKey(_ key: InAppPurchaseKey) async throws
    func key(id: InAppPurchaseKey.ID) async throws -> InAppPurchaseKey?
    /// All keys of an app, revoked ones included, ordered by creation.
    func keys(appId: App.ID) async throws -> [InAppPurchaseKey]
}

/// Failures the storage layer reports in terms callers can act on.
public enum StorageError: Error, Sendable, Equatable {
    /// A unique constraint was violated; `constraint` names it (e.g. `apps.bundle_id`).
    case uniqueViolation(constraint: String)
    /// The database URL could not be understood.
    case invalidURL(String)
    /// The database refused or failed; `message` is the engine's text.
    case engine(message: String)
}

extension StorageError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .uniqueViolation(let constraint): "A unique value is already taken (\(constraint))."
        case .invalidURL(let message): message
        case .engine(let message): "The database failed: \(message)"
        }
    }
}
