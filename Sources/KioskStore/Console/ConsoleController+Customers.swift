import Foundation
import Hummingbird
import KioskCore
import KioskProtocol

/// Customers: search, a customer's timeline (purchases, renewals, refunds and the notifications sent about them),
/// and in the sandbox the test controls for that customer (buy, refund, revoke, reverse a refund).
extension ConsoleController {
    func addCustomerRoutes(to pages: RouterGroup<KioskRequestContext>) {
        pages.get("customers") { request, context in
            let query = request.uri.queryParameters.get("q") ?? ""
            let matches = query.isEmpty ? [] : try await accounts.findCustomers(query)
            let page = ConsolePager.page(of: request)
            let (testers, total) = try await accounts.accountPage(
                .sandbox, offset: (page - 1) * Self.testersPerPage, limit: Self.testersPerPage)
            let search = query.isEmpty ? "" : "q=\(ConsoleForm.percentEncoded(query))&"
            return renderer.page(
                CustomersPage(
                    q: query, searched: !query.isEmpty, noMatch: !query.isEmpty && matches.isEmpty,
                    matches: matches.map {
                        CustomersPage.Match(
                            email: $0.account.email, environment: $0.account.environment.rawValue,
                            matchedBy: $0.matchedBy)
                    },
                    testers: testers.map { CustomersPage.Tester(email: $0.email, storefront: $0.storefront) },
                    pager: ConsolePager(
                        "Testers", page: page, size: Self.testersPerPage, shown: testers.count, total: total
                    ) { "/console/customers?\(search)page=\($0)#testers" },
                    storefronts: ConsoleStorefrontOption.all(selected: "USA")),
                title: "Customers", section: "Customers", session: context.consoleSession)
        }
        pages.get("customers/:environment/:email") { _, context in
            try await customerPage(try Self.environment(context), email: try Self.email(context), context)
        }
        pages.post("testers") { request, context in
            try await action(request, context, audit: "tester.create") { form in
                let account = try await accounts.createAccount(
                    .sandbox, email: form["email"] ?? "",
                    changes: AccountChanges(password: form["password"], storefront: form["storefront"]))
                return ConsoleOutcome(
                    target: account.email, redirect: Self.customerPath(account.email),
                    notice: "Created the sandbox tester \(account.email) in storefront \(account.storefront).")
            }
        }
        pages.post("testers/:email/purchases") { request, context in
            let email = try Self.email(context)
            return try await action(request, context, audit: "test.purchase") { form in
                // The product list's values are "bundleId productId".
                let choice = (form["product"] ?? "").split(separator: " ", maxSplits: 1).map(String.init)
                guard choice.count == 2 else {
                    throw KioskError(.missingProduct, "Choose a product to buy.", field: "product")
                }
                // The form's key, made when the page was drawn, charges once however often the form is sent.
                let entry = try await testControls.purchase(
                    bundleId: choice[0],
                    TestPurchaseRequest(tester: email, productId: choice[1], idempotencyKey: form["idempotencyKey"]))
                let notice =
                    switch (entry.transaction, entry.error) {
                    case (.some(let transaction), _):
                        "\(email) bought \(choice[1]): transaction \(transaction.transactionId) "
                            + "(a simulated payment; no money moved)."
                    case (nil, .some(let error)): "\(choice[1]) was not charged: \(error.message)"
                    case (nil, nil): "\(choice[1]) is \(entry.state.rawValue): nothing was charged yet."
                    }
                return ConsoleOutcome(
                    target: "\(email) bought \(choice[1]) (\(entry.state.rawValue))",
                    redirect: Self.customerPath(email),
                    notice: notice)
            }
        }
        pages.post("testers/:email/transactions/:transactionId/:action") { request, context in
            let email = try Self.email(context)
            let transactionId = try context.parameters.require("transactionId", as: Int64.self)
            let action = try context.parameters.require("action")
            return try await self.action(request, context, audit: "test.\(action)") { form in
                let bundleId = form["bundleId"] ?? ""
                let revised: TestRevocationResponse
                switch action {
                case "refund":
                    revised = try await refunds.refund(
                        bundleId: bundleId, transactionId: transactionId, try Self.refundRequest(form))
                case "request-refund":
                    revised = try await refunds.requestRefund(
                        bundleId: bundleId, transactionId: transactionId,
                        TestRefundRequestRequest(reason: form["consumptionReason"]))
                case "decline-refund":
                    revised = try await refunds.declineRefund(bundleId: bundleId, transactionId: transactionId)
                case "reverse-refund":
                    revised = try await refunds.reverseRefund(bundleId: bundleId, transactionId: transactionId)
                case "revoke":
                    revised = try await refunds.revoke(bundleId: bundleId, transactionId: transactionId)
                default:
                    throw KioskError(
                        .unknownAction, "'\(action.prefix(20))' is not something a transaction can be made to do.",
                        field: "action", fix: "Use the buttons on the customer's page.")
                }
                let (sent, link) = Self.notificationNotice(
                    revised.notificationType, state: revised.notificationState,
                    attempts: revised.notificationAttempts, bundleId: bundleId, environment: .sandbox)
                return ConsoleOutcome(
                    target: "transaction \(transactionId) of \(email)", redirect: Self.customerPath(email),
                    notice: Self.revision(action, revised) + " " + sent, link: link)
            }
        }
    }

