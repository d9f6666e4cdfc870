import AsyncHTTPClient
import Foundation
import KioskCore
import KioskHTTPClient
import KioskProtocol
import KioskSigning
import NIOHTTP1

/// The products a check plays with, found by what the check file says they grant and what the store says they are.
struct CheckCatalog: Sendable {
    var consumable: CheckFile.ProductGrant?
    var nonConsumable: CheckFile.ProductGrant?
    var nonRenewing: CheckFile.ProductGrant?
    var subscription: CheckFile.ProductGrant?
    var introductoryOffer: CheckFile.ProductGrant?
    /// A subscription with a promotional offer, and the offer's identifier.
    var promotional: (grant: CheckFile.ProductGrant, offerId: String)?
    /// A subscription with a win-back offer: the offer, and how many periods a first purchase must run (free trial
    /// included) before the subscriber has paid what the offer asks.
    var winBack: (grant: CheckFile.ProductGrant, offer: WinBackOffer, periods: Int)?
    /// Two subscriptions of one group: `higher` has the better level (the smaller number).
    var pair: (higher: CheckFile.ProductGrant, lower: CheckFile.ProductGrant)?

    init(file: CheckFile, store products: [ProductResource]) {
        let sold = Dictionary(products.map { ($0.productId, $0) }, uniquingKeysWith: { first, _ in first })
        let known = file.products.compactMap { grant in sold[grant.productId].map { (grant, $0) } }
        func first(_ type: ProductType, balance: Bool) -> CheckFile.ProductGrant? {
            known.first { $0.1.type == type && ($0.0.balance != nil) == balance }?.0
        }
        consumable = first(.consumable, balance: true)
        nonConsumable = first(.nonConsumable, balance: false)
        nonRenewing = first(.nonRenewing, balance: false)
        let subscriptions = known.filter { $0.1.type == .autoRenewable && $0.0.entitlement != nil }
        subscription = (subscriptions.first { $0.1.introductoryOffers.isEmpty } ?? subscriptions.first)?.0
        introductoryOffer = subscriptions.first { !$0.1.introductoryOffers.isEmpty }?.0
        if let (grant, product) = subscriptions.first(where: { !$0.1.promotionalOffers.isEmpty }),
            let offer = product.promotionalOffers.first
        {
            promotional = (grant, offer.identifier)
        }
        if let (grant, product) = subscriptions.first(where: { !$0.1.winBackOffers.isEmpty }),
            let offer = product.winBackOffers.first
        {
            // The store counts paid months as paid days / 30; a period pays its product's duration in days.
            let days: [SubscriptionDuration: Int] = [
                .oneWeek: 7, .oneMonth: 30, .twoMonths: 60, .threeMonths: 90, .sixMonths: 180, .oneYear: 365,
            ]
            let perPeriod = product.duration.flatMap { days[$0] } ?? 30
            let needed = offer.paidSubscriptionDurationInMonths * 30
            // A first purchase takes the introductory offer: a free trial pays nothing.
            let free = product.introductoryOffers.first { $0.paymentMode == .freeTrial }.map(\.numberOfPeriods) ?? 0
            winBack = (grant, offer, max(1, (needed + perPeriod - 1) / perPeriod) + free)
        }
        for (index, (grant, product)) in subscriptions.enumerated() {
            guard let membership = product.subscription else { continue }
            if let other = subscriptions[(index + 1)...].first(where: {
                $0.1.subscription?.groupId == membership.groupId && $0.1.subscription?.level != membership.level
            }) {
                let otherLevel = other.1.subscription?.level ?? 0
                pair = membership.level < otherLevel ? (grant, other.0) : (other.0, grant)
                break
            }
        }
    }
}

/// Calls to the developer's server that the check file describes: the probe, the app's report, the reconcile.
struct ServerCalls: Sendable {
    let file: CheckFile
    let http: JSONHTTPClient
    let environment: [String: String]

