import Foundation

/// The paths of the merchant server's API (`kiosk merchant serve`, `KioskMerchant`). User routes take
/// `Authorization: Bearer <user token>`; admin routes the merchant's admin token; product lists, downloads by
/// signed URL and App Store Server Notifications take none.
public enum MerchantPaths {
    public static let base = "/merchant/v1"
    /// `GET`: the app's product ids, `products_v1.json` (a JSON array of ids, a server-hosted product list) or
    /// `products_v2.json` (``MerchantProductList``), with `ETag` / `Last-Modified` and 304 answers.
    public static func productList(bundleId: String, version: Int) -> String {
        "\(base)/apps/\(bundleId)/products_v\(version).json"
    }
    /// `POST` ``MerchantOrderRequest`` → 201 ``MerchantOrder``.
    public static let orders = "\(base)/orders"
    /// `GET` → ``MerchantOrder``.
    public static func order(_ id: String) -> String { "\(base)/orders/\(id)" }
    /// `POST` ``MerchantDeliveryRequest`` → ``MerchantDeliveryResponse``.
    public static let transactions = "\(base)/transactions"
    /// `GET` → ``MerchantEntitlements``: what the user owns, for restoring on a new device.
    public static let entitlements = "\(base)/entitlements"
    /// `GET` → ``MerchantExplanation``.
    public static let explain = "\(base)/explain"
    /// `POST` ``MerchantSpendRequest`` → ``MerchantSpendResponse``: spend from a balance consumables credited.
    public static func spend(balance: String) -> String { "\(base)/balances/\(balance)/spend" }
    /// `GET` → ``MerchantContent``: the product's downloadable files, each with a signed URL.
    public static func content(productId: String) -> String { "\(base)/content/\(productId)" }
    /// `POST` Apple's `{"signedPayload": …}`: App Store Server Notifications V2.
    public static let notifications = "\(base)/notifications"
    /// Admin: `GET` a user's ``MerchantEntitlements`` / ``MerchantExplanation``.
    public static func adminEntitlements(userId: String) -> String { "\(base)/admin/users/\(userId)/entitlements" }
    public static func adminExplain(userId: String) -> String { "\(base)/admin/users/\(userId)/explain" }
    /// Admin: `GET ?now=MILLISECONDS` → ``CheckProbe``: what the user an app account token names holds then (the
    /// probe `kiosk check` reads).
    public static func adminProbe(appAccountToken: String) -> String { "\(base)/admin/probe/\(appAccountToken)" }
    /// Admin: `POST` ``MerchantReconcileRequest`` → ``MerchantReconcileReport``.
    public static let adminReconcile = "\(base)/admin/reconcile"
    /// Admin: `POST` ``MerchantTokenRequest`` → ``MerchantTokenResponse`` (a user token, for tools and tests).
    public static let adminTokens = "\(base)/admin/tokens"
}

/// `products_v2.json`: the ids of `products_v1.json` with what each one delivers. Fields may be added in later
/// versions; a v1 reader is never served them.
public struct MerchantProductList: Codable, Sendable, Hashable {
    public var version: Int
    public var bundleId: String
    public var products: [Entry]

    public struct Entry: Codable, Sendable, Hashable {
        public var productId: String
        /// `consumable`, `non_consumable`, `auto_renewable` or `non_renewing`.
        public var type: String
        /// The entitlement it unlocks, if any.
        public var entitlement: String?
        /// The balance it credits per unit, if any (e.g. 100 `coins`).
        public var balance: String?
        public var amount: Int64?
        /// Whether it has downloadable content.
        public var hasContent: Bool

        public init(
            productId: String, type: String, entitlement: String?, balance: String?, amount: Int64?,
            hasContent: Bool
        ) {
            self.productId = productId
            self.type = type
            self.entitlement = entitlement
            self.balance = balance
            self.amount = amount
            self.hasContent = hasContent
        }
    }

    public init(version: Int, bundleId: String, products: [Entry]) {
        self.version = version
        self.bundleId = bundleId
        self.products = products
    }
}

