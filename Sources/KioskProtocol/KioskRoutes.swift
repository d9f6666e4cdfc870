import Foundation

/// A route of Kiosk's own HTTP APIs, written once: the store registers its ``pattern`` and every client (the CLI,
/// `kiosk check`, the merchant's setup, the bench and the chaos campaign) builds its ``path(_:)`` from the same value,
/// so a route cannot be spelt two ways. Apple's APIs (the Server API, `verifyReceipt`, App Store Connect) keep
/// Apple's paths where they are served.
public struct KioskRoute: Sendable, Hashable, CustomStringConvertible {
    /// The API a route belongs to, and its base path.
    public enum API: String, Sendable, Hashable {
        /// The console API: the catalog, accounts, money and the team (admin token).
        case admin = "/admin/v1"
        /// The sandbox test controls (admin token; absent in production).
        case testControls = "/sandbox/test/v1"
    }

    public let api: API
    /// The path under the API's base, parameters written `:name`: `apps/:bundleId/products`. What the router
    /// registers.
    public let pattern: String

    init(_ api: API, _ pattern: String) {
        self.api = api
        self.pattern = pattern
    }

    /// The parameters' names, in the order ``path(_:)`` takes their values.
    public var parameters: [String] {
        pattern.split(separator: "/").filter { $0.hasPrefix(":") }.map { String($0.dropFirst()) }
    }

    /// The absolute path with `values` in place of the parameters, in order, each escaped as one path segment:
    /// `AdminRoutes.product.path("com.example.app", "coins.100")` is
    /// `/admin/v1/apps/com.example.app/products/coins.100`.
    public func path(_ values: String...) -> String { filled(values) }

    /// ``path(_:)`` followed by `query`, each name and value escaped for a query string:
    /// `TestControlRoutes.transactions.path("com.example.app", query: ["tester": "a+b@example.com"])`.
    public func path(_ values: String..., query: KeyValuePairs<String, String>) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+?#")
        let items = query.map { name, value in
            [name, value].map { $0.addingPercentEncoding(withAllowedCharacters: allowed) ?? $0 }.joined(separator: "=")
        }
        return filled(values) + (items.isEmpty ? "" : "?" + items.joined(separator: "&"))
    }

    private func filled(_ values: [String]) -> String {
        precondition(values.count == parameters.count, "\(self) takes \(parameters.count) values, not \(values.count)")
        var remaining = values[...]
        let segments = pattern.split(separator: "/").map { segment in
            segment.hasPrefix(":") ? Self.escaped(remaining.removeFirst()) : String(segment)
        }
        return api.rawValue + "/" + segments.joined(separator: "/")
    }

    /// `/admin/v1/apps/:bundleId/products`.
    public var description: String { api.rawValue + "/" + pattern }

    /// `value` escaped as one URL path segment (a `/` in it stays inside the segment).
    public static func escaped(_ value: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }
}