    func probe(_ user: UUID, now: Int64) async throws -> CheckProbe? {
        guard let probe = file.probe else { return nil }
        let url =
            "\(probe.url.hasSuffix("/") ? String(probe.url.dropLast()) : probe.url)/\(user.uuidString.lowercased())?now=\(now)"
        let answer = try await send(probe, url: url, body: nil, what: "the probe")
        do {
            return try JSONDecoder().decode(CheckProbe.self, from: answer.body)
        } catch {
            throw StoryFailure(
                "the probe answered something that is not the probe contract "
                    + #"({"entitlements": [names], "balances": {name: integer}}): "#
                    + String(decoding: answer.body.prefix(300), as: UTF8.self))
        }
    }

    /// Sends `call` with its body rendered from `values`; a non-2xx answer is the story's failure.
    func perform(_ call: CheckFile.Call, values: [String: String], what: String) async throws {
        _ = try await send(call, url: call.url, body: call.renderedBody(values), what: what)
    }

    private func send(_ call: CheckFile.Call, url: String, body: String?, what: String) async throws -> JSONHTTPAnswer {
        var headers = HTTPHeaders()
        for (name, value) in try call.resolvedHeaders(environment) { headers.add(name: name, value: value) }
        let method = HTTPMethod(rawValue: (call.method ?? (body == nil ? "GET" : "POST")).uppercased())
        let answer: JSONHTTPAnswer
        do {
            answer = try await http.send(
                method, url, headers: headers, json: body.map { Data($0.utf8) }, timeout: .seconds(10))
        } catch {
            throw StoryFailure("\(what) at \(url) did not answer: \(error)")
        }
        guard answer.isSuccess else {
            throw StoryFailure(
                "\(what) answered \(answer.status.code): \(String(decoding: answer.body.prefix(300), as: UTF8.self))")
        }
        return answer
    }
}

/// Why a story stopped: what was expected against what the server showed or did.
struct StoryFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A check the story could not make, and why (no probe, no purchase call, a product the file does not name).
struct NotMade: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A purchase a story made: what the app would hold.
struct StoryPurchase: Sendable {
    var productId: String
    var transactionId: String
    var originalTransactionId: String
    var signedTransaction: String
}

/// One story being played: its user (an app account token) and tester, the steps taken, and every delivery.
final class StoryRun: @unchecked Sendable {
    let store: CheckStore
    let relay: NotificationRelay
    let server: ServerCalls
    let catalog: CheckCatalog
    let user: UUID
    let tester: String
    let answerWithin: Double
    private(set) var steps: [StepRecord] = []
    private(set) var notChecked: [String] = []
    private(set) var notes: [String] = []
    private var random: SplitMix64

    init(
        store: CheckStore, relay: NotificationRelay, server: ServerCalls, catalog: CheckCatalog, tester: String,
        random: SplitMix64, answerWithin: Double
    ) {
        self.store = store
        self.relay = relay
        self.server = server
        self.catalog = catalog
        self.tester = tester
        self.random = random
        self.answerWithin = answerWithin
        user = self.random.uuid()
    }

    /// The story's user as transactions carry it (lower case).
    var userToken: String { user.uuidString.lowercased() }

    /// The deliveries since `index` that belong to this story: its user's, and those without a transaction (TEST).
    /// Other stories' subscriptions renew too when the clock moves; their deliveries are theirs.
    private func deliveries(since index: Int) -> [Delivery] {
        relay.deliveries[index...].filter { $0.appAccountToken == nil || $0.appAccountToken == userToken }
    }

    // MARK: Steps

    /// Runs one step: its action, then waits until the store delivered what it caused (the notifications of `app`,
    /// the story's app unless named), and checks how the server answered each delivery (2xx within `answerWithin`;
    /// forged ones and the relay's own faults aside).
    @discardableResult
    func step<T>(_ title: String, app: CheckStore? = nil, _ action: () async throws -> T) async throws -> T {
        let before = relay.deliveries.count
        var record = StepRecord(title: title)
        defer { steps.append(record) }
        do {
            let value = try await action()
            try await settle(app ?? store)
            record.deliveries = deliveries(since: before)
            if let bad = record.deliveries.first(where: { !$0.forged && $0.handling != "down" && !answeredWell($0) }) {
                throw StoryFailure(
                    "the server answered \(bad.summary) (expected 2xx within \(Self.format(answerWithin)) s)")
            }
            return value
        } catch {
            record.deliveries = deliveries(since: before)
            record.failure = "\(error)"
            throw error
        }
    }