    /// A production refund or its reversal, by someone whose roles refund customers; back to the customer's page.
    func addRefundRoutes(to pages: RouterGroup<KioskRequestContext>) {
        pages.post("refunds/:bundleId/:transactionId/:action") { request, context in
            let bundleId = try context.parameters.require("bundleId")
            let transactionId = try context.parameters.require("transactionId", as: Int64.self)
            let action = try context.parameters.require("action")
            return try await self.action(request, context, audit: "refund.\(action.prefix(20))") { form in
                let revised: TestRevocationResponse
                switch action {
                case "refund":
                    revised = try await refunds.refund(
                        bundleId: bundleId, transactionId: transactionId, try Self.refundRequest(form),
                        environment: .production)
                case "reverse-refund":
                    revised = try await refunds.reverseRefund(
                        bundleId: bundleId, transactionId: transactionId, environment: .production)
                default:
                    throw KioskError(
                        .unknownAction, "'\(action.prefix(20))' is not something a purchase can be made to do.",
                        field: "action", fix: "Use the buttons on the customer's page.")
                }
                let (sent, link) = Self.notificationNotice(
                    revised.notificationType, state: revised.notificationState,
                    attempts: revised.notificationAttempts, bundleId: bundleId, environment: .production)
                return ConsoleOutcome(
                    target: "\(bundleId) transaction \(transactionId)", redirect: Self.safeNext(form["back"]),
                    notice: Self.revision(action, revised) + " " + sent, link: link)
            }
        }
    }

    /// What a refund control did to the transaction, in a sentence.
    static func revision(_ action: String, _ revised: TestRevocationResponse) -> String {
        let transaction = "transaction \(revised.transactionId) (\(revised.productId))"
        switch action {
        case "refund":
            return "Refunded \(Self.amount(revised.refundedMinorUnits, revised.currency ?? "")) of \(transaction)."
        case "reverse-refund": return "Reversed the refund of \(transaction)."
        case "revoke": return "Revoked \(transaction) (Family Sharing ended)."
        case "decline-refund": return "Declined the refund of \(transaction): nothing changes for the customer."
        default: return "The customer asked for a refund of \(transaction)."
        }
    }

    /// A refund form's reason and share of the price.
    static func refundRequest(_ form: ConsoleForm) throws -> RefundRequest {
        RefundRequest(
            reason: try ConsoleForm.integer(form["reason"], field: "reason"),
            percentage: try ConsoleForm.integer(form["percentage"], field: "percentage"))
    }

    /// How a revoked transaction was revoked, for its timeline: "refunded", "refunded 0.25 USD (prorated)" or
    /// "revoked (Family Sharing)".
    static func revocation(_ transaction: StoreTransaction) -> String {
        switch transaction.revocationType {
        case .familyRevoke: return "revoked (Family Sharing)"
        case .refundProrated where transaction.priceMinorUnits > 0:
            return "refunded \(amount(transaction.refundedMinorUnits, transaction.currency)) (prorated)"
        default: return "refunded"
        }
    }

    /// How many sandbox testers the customers page lists at once.
    static let testersPerPage = 100