/// An app asks for an order before it pays.
public struct MerchantOrderRequest: Codable, Sendable, Hashable {
    /// Needed only when the merchant serves more than one app.
    public var bundleId: String?
    public var productId: String
    /// 1–10; default 1.
    public var quantity: Int?

    public init(bundleId: String? = nil, productId: String, quantity: Int? = nil) {
        self.bundleId = bundleId
        self.productId = productId
        self.quantity = quantity
    }
}

/// An order bound to one user. The app passes `appAccountToken` with its payment (SK2 purchase option, or as an
/// SK1 `applicationUsername`), and keeps `orderId` beside the transaction id until the merchant answered, since a
/// redelivered transaction may come back without either.
public struct MerchantOrder: Codable, Sendable, Hashable {
    public var orderId: String
    public var appAccountToken: UUID
    public var bundleId: String
    public var userId: String
    public var productId: String
    public var quantity: Int
    /// `open` until a transaction is delivered for it, then `delivered`.
    public var state: String
    /// The transaction delivered for it.
    public var transactionId: String?
    public var createdDate: Date

    public init(
        orderId: String, appAccountToken: UUID, bundleId: String, userId: String, productId: String, quantity: Int,
        state: String, transactionId: String?, createdDate: Date
    ) {
        self.orderId = orderId
        self.appAccountToken = appAccountToken
        self.bundleId = bundleId
        self.userId = userId
        self.productId = productId
        self.quantity = quantity
        self.state = state
        self.transactionId = transactionId
        self.createdDate = createdDate
    }
}

/// What the app sends after `purchased`: exactly one of a signed transaction (StoreKit 2's `jwsRepresentation`)
/// and an app receipt (base64, as for `verifyReceipt`), and the order it stored beside the transaction, if any.
public struct MerchantDeliveryRequest: Codable, Sendable, Hashable {
    public var signedTransaction: String?
    public var receiptData: String?
    public var orderId: String?

    public init(signedTransaction: String? = nil, receiptData: String? = nil, orderId: String? = nil) {
        self.signedTransaction = signedTransaction
        self.receiptData = receiptData
        self.orderId = orderId
    }
}

/// The merchant's answer once every transaction in the request is durably granted (or was before): the app may
/// finish its transactions now.
public struct MerchantDeliveryResponse: Codable, Sendable, Hashable {
    public var deliveries: [MerchantDelivery]
    public var entitlements: MerchantEntitlements

    public init(deliveries: [MerchantDelivery], entitlements: MerchantEntitlements) {
        self.deliveries = deliveries
        self.entitlements = entitlements
    }
}

/// One transaction's outcome.
public struct MerchantDelivery: Codable, Sendable, Hashable {
    public var transactionId: String
    public var productId: String
    /// `granted` (now), `already_granted` (before: a replay changes nothing) or `revoked` (refunded; nothing given);
    /// for a receipt's other transactions also `granted_to_another_user` (another user delivered it first) and
    /// `product_not_configured` (the merchant's configuration does not name the product: nothing given).
    public var outcome: String
    public var orderId: String?
    public var environment: String

    public init(transactionId: String, productId: String, outcome: String, orderId: String?, environment: String) {
        self.transactionId = transactionId
        self.productId = productId
        self.outcome = outcome
        self.orderId = orderId
        self.environment = environment
    }
}

/// Everything a user owns now: what a new device restores from the merchant.
public struct MerchantEntitlements: Codable, Sendable, Hashable {
    public var userId: String
    public var entitlements: [Entitlement]
    public var balances: [Balance]

    /// An entitlement: active now, or how it ended.
    public struct Entitlement: Codable, Sendable, Hashable {
        public var name: String
        public var active: Bool
        /// Nil for entitlements that do not expire (non-consumables).
        public var expiresDate: Date?
        /// The products whose grants give it now (or gave it last).
        public var productIds: [String]
        /// The transaction that decides it: the one expiring last, or the permanent one.
        public var transactionId: String
        /// For a subscription group's entitlement: the best level (1 is the highest) the user holds now, or held
        /// last.
        public var level: Int?
        /// For auto-renewable subscriptions: whether it renews (from the latest renewal info), and the end of a
        /// billing grace period it is in.
        public var willAutoRenew: Bool?
        public var gracePeriodExpiresDate: Date?

