import Foundation
import KioskCore
import KioskSQL

/// One page of an account's transactions in one app, as the App Store Server API's history endpoints ask for
/// it: ordered by last modification (then id), starting after a position, filtered.
public struct TransactionHistoryQuery: Sendable, Hashable {
    /// A place in the order: the last transaction a previous page returned.
    public struct Position: Sendable, Hashable {
        public var modifiedAt: Int64
        public var id: Int64

        public init(modifiedAt: Int64, id: Int64) {
            self.modifiedAt = modifiedAt
            self.id = id
        }
    }

    public var environment: StoreEnvironment
    public var appId: App.ID
    public var accountId: UUID
    public var descending: Bool
    /// Only transactions after this position (before it when `descending`); nil starts at the beginning.
    public var after: Position?
    /// Purchase date, inclusive.
    public var purchasedFrom: Date?
    /// Purchase date, exclusive.
    public var purchasedBefore: Date?
    /// Empty means any.
    public var productIds: [String]
    /// Empty means any.
    public var productTypes: [ProductType]
    /// Empty means any.
    public var subscriptionGroupIds: [Int64]
    /// true: only revoked; false: only unrevoked; nil: both.
    public var revoked: Bool?
    /// Leaves out consumables whose queue entries are all finished (history v1).
    public var excludeFinishedConsumables: Bool
    public var limit: Int

    public init(
        environment: StoreEnvironment, appId: App.ID, accountId: UUID, descending: Bool = false,
        after: Position? = nil, purchasedFrom: Date? = nil, purchasedBefore: Date? = nil, productIds: [String] = [],
        productTypes: [ProductType] = [], subscriptionGroupIds: [Int64] = [], revoked: Bool? = nil,
        excludeFinishedConsumables: Bool = false, limit: Int
    ) {
        self.environment = environment
        self.appId = appId
        self.accountId = accountId
        self.descending = descending
        self.after = after
        self.purchasedFrom = purchasedFrom
        self.purchasedBefore = purchasedBefore
        self.productIds = productIds
        self.productTypes = productTypes
        self.subscriptionGroupIds = subscriptionGroupIds
        self.revoked = revoked
        self.excludeFinishedConsumables = excludeFinishedConsumables
        self.limit = limit
    }
}