/// The console API's routes (`/admin/v1`); openapi.yaml documents each one's methods and bodies.
public enum AdminRoutes {
    public static let apps = KioskRoute(.admin, "apps")
    public static let app = KioskRoute(.admin, "apps/:bundleId")
    public static let sharedSecret = KioskRoute(.admin, "apps/:bundleId/shared-secret")
    /// The app's In-App Purchase keys (the App Store Server API's keys).
    public static let keys = KioskRoute(.admin, "apps/:bundleId/keys")
    public static let key = KioskRoute(.admin, "apps/:bundleId/keys/:keyId")
    /// The whole catalog as a file: export (`GET`) and import (`POST`).
    public static let catalog = KioskRoute(.admin, "apps/:bundleId/catalog")
    public static let products = KioskRoute(.admin, "apps/:bundleId/products")
    public static let product = KioskRoute(.admin, "apps/:bundleId/products/:productId")
    public static let productLocalization = KioskRoute(
        .admin, "apps/:bundleId/products/:productId/localizations/:locale")
    public static let productReview = KioskRoute(.admin, "apps/:bundleId/products/:productId/review")
    public static let productAvailability = KioskRoute(.admin, "apps/:bundleId/products/:productId/availability")
    public static let productPrices = KioskRoute(.admin, "apps/:bundleId/products/:productId/prices")
    public static let subscriptionGroups = KioskRoute(.admin, "apps/:bundleId/subscription-groups")
    public static let subscriptionGroup = KioskRoute(.admin, "apps/:bundleId/subscription-groups/:groupId")
    public static let offerCodes = KioskRoute(.admin, "apps/:bundleId/offer-codes")
    public static let signedTestNotification = KioskRoute(.admin, "apps/:bundleId/signed-test-notification")
    /// A production refund (or its reversal) the store makes on the customer's behalf.
    public static let refund = KioskRoute(.admin, "apps/:bundleId/transactions/:transactionId/refund")
    public static let reverseRefund = KioskRoute(.admin, "apps/:bundleId/transactions/:transactionId/reverse-refund")
    /// `POST` a ``CheckReport`` → 201 ``CheckRunSummary``.
    public static let recordCheckRun = KioskRoute(.admin, "apps/:bundleId/check-runs")
    /// `GET` → ``CheckRunList``.
    public static let checkRuns = KioskRoute(.admin, "check-runs")
    /// `GET` → ``CheckReport``.
    public static let checkRun = KioskRoute(.admin, "check-runs/:id")
    /// Sandbox testers.
    public static let testers = KioskRoute(.admin, "testers")
    public static let tester = KioskRoute(.admin, "testers/:email")
    public static let clearPurchaseHistory = KioskRoute(.admin, "testers/:email/clear-purchase-history")
    /// Production customer accounts.
    public static let accounts = KioskRoute(.admin, "accounts")
    public static let account = KioskRoute(.admin, "accounts/:email")
    public static let paidAppsAgreement = KioskRoute(.admin, "agreements/paid-apps")
    public static let acceptPaidAppsAgreement = KioskRoute(.admin, "agreements/paid-apps/accept")
    public static let smallBusinessProgram = KioskRoute(.admin, "agreements/small-business")
    public static let taxRules = KioskRoute(.admin, "tax-rules")
    public static let taxRule = KioskRoute(.admin, "tax-rules/:storefront")
    public static let exchangeRates = KioskRoute(.admin, "exchange-rates")
    public static let exchangeRate = KioskRoute(.admin, "exchange-rates/:currency")
    public static let salesReport = KioskRoute(.admin, "reports/sales")
    public static let subscriptionEventReport = KioskRoute(.admin, "reports/subscription-events")
    public static let financeReport = KioskRoute(.admin, "reports/finance")
    public static let moneySeries = KioskRoute(.admin, "money/series")
    public static let moneyEvents = KioskRoute(.admin, "money/events")
    /// The team's App Store Connect API keys.
    public static let teamKeys = KioskRoute(.admin, "api-keys")
    public static let revokeTeamKey = KioskRoute(.admin, "api-keys/:keyId/revoke")
    public static let consoleUsers = KioskRoute(.admin, "console-users")
    public static let consoleUser = KioskRoute(.admin, "console-users/:email")
    public static let resetConsolePassword = KioskRoute(.admin, "console-users/:email/reset-password")
    /// The environment's root certificate (`?format=pem|der`).
    public static let rootCertificate = KioskRoute(.admin, "certificates/:environment/root")
    public static let certificateRevocations = KioskRoute(.admin, "certificates/:environment/revocations")
    /// `GET ?environment=` → ``RetentionOverview``: the app's retention messaging (Apple's Retention Messaging API).
    public static let retention = KioskRoute(.admin, "apps/:bundleId/retention")
    /// `POST` a ``RetentionReviewRequest``: App Review's decision on an image or a message.
    public static let retentionReview = KioskRoute(.admin, "apps/:bundleId/retention/review")
    /// `GET` → ``RetentionOfferList``; `POST` a ``RetentionOfferRequest`` → ``RetentionOfferResource``.
    public static let retentionOffers = KioskRoute(.admin, "apps/:bundleId/retention/offers")
    /// `DELETE`.
    public static let retentionOffer = KioskRoute(.admin, "apps/:bundleId/retention/offers/:productId/:identifier")