        public init(
            name: String, active: Bool, expiresDate: Date?, productIds: [String], transactionId: String,
            level: Int? = nil, willAutoRenew: Bool? = nil, gracePeriodExpiresDate: Date? = nil
        ) {
            self.name = name
            self.active = active
            self.expiresDate = expiresDate
            self.productIds = productIds
            self.transactionId = transactionId
            self.level = level
            self.willAutoRenew = willAutoRenew
            self.gracePeriodExpiresDate = gracePeriodExpiresDate
        }
    }

    /// A balance consumables credit, in whole units (coins).
    public struct Balance: Codable, Sendable, Hashable {
        public var name: String
        /// What the standing purchases credited less what was spent; below zero when a purchase was refunded
        /// after its units were spent.
        public var amount: Int64

        public init(name: String, amount: Int64) {
            self.name = name
            self.amount = amount
        }
    }

    public init(userId: String, entitlements: [Entitlement], balances: [Balance]) {
        self.userId = userId
        self.entitlements = entitlements
        self.balances = balances
    }

    /// The entitlement called `name`, active or not.
    public func entitlement(_ name: String) -> Entitlement? { entitlements.first { $0.name == name } }

    /// The balance called `name`; 0 when there is none.
    public func balance(_ name: String) -> Int64 { balances.first { $0.name == name }?.amount ?? 0 }
}

/// Why a user has what they have, one line per entitlement and balance, then the history that led there.
public struct MerchantExplanation: Codable, Sendable, Hashable {
    public var userId: String
    /// Sentences such as "entitled to pro until 2026-12-01T00:00:00Z because transaction 2000000000000004
    /// (com.example.pro.monthly) renewed on 2026-11-01T00:00:00Z".
    public var lines: [String]
    public var history: [HistoryEntry]

    /// One change to the user's ledger.
    public struct HistoryEntry: Codable, Sendable, Hashable {
        public var date: Date
        /// `granted`, `revoked`, `reinstated`, `expiry_changed`, `spent`.
        public var kind: String
        /// The transaction it concerns; nil for a spend.
        public var transactionId: String?
        public var productId: String?
        /// Where it came from: `app`, `receipt`, `notification`, `reconciliation`.
        public var source: String
        public var detail: String

        public init(
            date: Date, kind: String, transactionId: String?, productId: String?, source: String, detail: String
        ) {
            self.date = date
            self.kind = kind
            self.transactionId = transactionId
            self.productId = productId
            self.source = source
            self.detail = detail
        }
    }

    public init(userId: String, lines: [String], history: [HistoryEntry]) {
        self.userId = userId
        self.lines = lines
        self.history = history
    }
}

/// Spend from a balance (coins the user bought): the app sends it when the user uses what they bought. A retry
/// with the same `idempotencyKey` spends once and answers the same.
public struct MerchantSpendRequest: Codable, Sendable, Hashable {
    /// Whole units, at least 1.
    public var amount: Int64
    /// Unique per spend for the user; 1–128 characters.
    public var idempotencyKey: String
    /// What it was for, kept in the history (at most 200 characters).
    public var reason: String?

    public init(amount: Int64, idempotencyKey: String, reason: String? = nil) {
        self.amount = amount
        self.idempotencyKey = idempotencyKey
        self.reason = reason
    }
}

/// A spend, and the balance after it.
public struct MerchantSpendResponse: Codable, Sendable, Hashable {
    public var balance: String
    public var amount: Int64
    /// What is left now.
    public var remaining: Int64
    public var idempotencyKey: String
    public var reason: String?
    public var spentDate: Date
    /// True when this answers a retry of a spend made before (nothing was spent again).
    public var replayed: Bool

    public init(
        balance: String, amount: Int64, remaining: Int64, idempotencyKey: String, reason: String?, spentDate: Date,
        replayed: Bool
    ) {
        self.balance = balance
        self.amount = amount
        self.remaining = remaining
        self.idempotencyKey = idempotencyKey
        self.reason = reason
        self.spentDate = spentDate
        self.replayed = replayed
    }
}