    /// A customer's page: a sandbox tester's unless `environment` says otherwise.
    static func customerPath(_ email: String, _ environment: StoreEnvironment = .sandbox) -> String {
        "/console/customers/\(environment.rawValue)/" + ConsoleForm.percentEncoded(email)
    }

    /// Where a tester's test controls post.
    static func testerPath(_ email: String) -> String {
        "/console/testers/" + ConsoleForm.percentEncoded(email)
    }

    /// The path's email, percent-decoded (the router leaves `%40` as it is).
    static func email(_ context: KioskRequestContext) throws -> String {
        let raw = try context.parameters.require("email")
        return raw.removingPercentEncoding ?? raw
    }

    static func environment(_ context: KioskRequestContext) throws -> StoreEnvironment {
        let text = try context.parameters.require("environment")
        guard let environment = StoreEnvironment(rawValue: text) else {
            throw KioskError(.unknownEnvironment, "'\(text.prefix(20))' is not sandbox or production.")
        }
        return environment
    }

    func customerPage(_ environment: StoreEnvironment, email: String, _ context: KioskRequestContext) async throws
        -> Response
    {
        let history = try await accounts.customerHistory(environment, email: email)
        let isSandbox = environment == .sandbox
        let apps = history.apps.map { app, transactions, notifications in
            CustomerPage.App(
                name: app.name, bundleId: app.bundleId,
                transactions: transactions.map { transaction in
                    CustomerPage.Transaction(
                        id: String(transaction.id), originalId: String(transaction.originalTransactionId),
                        productId: transaction.productId, date: Self.time(transaction.purchaseDate),
                        price: Self.amount(transaction.priceMinorUnits, transaction.currency),
                        reason: transaction.transactionReason.rawValue, orderId: transaction.orderId,
                        revoked: transaction.revocationDate.map(Self.time), revocation: Self.revocation(transaction),
                        // Apple asks the app's server about consumables and auto-renewables only.
                        requestable: isSandbox && transaction.revocationDate == nil
                            && [.consumable, .autoRenewable].contains(transaction.productType),
                        refundable: transaction.revocationDate == nil,
                        reversible: transaction.revocationType?.isRefund == true,
                        // Family Sharing's revocation: not for consumables, which are never shared.
                        revocable: isSandbox && transaction.revocationDate == nil
                            && transaction.productType != .consumable,
                        decoded: Self.decodedJWS(transaction.signedTransaction),
                        expires: transaction.expiresDate.map(Self.time), jws: transaction.signedTransaction,
                        bundleId: app.bundleId)
                },
                notifications: notifications.map { NotificationsPage.Notification($0) },
                entitlements: StoreTransaction.currentEntitlements(
                    among: transactions, at: testControls.context.clocks.now(environment)
                ).map { CustomerPage.Entitlement(productId: $0.productId, expires: $0.expiresDate.map(Self.time)) })
        }
        var products: [CustomerPage.ProductChoice] = []
        if isSandbox {
            for app in try await catalog.apps() {
                for product in try await catalog.products(bundleId: app.bundleId) {
                    products.append(
                        CustomerPage.ProductChoice(
                            value: "\(app.bundleId) \(product.productId)",
                            label: "\(product.referenceName) (\(app.name))"))
                }
            }
        }
        let subscriptionRows =
            isSandbox ? try await subscriptionRows(email: email, apps: history.apps.map(\.app)) : []
        let account = history.account
        let waiting = isSandbox ? try await waitingPayments(email: account.email) : []
        return renderer.page(
            CustomerPage(
                environment: environment.rawValue, sandbox: isSandbox,
                consumptionReasons: RefundService.consumptionRequestReasons.map { ConsoleOption(value: $0) },
                name: "\(account.firstName) \(account.lastName)".trimmingCharacters(in: .whitespaces),
                storefront: account.storefront, apps: apps, noTransactions: apps.isEmpty, products: products,
                path: Self.customerPath(account.email, environment), controls: Self.testerPath(account.email),
                purchaseKey: UUID().uuidString, subscriptions: subscriptionRows,
                hasSubscriptions: !subscriptionRows.isEmpty, settings: isSandbox ? Self.testerSettings(account) : nil,
                waiting: waiting),
            title: account.email, section: "Customers", session: context.consoleSession)
    }