    /// Every route above, for the test that the store serves each one.
    public static let all: [KioskRoute] = [
        apps, app, sharedSecret, keys, key, catalog, products, product, productLocalization, productReview,
        productAvailability, productPrices, subscriptionGroups, subscriptionGroup, offerCodes, signedTestNotification,
        refund, reverseRefund, recordCheckRun, checkRuns, checkRun, testers, tester, clearPurchaseHistory, accounts,
        account, paidAppsAgreement, acceptPaidAppsAgreement, smallBusinessProgram, taxRules, taxRule, exchangeRates,
        exchangeRate, salesReport, subscriptionEventReport, financeReport, moneySeries, moneyEvents, teamKeys,
        revokeTeamKey, consoleUsers, consoleUser, resetConsolePassword, rootCertificate, certificateRevocations,
        retention, retentionReview, retentionOffers, retentionOffer,
    ]
}

/// The sandbox test controls' routes (`/sandbox/test/v1`).
public enum TestControlRoutes {
    /// `POST` a ``TestPurchaseRequest``: a purchase made outside the app (or a promoted one).
    public static let purchases = KioskRoute(.testControls, "apps/:bundleId/purchases")
    public static let payments = KioskRoute(.testControls, "apps/:bundleId/payments")
    /// `approve` or `decline` an Ask to Buy; `complete` or `fail` an interrupted purchase.
    public static let paymentDecision = KioskRoute(.testControls, "apps/:bundleId/payments/:paymentId/:decision")
    public static let transactions = KioskRoute(.testControls, "apps/:bundleId/transactions")
    public static let transaction = KioskRoute(.testControls, "apps/:bundleId/transactions/:transactionId")
    public static let consumption = KioskRoute(
        .testControls, "apps/:bundleId/transactions/:transactionId/consumption")
    /// `refund`, `request-refund`, `revoke`, … on one transaction.
    public static let transactionAction = KioskRoute(
        .testControls, "apps/:bundleId/transactions/:transactionId/:action")
    public static let receipt = KioskRoute(.testControls, "apps/:bundleId/receipt")
    public static let failures = KioskRoute(.testControls, "apps/:bundleId/failures")
    public static let notifications = KioskRoute(.testControls, "apps/:bundleId/notifications")
    public static let resendNotification = KioskRoute(
        .testControls, "apps/:bundleId/notifications/:notificationUUID/resend")
    /// `POST` a ``TestConsentRequest``: a parent withdraws consent (`RESCIND_CONSENT`).
    public static let rescindConsent = KioskRoute(.testControls, "apps/:bundleId/rescind-consent")
    public static let gracePeriod = KioskRoute(.testControls, "apps/:bundleId/grace-period")
    public static let subscriptions = KioskRoute(.testControls, "apps/:bundleId/subscriptions")
    /// `POST` a ``TestSubscriptionRequest`` on one subscription.
    public static let subscription = KioskRoute(.testControls, "apps/:bundleId/subscriptions/:originalTransactionId")
    /// The sandbox clock: `GET` it, `POST` to advance it.
    public static let clock = KioskRoute(.testControls, "clock")

    /// Every route above, for the test that the store serves each one.
    public static let all: [KioskRoute] = [
        purchases, payments, paymentDecision, transactions, transaction, consumption, transactionAction, receipt,
        failures, notifications, resendNotification, rescindConsent, gracePeriod, subscriptions, subscription, clock,
    ]
}