/// A product's downloadable files for a user who owns it.
public struct MerchantContent: Codable, Sendable, Hashable {
    public var productId: String
    public var files: [File]

    public struct File: Codable, Sendable, Hashable {
        /// The path inside the product's content, e.g. `levels/level-01.json`.
        public var name: String
        public var size: Int64
        /// Lower-case hex SHA-256 of the bytes, to check a download.
        public var sha256: String
        /// An authorized URL (signed for this user, valid until `expiresDate`); needs no bearer token.
        public var url: String
        public var expiresDate: Date

        public init(name: String, size: Int64, sha256: String, url: String, expiresDate: Date) {
            self.name = name
            self.size = size
            self.sha256 = sha256
            self.url = url
            self.expiresDate = expiresDate
        }
    }

    public init(productId: String, files: [File]) {
        self.productId = productId
        self.files = files
    }
}

/// Admin: compare the store's transaction history with the grant ledger.
public struct MerchantReconcileRequest: Codable, Sendable, Hashable {
    /// Needed only when the merchant serves more than one app.
    public var bundleId: String?
    /// `Sandbox` or `Production`.
    public var environment: String
    /// Repair what is found: grant purchases not granted, take back grants without a purchase.
    public var repair: Bool?
    /// How far back the store's notification history is read; default 179 days (Apple keeps 180).
    public var since: Date?
    /// Where the history read ends; default the merchant's now. The sandbox clock can run ahead of the merchant's
    /// (`kiosk check` moves it): pass the store's time to see what happened in its future.
    public var until: Date?

    public init(
        bundleId: String? = nil, environment: String, repair: Bool? = nil, since: Date? = nil, until: Date? = nil
    ) {
        self.bundleId = bundleId
        self.environment = environment
        self.repair = repair
        self.since = since
        self.until = until
    }
}

/// What reconciliation found and, when asked, did.
public struct MerchantReconcileReport: Codable, Sendable, Hashable {
    public var bundleId: String
    public var environment: String
    /// How many store transactions and grants were compared.
    public var storeTransactions: Int
    public var grants: Int
    public var findings: [Finding]
    public var repaired: Bool

    /// One discrepancy.
    public struct Finding: Codable, Sendable, Hashable {
        /// `not_granted` (a purchase with no grant), `grant_without_purchase`, `revocation_not_applied`,
        /// `no_user` (a purchase no order or earlier grant ties to a user: nothing can be granted).
        public var kind: String
        public var transactionId: String
        public var productId: String
        public var userId: String?
        /// What repair did (`granted`, `already_granted`, `granted_to_another_user`, `revoked`, `reinstated`), or
        /// nil when not repaired.
        public var repair: String?
        public var detail: String

        public init(
            kind: String, transactionId: String, productId: String, userId: String?, repair: String?, detail: String
        ) {
            self.kind = kind
            self.transactionId = transactionId
            self.productId = productId
            self.userId = userId
            self.repair = repair
            self.detail = detail
        }
    }

    public init(
        bundleId: String, environment: String, storeTransactions: Int, grants: Int, findings: [Finding],
        repaired: Bool
    ) {
        self.bundleId = bundleId
        self.environment = environment
        self.storeTransactions = storeTransactions
        self.grants = grants
        self.findings = findings
        self.repaired = repaired
    }
}

/// Admin: issue a user token (what the developer's own sign-in would hand the app).
public struct MerchantTokenRequest: Codable, Sendable, Hashable {
    public var userId: String
    /// Lifetime in seconds; default 30 days.
    public var expiresIn: Int?

    public init(userId: String, expiresIn: Int? = nil) {
        self.userId = userId
        self.expiresIn = expiresIn
    }
}

public struct MerchantTokenResponse: Codable, Sendable, Hashable {
    public var userId: String
    public var token: String
    public var expiresDate: Date

    public init(userId: String, token: String, expiresDate: Date) {
        self.userId = userId
        self.token = token
        self.expiresDate = expiresDate
    }
}