    /// A JWS's header and payload as indented JSON, for reading (the console signed it; nothing is verified here).
    static func decodedJWS(_ jws: String) -> String {
        jws.split(separator: ".").prefix(2).compactMap { segment -> String? in
            var base64 = segment.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
            guard let data = Data(base64Encoded: base64), let object = try? JSONSerialization.jsonObject(with: data),
                let pretty = try? JSONSerialization.data(
                    withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
            else { return nil }
            return String(decoding: pretty, as: UTF8.self)
        }.joined(separator: "\n")
    }
}

/// Customer search, and the sandbox's testers with the form that adds one.
struct CustomersPage: ConsoleView {
    static let template = "customers"

    struct Match: Decodable {
        var email: String
        var environment: String
        /// What the query matched: the email, a transaction id…
        var matchedBy: String
    }

    struct Tester: Decodable {
        var email: String
        var storefront: String
    }

    /// The query, as typed.
    var q: String
    var searched: Bool
    var noMatch: Bool
    var matches: [Match]
    var testers: [Tester]
    /// Where this page of testers is in the whole list; nil when one page holds them all.
    var pager: ConsolePager?
    var storefronts: [ConsoleStorefrontOption]
}

/// A customer: their purchases, entitlements and notifications in each app, their subscriptions, and for a sandbox
/// tester the test controls and settings.
struct CustomerPage: ConsoleView {
    static let template = "customer"

    struct App: Decodable {
        var name: String
        var bundleId: String
        var transactions: [Transaction]
        var notifications: [NotificationsPage.Notification]
        var entitlements: [Entitlement]
    }

    /// A transaction on the timeline, and what the refund controls may do to it.
    struct Transaction: Decodable {
        var id: String
        var originalId: String
        var productId: String
        var date: String
        var price: String
        var reason: String
        var orderId: String
        /// When it was revoked.
        var revoked: String?
        /// How it was revoked: "refunded", "revoked (Family Sharing)"…
        var revocation: String
        /// Whether the customer may ask for a refund (the sandbox's test controls).
        var requestable: Bool
        var refundable: Bool
        var reversible: Bool
        /// Whether Family Sharing may revoke it (the sandbox's test controls).
        var revocable: Bool
        /// The signed transaction's header and payload, indented.
        var decoded: String
        var expires: String?
        var jws: String
        var bundleId: String
    }

    struct Entitlement: Decodable {
        var productId: String
        var expires: String?
    }

    /// A product the tester can buy: its value is "bundleId productId".
    struct ProductChoice: Decodable {
        var value: String
        var label: String
    }

    /// A subscription of the tester's, with the actions the test controls offer.
    struct Subscription: Decodable {
        var bundleId: String
        var originalId: String
        var productId: String
        var state: String
        var autoRenew: String
        var expires: String
        /// Made for each page: a "Turn auto-renew off" sent twice from one page runs the cancellation flow once.
        var requestIdentifier: String
        var actions: [Action]
    }

    struct Action: Decodable {
        var value: String
        var label: String
    }

    /// A sandbox tester's settings, as the form shows them.
    struct TesterSettings: Decodable {
        var askToBuy: Bool
        var interruptPurchases: Bool
        var outcomes: [ConsoleOption]
        var rates: [ConsoleOption]
        var historyCleared: String?
    }

    /// A payment waiting for a decision (Ask to Buy, an interrupted purchase).
    struct WaitingPayment: Decodable {
        var id: String
        var bundleId: String
        var productId: String
        var state: String
        var decisions: [ConsoleOption]
    }

    var environment: String
    var sandbox: Bool
    var consumptionReasons: [ConsoleOption]
    var name: String
    var storefront: String
    var apps: [App]
    var noTransactions: Bool
    var products: [ProductChoice]
    /// This page, for the forms to come back to.
    var path: String
    /// Where the tester's test controls post.
    var controls: String
    /// The buy form's idempotency key, made when the page is drawn.
    var purchaseKey: String
    var subscriptions: [Subscription]
    var hasSubscriptions: Bool
    /// A sandbox tester's settings; nil in production.
    var settings: TesterSettings?
    var waiting: [WaitingPayment]
}
