import Foundation
import Hummingbird
import KioskCore
import KioskStorage

/// The query of a transaction-history request (`/inApps/v1|v2/history/{id}`), read as Apple reads it: lists as
/// repeated keys, dates in milliseconds, enum names, `revoked` and `excludeRevoked` in any case (Apple's Python
/// client sends `True`).
struct ServerAPIHistoryRequest: Sendable, Equatable {
    var revision: ServerAPIRevision?
    var descending = false
    /// Purchase date, inclusive.
    var startDate: Date?
    /// Purchase date, exclusive.
    var endDate: Date?
    var productIds: [String] = []
    var productTypes: [ProductType] = []
    var subscriptionGroupIds: [Int64] = []
    var revoked: Bool?
    /// Kiosk has no Family Sharing: `inAppOwnershipType=FAMILY_SHARED`, or `revoked=true` with
    /// `excludeRevoked=true`, matches nothing.
    var matchesNothing = false

    /// Apple's `productType` names.
    static let productTypeNames: [String: ProductType] = [
        "AUTO_RENEWABLE": .autoRenewable, "NON_RENEWABLE": .nonRenewing, "CONSUMABLE": .consumable,
        "NON_CONSUMABLE": .nonConsumable,
    ]

    /// No filters: everything, ascending, from the beginning.
    init() {}

    /// - Throws: ``ServerAPIError`` with Apple's code for the first bad parameter.
    init(query: Parameters) throws {
        if let sort = query.get("sort") {
            switch sort {
            case "ASCENDING": descending = false
            case "DESCENDING": descending = true
            default: throw ServerAPIError.invalidSort
            }
        }
        if let token = query.get("revision") {
            let revision = try ServerAPIRevision(token: token)
            // A revision continues the order it was made in.
            guard revision.descending == descending else { throw ServerAPIError.invalidRequestRevision }
            self.revision = revision
        }
        startDate = try query.get("startDate").map { try Self.date($0, else: .invalidStartDate) }
        endDate = try query.get("endDate").map { try Self.date($0, else: .invalidEndDate) }
        if let startDate, let endDate, startDate > endDate { throw ServerAPIError.startDateAfterEndDate }
        productIds = try query.getAll("productId").map { id in
            guard !id.isEmpty, id.count <= 255 else { throw ServerAPIError.invalidProductId }
            return id
        }
        productTypes = try query.getAll("productType").map { name in
            guard let type = Self.productTypeNames[name] else { throw ServerAPIError.invalidProductType }
            return type
        }
        subscriptionGroupIds = try query.getAll("subscriptionGroupIdentifier").map { text in
            guard let id = ServerAPIController.positiveInteger(text) else {
                throw ServerAPIError.invalidSubscriptionGroupIdentifier
            }
            return id
        }
        if let ownership = query.get("inAppOwnershipType") {
            switch ownership {
            case "PURCHASED": break
            case "FAMILY_SHARED": matchesNothing = true
            default: throw ServerAPIError.invalidInAppOwnershipType
            }
        }
        revoked = try query.get("revoked").map { try Self.bool($0, else: .invalidRevoked) }
        if try query.get("excludeRevoked").map({ try Self.bool($0, else: .invalidExcludeRevoked) }) == true {
            if revoked == true { matchesNothing = true }
            revoked = false
        }
    }

    /// The storage query for one page after this request's revision, one row longer than a page so the answer
    /// knows whether more follow.
    func storageQuery(
        environment: StoreEnvironment, appId: App.ID, accountId: UUID, historyClearedAt: Date?,
        excludeFinishedConsumables: Bool, pageSize: Int
    ) -> TransactionHistoryQuery {
        // A sandbox tester's cleared purchase history is gone for the Server API too.
        let from = [startDate, historyClearedAt].compactMap { $0 }.max()
        return TransactionHistoryQuery(
            environment: environment, appId: appId, accountId: accountId, descending: descending,
            after: revision?.position, purchasedFrom: from, purchasedBefore: endDate, productIds: productIds,
            productTypes: productTypes, subscriptionGroupIds: subscriptionGroupIds, revoked: revoked,
            excludeFinishedConsumables: excludeFinishedConsumables, limit: pageSize + 1)
    }

    private static func date(_ text: String, else error: ServerAPIError) throws -> Date {
        guard let date = Date(checkedMillisecondsSince1970: text) else { throw error }
        return date
    }

    private static func bool(_ text: String, else error: ServerAPIError) throws -> Bool {
        switch text.lowercased() {
        case "true": return true
        case "false": return false
        default: throw error
        }
    }
}

/// A history or refund-history page's `revision`: an opaque token holding the order and the last position
/// returned, so the next request starts after it. `base64url("A")` is the start of an ascending history;
/// `base64url("D.<modifiedAt>.<id>")` a place in a descending one.
struct ServerAPIRevision: Sendable, Equatable {
    var descending: Bool
    /// nil: the beginning.
    var position: TransactionHistoryQuery.Position?

    init(descending: Bool, position: TransactionHistoryQuery.Position?) {
        self.descending = descending
        self.position = position
    }

    /// - Throws: `4000005` when `token` is not a revision Kiosk made.
    init(token: String) throws {
        var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard token.utf8.count <= 200, !token.contains("="), let bytes = Data(base64Encoded: base64) else {
            throw ServerAPIError.invalidRequestRevision
        }
        let parts = String(decoding: bytes, as: UTF8.self).split(separator: ".", omittingEmptySubsequences: false)
        guard let order = parts.first, order == "A" || order == "D" else { throw ServerAPIError.invalidRequestRevision }
        descending = order == "D"
        switch parts.count {
        case 1:
            position = nil
        case 3:
            guard let modifiedAt = Int64(parts[1]), let id = ServerAPIController.positiveInteger(String(parts[2]))
            else {
                throw ServerAPIError.invalidRequestRevision
            }
            position = TransactionHistoryQuery.Position(modifiedAt: modifiedAt, id: id)
        default:
            throw ServerAPIError.invalidRequestRevision
        }
    }

    var token: String {
        var text = descending ? "D" : "A"
        if let position { text += ".\(position.modifiedAt).\(position.id)" }
        return Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