    private func answeredWell(_ delivery: Delivery) -> Bool {
        guard let status = delivery.status else { return false }
        return (200..<300).contains(status) && Double(delivery.milliseconds) <= answerWithin * 1000
    }

    /// Waits until the store has tried every notification it made for `app` at least once (the relay answers only
    /// after the server did), within 30 s.
    func settle(_ app: CheckStore) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            let waiting = try await app.notifications().filter { $0.state == "pending" && $0.attempts == 0 }
            if waiting.isEmpty { return }
            if ContinuousClock.now > deadline {
                throw CheckError(
                    "The store did not deliver \(waiting.map(\.notificationType.rawValue).joined(separator: ", ")) within 30 s."
                )
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Checks the probe against what the user should hold now; `entitlements` maps a name to whether it must be
    /// active, `balances` a name to its amount.
    func expect(_ title: String, entitlements: [String: Bool] = [:], balances: [String: Int64] = [:]) async throws {
        let now = try await store.clock().now
        guard let shown = try await server.probe(user, now: now) else {
            notChecked.append(title)
            steps.append(StepRecord(title: "\(title): not checked (no probe in the check file)"))
            return
        }
        var wrong: [String] = []
        for (name, active) in entitlements.sorted(by: { $0.key < $1.key })
        where shown.entitlements.contains(name) != active {
            wrong.append(
                "\(name) \(active ? "active" : "not active") expected, the probe showed it \(active ? "not active" : "active")"
            )
        }
        for (name, amount) in balances.sorted(by: { $0.key < $1.key }) where (shown.balances[name] ?? 0) != amount {
            wrong.append("\(name) \(amount) expected, the probe showed \(shown.balances[name] ?? 0)")
        }
        var record = StepRecord(title: title)
        record.probe = shown
        if !wrong.isEmpty {
            record.failure = wrong.joined(separator: "; ")
            steps.append(record)
            throw StoryFailure("\(title): \(wrong.joined(separator: "; "))")
        }
        steps.append(record)
    }

    // MARK: What the App Store does

    func product(_ grant: CheckFile.ProductGrant?, _ kind: String) throws -> CheckFile.ProductGrant {
        guard let grant else { throw NotMade("the check file names no \(kind) the store sells") }
        return grant
    }

    /// The tester buys `grant` (with the story's app account token), as the app's purchase would.
    func buy(
        _ grant: CheckFile.ProductGrant, quantity: Int = 1, offerCode: String? = nil, winBackOfferId: String? = nil,
        discount: PaymentDiscount? = nil
    ) async throws -> StoryPurchase {
        try await step(
            "buy \(grant.productId)\(quantity > 1 ? " ×\(quantity)" : "")\(offerCode.map { " with offer code \($0)" } ?? "")\(winBackOfferId.map { " with win-back offer \($0)" } ?? "")\(discount.map { " with promotional offer \($0.identifier)" } ?? "")"
        ) {
            let entry = try await store.purchase(
                TestPurchaseRequest(
                    tester: tester, productId: grant.productId, quantity: quantity, offerCode: offerCode,
                    idempotencyKey: random.uuid().uuidString, appAccountToken: user, winBackOfferId: winBackOfferId,
                    paymentDiscount: discount))
            guard let transaction = entry.transaction else {
                throw CheckError(
                    "The store did not charge \(grant.productId): \(entry.error?.message ?? entry.state.rawValue).")
            }
            return StoryPurchase(
                productId: grant.productId, transactionId: transaction.transactionId,
                originalTransactionId: transaction.originalTransactionId,
                signedTransaction: transaction.signedTransaction)
        }
    }

    /// The app tells the server about `purchase` through the check file's purchase call.
    func report(_ purchase: StoryPurchase) async throws {
        guard let call = server.file.purchaseCall else { throw NotMade("the check file has no purchaseCall") }
        try await step("the app reports transaction \(purchase.transactionId) to the server") {
            let receipt = call.body?.contains("{{receiptData}}") == true ? try await store.receipt(tester: tester) : ""
            try await server.perform(
                call,
                values: try await timeValues().merging([
                    "signedTransaction": purchase.signedTransaction, "transactionId": purchase.transactionId,
                    "originalTransactionId": purchase.originalTransactionId, "productId": purchase.productId,
                    "appAccountToken": user.uuidString.lowercased(), "receiptData": receipt,
                ]) { $1 }, what: "the purchase call")
        }
    }

    /// The store's sandbox time for call templates: `{{now}}` (ISO 8601) and `{{nowMilliseconds}}`.
    func timeValues() async throws -> [String: String] {
        let now = try await store.clock().now
        // Whole seconds, rounded up: ISO 8601 readers often refuse fractions, and an end of a range must not fall
        // before the latest event.
        let seconds = (now + 999) / 1000
        let text = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
        return ["now": text, "nowMilliseconds": String(now)]
    }

    /// `refund`, `reverse-refund`, `revoke` or `request-refund` of a transaction.
    func transaction(_ purchase: StoryPurchase, _ action: String, body: String = "{}") async throws {
        try await step("\(action) transaction \(purchase.transactionId)") {
            try await store.refund(purchase.transactionId, action: action, body: Data(body.utf8))
        }
    }

    /// A subscription test control (`auto-renew-off`, `fail-renewal`, `recover`, `price-increase`, …).
    func subscription(_ purchase: StoryPurchase, _ action: String, productId: String? = nil) async throws {
        try await step("\(action)\(productId.map { " \($0)" } ?? "") on subscription \(purchase.originalTransactionId)")
        {
            try await store.subscription(
                purchase.originalTransactionId, TestSubscriptionRequest(action: action, productId: productId))
        }
    }

    /// Moves the sandbox clock just past the subscription's expiry (or its grace period's end): the store renews,
    /// retries billing or expires it, and notifies.
    func passExpiry(of purchase: StoryPurchase, grace: Bool = false) async throws {
        guard
            let info = try await store.subscriptions(tester: tester).first(where: {
                $0.originalTransactionId == purchase.originalTransactionId
            })
        else { throw CheckError("The store shows no subscription \(purchase.originalTransactionId).") }
        let end = grace ? (info.gracePeriodExpiresDate ?? info.expiresDate) : info.expiresDate
        try await step(grace ? "the grace period ends" : "the period ends (\(info.productId))") {
            try await advance(to: end + 1000)
        }
    }

    /// Moves the sandbox clock forward by `amount` (`1h`, `12h`).
    func advance(by amount: String) async throws {
        try await step("the sandbox clock moves \(amount)") {
            try await store.clock(TestClockRequest(action: "advance", by: .text(amount)))
        }
    }

    private func advance(to milliseconds: Int64) async throws {
        let now = try await store.clock().now
        guard milliseconds > now else { return }
        try await store.clock(TestClockRequest(action: "set", to: .number(Double(milliseconds))))
    }

    /// Waits (at most `seconds`, on the store's state) for the server to send consumption information for
    /// `purchase`; one that did not is noted, not failed: Apple asks for it within 12 hours but decides without it.
    func awaitConsumptionInformation(_ purchase: StoryPurchase, seconds: Int = 5) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if let report = try await store.consumptionReport(purchase.transactionId) {
                note("the server sent consumption information (v\(report.apiVersion)): \(report.body)")
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        let text =
            "the server sent no consumption information for transaction \(purchase.transactionId) within \(seconds) s "
            + "(Apple asks for it within 12 hours of CONSUMPTION_REQUEST, and decides the refund without it otherwise)"
        note(text)
        notes.append(text)
    }

    /// The story's title for a step no HTTP call makes (a relay change).
    func note(_ title: String) { steps.append(StepRecord(title: title)) }

    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(format: "%.1f", seconds)
    }
}

extension SplitMix64 {
    /// A version 4 UUID from the generator, so a seed replays the same users.
    mutating func uuid() -> UUID {
        let high = next()
        let low = next()
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<8 {
            bytes[index] = UInt8(truncatingIfNeeded: high >> (8 * index))
            bytes[8 + index] = UInt8(truncatingIfNeeded: low >> (8 * index))
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}
