import ArgumentParser
import AsyncHTTPClient
import Foundation
import KioskCore
import KioskProtocol
import KioskSQL
import KioskTestSupport
import KioskTesting
import Logging
import Synchronization

/// What a campaign runs with.
struct CampaignSettings: Sendable {
    var trials: Int
    var seed: UInt64
    var customers: Int
    var kiosk: URL
    var coinShop: URL
    var directory: URL
    /// The store's and the merchant's databases: PostgreSQL schemas of their own under this URL; nil for SQLite
    /// files in their data folders.
    var postgres: (store: String, merchant: String)?
    /// Power cuts of the machine the store and the merchant run on, instead of kills of one process.
    var powerCut: PowerCutSettings?
    /// A broken promise planted in the merchant's ledger before a last check, which must find it.
    var plant: Plant?
}

/// What `--plant` breaks in the merchant's ledger, to prove the checks catch it.
enum Plant: String, Sendable, CaseIterable, ExpressibleByArgument {
    /// A granted purchase's grant and history removed.
    case lostGrant = "lost-grant"
    /// A granted purchase's grant line written twice.
    case duplicateGrant = "duplicate-grant"
}

/// The kill campaign: a store, a merchant and the example app as real processes, and trial after trial one of
/// them killed with SIGKILL somewhere in a purchase, a renewal, a refund or a notification's retry; the killed one
/// is started again, the system settles, and every invariant is checked against the store's truth.
///
/// In a power-cut campaign, each trial cuts the power of the machine the store and the merchant run on instead
/// (their data on a LazyFS mount, ``Machine``): both die, what they never fsynced is lost, they start again, and
/// every purchase the store answered and every grant the merchant acknowledged must still be there.
final class Campaign: @unchecked Sendable {
    static let bundleId = "com.example.chaos"
    static let coins = "\(bundleId).coins"
    static let removeAds = "\(bundleId).remove_ads"
    static let password = "sandbox-pass"
    static let adminToken = "kiosk_chaos_admin_token_0123456789"
    /// A sandbox month for the campaign's testers (`renewalRate` 1h), so one clock advance renews once and makes
    /// a notification's first retry due.
    static let month = "1h"

    let settings: CampaignSettings
    let plan: CampaignPlan
    private let http: HTTPClient
    private let store: Server
    private let merchant: Server
    private let controls: Endpoint
    /// Where the store sends the app's notifications: the merchant, or (while a notification step sets up its
    /// failed delivery) a path of the merchant that answers 404.
    private var notificationURL: String
    private var refusingNotificationURL: String
    private let machine: Machine?
    private let acknowledged = Acknowledged()
    /// What the last power cut's check found lost.
    private var lostInCut: [Violation] = []
    private var invariants: Invariants!
    private var customers: [Customer] = []
    private var app: App!
    private var windows = Windows()
    /// How many times the store had started when the system last settled.
    private var storeStartsSettled = 1
    private(set) var report: Report
    private let runningApps = RunningApps()

    init(_ settings: CampaignSettings) throws {
        self.settings = settings
        plan = CampaignPlan(seed: settings.seed)
        report = Report(
            seed: settings.seed, engine: settings.postgres == nil ? "SQLite" : "PostgreSQL", planned: settings.trials,
            powerCut: settings.powerCut != nil)
        var configuration = HTTPClient.Configuration()
        // A server that is down refuses at once instead of being retried until the deadline.
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(10)
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let folder = settings.directory
        machine = settings.powerCut.map { Machine($0, directory: folder) }
        // What the servers keep: on the machine's mount in a power-cut campaign.
        let data = machine?.root ?? folder
        store = Server(
            party: .store, port: try freeLoopbackPort(), command: ["serve"],
            arguments: [
                "--data-dir", data.appendingPathComponent("store").path, "--admin-token", Self.adminToken,
                "--log-level", "warning",
                // Reconciliation reads whole histories through the Server API after every trial.
                "--server-api-rate-limit", "100000",
            ] + (settings.postgres.map { ["--database", $0.store, "--database-pool-size", "3"] } ?? []),
            log: folder.appendingPathComponent("store.log"), executable: settings.kiosk)
        merchant = Server(
            party: .merchant, port: try freeLoopbackPort(), command: ["merchant", "serve"],
            arguments: [
                "--config", data.appendingPathComponent("merchant/merchant.json").path, "--log-level", "warning",
            ] + (settings.postgres.map { ["--database", $0.merchant, "--database-pool-size", "2"] } ?? []),
            log: folder.appendingPathComponent("merchant.log"), executable: settings.kiosk)
        controls = Endpoint(base: store.url, token: Self.adminToken, http: http)
        notificationURL = "\(merchant.url)\(MerchantPaths.notifications)"
        refusingNotificationURL = "\(merchant.url)\(MerchantPaths.notifications)-paused"
    }

    /// Sets everything up, runs the trials, and stops the servers; `progress` hears a line per trial.
    func run(progress: @escaping @Sendable (String) -> Void) async throws -> Report {
        do {
            try FileManager.default.createDirectory(at: settings.directory, withIntermediateDirectories: true)
            try await machine?.start()
            try await start()
            try await withKillingProxy(to: store.url, routes: ["/merchant/": merchant.url], killAt: nil) { proxy in
                self.app = App(
                    executable: self.settings.coinShop, proxy: proxy, bundleId: Self.bundleId,
                    password: Self.password, running: self.runningApps)
                if self.machine != nil {
                    // The proxy hears every answer: the store's to the app, the merchant's to the app and (its
                    // notifications sent through the proxy too) to the store.
                    let acknowledged = self.acknowledged
                    proxy.observe { acknowledged.observe(method: $0, path: $1, request: $2, status: $3, answer: $4) }
                    self.notificationURL = "\(proxy.url)\(MerchantPaths.notifications)"
                    self.refusingNotificationURL = "\(proxy.url)\(MerchantPaths.notifications)-paused"
                    try await self.setNotificationURL(self.notificationURL)
                }
                try await self.warmUp(progress: progress)
                for index in 0..<self.settings.trials {
                    progress(try await self.trial(index))
                }
                if let plant = self.settings.plant { progress(try await self.plant(plant)) }
            }
        } catch {
            await stop()
            throw error
        }
        await stop()
        report.acknowledged(purchases: acknowledged.purchases.count, grants: acknowledged.grants.count)
        return report
    }

    /// Kills every process the campaign started, at once (it was stopped by a signal).
    func abandon() {
        runningApps.killAll()
        store.kill()
        merchant.kill()
        machine?.abandon()
    }

    /// Stops both servers gracefully, and the campaign's HTTP client.
    private func stop() async {
        try? await merchant.stop()
        try? await store.stop()
        await machine?.stop()
        try? await http.shutdown()
    }

    // MARK: Setting up

    /// The store with the shop (coins, an ad-free subscription, testers on a one-hour month, the clock frozen),
    /// the merchant configured by `kiosk merchant init`, a user token per customer.
    private func start() async throws {
        try await store.start()
        let localized = { (name: String) in [["locale": "en_US", "displayName": name, "description": "\(name)."]] }
        try await controls.perform(.POST, AdminRoutes.apps.path(), json: ["bundleId": Self.bundleId, "name": "Chaos"])
        try await controls.perform(
            .POST, AdminRoutes.subscriptionGroups.path(Self.bundleId),
            json: ["referenceName": "Ad-free", "localizations": [["locale": "en-US", "name": "Ad-free"]]])
        try await controls.perform(
            .POST, AdminRoutes.products.path(Self.bundleId),
            json: [
                "productId": Self.coins, "type": "consumable", "referenceName": "Coins", "pricing": ["tier": 1],
                "localizations": localized("Coins"),
            ])
        try await controls.perform(
            .POST, AdminRoutes.products.path(Self.bundleId),
            json: [
                "productId": Self.removeAds, "type": "auto_renewable", "referenceName": "Ad-free",
                "pricing": ["tier": 2], "subscription": ["group": "Ad-free", "level": 1], "duration": "P1M",
                "localizations": localized("Ad-free"),
            ])
        try await controls.perform(.POST, AdminRoutes.acceptPaidAppsAgreement.path(), json: SampleAgreement.json)
        for number in 0..<settings.customers {
            try await controls.perform(
                .POST, AdminRoutes.testers.path(),
                json: [
                    "email": "t\(number)@chaos.example", "password": Self.password, "storefront": "USA",
                    "renewalRate": Self.month,
                ])
        }
        try await controls.perform(.POST, TestControlRoutes.clock.path(), json: ["action": "freeze"])

        let configuration = (machine?.root ?? settings.directory).appendingPathComponent("merchant/merchant.json")
        try FileManager.default.createDirectory(
            at: configuration.deletingLastPathComponent(), withIntermediateDirectories: true)
        let initialized = try await kiosk([
            "merchant", "init", "--app", Self.bundleId, "--output", configuration.path, "--notification-url",
            notificationURL, "--server", store.url, "--token", Self.adminToken, "--json",
        ])
        struct Initialized: Decodable { var adminToken: String }
        let merchantToken = try JSONDecoder().decode(Initialized.self, from: Data(initialized.utf8)).adminToken
        try await merchant.start()
        for number in 0..<settings.customers {
            let token = try await kiosk([
                "merchant", "token", "--config", configuration.path, "--user", "u\(number)",
            ]).trimmingCharacters(in: .whitespacesAndNewlines)
            customers.append(
                Customer(
                    tester: "t\(number)@chaos.example", userId: "u\(number)", userToken: token,
                    device: settings.directory.appendingPathComponent("phone-\(number)")))
        }
        invariants = Invariants(
            bundleId: Self.bundleId, coins: Self.coins, coinsPerUnit: 1, store: controls,
            merchant: Endpoint(base: merchant.url, token: merchantToken, http: http))
    }

    /// Runs `kiosk <arguments>` and returns what it printed; it must succeed.
    private func kiosk(_ arguments: [String]) async throws -> String {
        let run = try await KioskProcess.run(arguments, executable: settings.kiosk)
        guard run.status == 0 else {
            throw ChaosError("kiosk \(arguments.prefix(2).joined(separator: " ")) failed: \(run.stderr)\(run.stdout)")
        }
        return run.stdout
    }

    /// Each customer buys coins (signing the phone in), the first one subscribes, and each step runs once with no
    /// kill: the system works before anything is killed, and the steps' durations and the app's requests are
    /// measured for the kills to aim within.
    private func warmUp(progress: @Sendable (String) -> Void) async throws {
        for customer in customers { try await buy(["buy", "coins"], for: customer) }
        try await buy(["buy", "remove-ads"], for: customers[0])
        var random = SplitMix64(seed: settings.seed, stream: 0, salt: 0x3A7)
        for step in Step.allCases {
            let action = try await prepare(step, for: customers[0], random: &random)
            let run = try await perform(action, kill: nil)
            windows.measured(step, run)
            try await settle(action.customer)
        }
        let violations = try await invariants.check(customers)
        guard violations.isEmpty else {
            throw ChaosError(
                "Before any kill, the checks fail:\n" + violations.map { "  \($0)" }.joined(separator: "\n"))
        }
        progress(
            "warmed up: " + Step.allCases.map { "\($0.rawValue) \(windows.describe($0))" }.joined(separator: ", "))
    }

    // MARK: Trials

    /// Runs trial `index` and answers its progress line.
    private func trial(_ index: Int) async throws -> String {
        let trial = machine == nil ? plan.trial(index) : plan.powerCut(index)
        var random = plan.random(forTrial: index)
        let customer = customers[Int.random(in: 0..<customers.count, using: &random)]
        var phase = ContinuousClock.now
        func timed(_ name: Report.Phase) {
            report.spent(ContinuousClock.now - phase, on: name)
            phase = ContinuousClock.now
        }
        lostInCut = []
        var action = try await prepare(trial.step, for: customer, random: &random)
        var aiming = plan.random(forTrial: index, purpose: .kill)
        var kill = aim(trial, action, random: &aiming)
        try await arm(kill)
        timed(.prepare)
        var run = try await perform(action, kill: kill)
        if !run.wasCutShort { windows.measured(trial.step, run) }
        timed(.step)
        // A kill that missed its step (the step ended first, or never reached the crash point) is aimed again at
        // the step run anew; one that still misses after that is counted as missed, and fails the campaign.
        var reaims = 0
        while !run.wasCutShort && reaims < Self.reaims {
            reaims += 1
            try await settle(customer)
            action = try await prepare(trial.step, for: customer, random: &random)
            kill = kill.reaimed(after: run)
            try await arm(kill)
            run = try await perform(action, kill: kill)
            timed(.step)
        }
        try await settle(customer)
        timed(.settle)
        var violations = try await invariants.check(customers)
        timed(.check)
        let lost = lostInCut
        var resettles = 0
        while !violations.isEmpty && resettles < 2 {
            // Something may still be on its way (an app's last request, a notification): settle everyone once
            // more before calling it a violation.
            resettles += 1
            try await settle(nil)
            violations = try await invariants.check(customers)
            timed(.check)
        }
        violations = lost + violations
        let outcome = run.outcome ?? .missed("no kill")
        let new = report.record(
            trial, outcome, crashPoint: kill.crashPoint, reaims: reaims, violations: violations, resettles: resettles)
        var line =
            "[\(index + 1)/\(settings.trials)] \(trial.party.rawValue) × \(trial.step.rawValue), \(kill.description): "
            + "\(outcome.description); \(customer.userId), \(action.detail)"
        if reaims > 0 { line += "; aimed \(reaims + 1) times" }
        if resettles > 0 { line += "; settled \(resettles + 1) times" }
        if !violations.isEmpty {
            line += "\n  VIOLATIONS in trial \(index + 1) of seed \(settings.seed):"
            for violation in violations {
                line += "\n    \(violation)\(new.contains(violation) ? "" : " (seen before)")"
            }
        }
        return line
    }

    private func server(_ party: Party) -> Server { party == .store ? store : merchant }

    /// How many times a kill that missed its step is aimed again.
    static let reaims = 3

    /// Starts the server a crash-point kill names armed with its point.
    private func arm(_ kill: Kill) async throws {
        guard case .crashPoint(let point) = kill.how else { return }
        let server = server(kill.party)
        try await server.restart(crashAt: point)
        app.proxy.forward(prefix: server.routePrefix, to: server.url)
    }

    /// Breaks the merchant's ledger as `plant` says (on the first customer's first unrefunded coins) and checks
    /// once more; answers the progress line. The checks must find exactly the planted violation.
    private func plant(_ plant: Plant) async throws -> String {
        let customer = customers[0]
        let target = try await invariants.storeTransactions(of: [customer])[customer, default: []]
            .filter { !$0.revoked && $0.productId == Self.coins }.map(\.id).sorted().first
        guard let target else { throw ChaosError("nothing to plant a \(plant.rawValue) on") }
        let url =
            settings.postgres?.merchant
            ?? "sqlite://"
            + (machine?.root ?? settings.directory).appendingPathComponent("merchant/merchant.sqlite").path
        var logger = Logger(label: "kiosk-chaos-plant")
        logger.logLevel = .warning
        let database = try await DatabaseOpener.open(url: url, migrations: [], poolSize: 1, logger: logger)
        do {
            try await database.withSession { session in
                switch plant {
                case .lostGrant:
                    try await session.run("DELETE FROM ledger_events WHERE transaction_id = \(bind: target)")
                    try await session.run("DELETE FROM grants WHERE transaction_id = \(bind: target)")
                case .duplicateGrant:
                    try await session.run(
                        """
                        INSERT INTO ledger_events
                            (user_id, at, environment, transaction_id, product_id, kind, source, detail, state_change)
                        SELECT user_id, at, environment, transaction_id, product_id, kind, source, detail, state_change
                        FROM ledger_events WHERE transaction_id = \(bind: target) AND kind = 'granted'
                        """)
                }
            }
            try await database.close()
        } catch {
            try? await database.close()
            throw error
        }
        let violations = try await invariants.check(customers)
        report.found(violations)
        return "planted a \(plant.rawValue) on \(target); the checks found:\n"
            + violations.map { "    \($0)" }.joined(separator: "\n")
    }

    /// A step about to run: what the app does meanwhile, and the campaign's own part (a clock advance, a refund).
    struct Action: Sendable {
        var step: Step
        var customer: Customer
        var appCommand: [String]
        var own: (@Sendable () async throws -> Void)?
        var detail: String
        /// How many times the merchant will take a notification in this step, at least.
        var notifications: Int
    }

    /// Brings about what `step` needs (a subscription to renew, a purchase to refund, a notification that failed
    /// once), with nothing killed, and answers the step.
    private func prepare(_ step: Step, for customer: Customer, random: inout SplitMix64) async throws -> Action {
        switch step {
        case .purchase:
            let wantsSubscription = Int.random(in: 0..<3, using: &random) == 0
            let quantity = Int.random(in: 1...3, using: &random)
            if wantsSubscription, try await !isSubscribed(customer) {
                return Action(
                    step: step, customer: customer, appCommand: ["buy", "remove-ads"], detail: "subscribes",
                    notifications: 1)
            }
            return Action(
                step: step, customer: customer, appCommand: ["buy", "coins", "--quantity", String(quantity)],
                detail: "buys \(quantity) coins", notifications: 1)
        case .renewal:
            var subscribed = 0
            for someone in customers {
                if try await isSubscribed(someone) { subscribed += 1 }
            }
            if subscribed == 0 {
                try await buy(["buy", "remove-ads"], for: customer)
                subscribed = 1
            }
            let controls = controls
            return Action(
                step: step, customer: customer, appCommand: ["products"],
                own: { try await Self.advanceClock(controls) }, detail: "\(subscribed) subscription(s) renew",
                notifications: subscribed)
        case .refund:
            let target = try await refundable(for: customer, random: &random)
            let controls = controls
            return Action(
                step: step, customer: customer, appCommand: ["products"],
                own: { try await Self.refund(target, controls) }, detail: "refund of \(target)", notifications: 1)
        case .notification:
            let target = try await refundable(for: customer, random: &random)
            // The refund's first delivery fails (the URL answers 404); the step is its retry.
            try await setNotificationURL(refusingNotificationURL)
            try await Self.refund(target, controls)
            try await setNotificationURL(notificationURL)
            let controls = controls
            return Action(
                step: step, customer: customer, appCommand: ["products"],
                own: { try await Self.advanceClock(controls) }, detail: "retry of the refund of \(target)",
                notifications: 1)
        }
    }

    /// An unkilled run of the app that must succeed (tried up to three times, as a user taps again when a
    /// server just started again answered with an error), then a settled system.
    private func buy(_ command: [String], for customer: Customer) async throws {
        var failures: [String] = []
        while failures.count < 3 {
            let run = await app.run(command, for: customer, process: AppProcess())
            if let result = run.result, result.status == 0 {
                try await settle(customer)
                return
            }
            failures.append(run.result.map { $0.stdout + $0.stderr } ?? "it did not start")
            try await settle(customer)
        }
        throw ChaosError(
            "coin-shop \(command.joined(separator: " ")) for \(customer.tester) failed three times with no kill:\n"
                + failures.joined(separator: "\n"))
    }

    private func isSubscribed(_ customer: Customer) async throws -> Bool {
        let listed = try await controls.call(
            .GET, TestControlRoutes.subscriptions.path(Self.bundleId, query: ["tester": customer.tester]),
            as: TestSubscriptionsResponse.self)
        // Active, in billing retry or in a grace period: buying the product again is refused.
        return listed.subscriptions.contains { [1, 3, 4].contains($0.status) }
    }

    /// One of the customer's purchases that is not refunded yet (a new one if there is none).
    private func refundable(for customer: Customer, random: inout SplitMix64) async throws -> String {
        var candidates = try await invariants.storeTransactions(of: [customer])[customer, default: []]
            .filter { !$0.revoked }
        if candidates.isEmpty {
            try await buy(["buy", "coins"], for: customer)
            candidates = try await invariants.storeTransactions(of: [customer])[customer, default: []]
                .filter { !$0.revoked }
        }
        guard !candidates.isEmpty else { throw ChaosError("\(customer.tester) has nothing to refund") }
        return candidates[Int.random(in: 0..<candidates.count, using: &random)].id
    }

    private func setNotificationURL(_ url: String) async throws {
        try await controls.perform(
            .PATCH, AdminRoutes.app.path(Self.bundleId), json: ["sandboxNotificationURLs": [url]])
    }

    /// Moves the sandbox clock a month (of the testers' rate): due renewals happen and due notifications are sent
    /// before the store answers.
    private static func advanceClock(_ controls: Endpoint) async throws {
        try await controls.perform(.POST, TestControlRoutes.clock.path(), json: ["action": "advance", "by": month])
    }

    /// Refunds `transaction` and waits until the store made the first attempt to deliver its notification.
    private static func refund(_ transaction: String, _ controls: Endpoint) async throws {
        let refunded = try await controls.call(
            .POST, TestControlRoutes.transactionAction.path(bundleId, transaction, "refund"), json: [:],
            as: TestRevocationResponse.self)
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            let listed = try await controls.call(
                .GET, TestControlRoutes.notifications.path(bundleId), as: TestNotificationsResponse.self)
            let sent = listed.notifications.first { $0.notificationUUID == refunded.notificationUUID }
            if let sent, sent.attempts > 0 || sent.state != "pending" { return }
            guard ContinuousClock.now < deadline else {
                throw ChaosError("the refund of \(transaction) was never attempted to be delivered")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    // MARK: Kills

    /// How a trial kills.
    struct Kill: Sendable {
        enum How: Sendable {
            /// The server is started armed with `KIOSK_CRASH_AT` (`step` or `step#n`).
            case crashPoint(String)
            /// The proxy kills the app at one of its requests.
            case request(RequestKill)
            case delay(Duration)
            /// The machine's power is cut.
            case powerCut(Duration)
        }
        var party: Party
        var how: How

        /// The crash point's name (without `#n`), for a crash-point kill.
        var crashPoint: String? {
            guard case .crashPoint(let point) = how else { return nil }
            return point.split(separator: "#").first.map(String.init)
        }

        /// Aimed again after it missed `run`: half the delay, at most the app's last request, the same crash point.
        func reaimed(after run: StepRun) -> Kill {
            var kill = self
            switch how {
            case .delay(let delay): kill.how = .delay(delay / 2)
            case .powerCut(let delay): kill.how = .powerCut(delay / 2)
            case .request(var request):
                request.number = min(request.number, max(1, run.app.requests))
                kill.how = .request(request)
            case .crashPoint: break
            }
            return kill
        }

        var description: String {
            switch how {
            case .crashPoint(let point): "crash point \(point)"
            case .request(let request): "at its \(request.description)"
            case .delay(let delay): "after \(milliseconds(delay))"
            case .powerCut(let delay): "power cut after \(milliseconds(delay))"
            }
        }
    }

    /// Where in `action` the trial's process dies: a named point, or a random moment within the step's measured
    /// duration.
    private func aim(_ trial: TrialPlan, _ action: Action, random: inout SplitMix64) -> Kill {
        let fraction = Double.random(in: 0..<1, using: &random)
        let number = Int.random(in: 1...max(1, windows.requests(trial.step)), using: &random)
        let beforeForwarding = Bool.random(using: &random)
        let atDelivery = Bool.random(using: &random)
        let time = Int.random(in: 1...max(1, action.notifications), using: &random)
        switch (trial.party, trial.mechanism) {
        case (_, .powerCut):
            return Kill(party: .machine, how: .powerCut(windows.step(trial.step) * fraction))
        case (.app, .point):
            let moment: KillingProxy.Moment = beforeForwarding ? .beforeForwarding : .afterAnswer
            return Kill(party: .app, how: .request(RequestKill(number: number, moment: moment)))
        case (.app, .delay):
            return Kill(party: .app, how: .delay(windows.app(trial.step) * fraction))
        case (_, .delay):
            return Kill(party: trial.party, how: .delay(windows.step(trial.step) * fraction))
        case (.store, .point):
            let point =
                switch trial.step {
                case .purchase: CrashPoint.paymentCommitted
                case .renewal: CrashPoint.renewalBatchCommitted
                case .refund, .notification: CrashPoint.notificationDelivered
                }
            return Kill(party: .store, how: .crashPoint(point.rawValue))
        case (_, .point):  // the merchant: the machine only ever has its power cut
            if trial.step == .purchase && atDelivery {
                return Kill(party: .merchant, how: .crashPoint(CrashPoint.deliveryCommitted.rawValue))
            }
            return Kill(party: .merchant, how: .crashPoint("\(CrashPoint.notificationCommitted.rawValue)#\(time)"))
        }
    }

    /// What running a step did.
    struct StepRun: Sendable {
        var app: App.Run
        /// From the start until both the app and the campaign's own part ended.
        var duration: Duration
        var outcome: KillOutcome?

        /// Whether the kill cut the step short, so its duration measures the kill, not the step.
        var wasCutShort: Bool {
            if case .during = outcome { return true }
            return false
        }
    }

    /// Runs the step (the app and the campaign's own part together) and, with `kill`, kills its process; a
    /// killed server is started again at once, as a supervisor would.
    private func perform(_ action: Action, kill: Kill?) async throws -> StepRun {
        let process = AppProcess()
        let done = Latch()
        let started = ContinuousClock.now
        var requestKill: RequestKill?
        if case .request(let request) = kill?.how { requestKill = request }
        async let appRun = app.run(action.appCommand, for: action.customer, process: process, kill: requestKill)
        async let ownPart: Void = Self.ownPart(of: action)
        async let killed: KillOutcome? = execute(kill, process: process, done: done, started: started)
        let (run, _) = await (appRun, ownPart)
        let duration = ContinuousClock.now - started
        done.set()
        var outcome = try await killed
        if case .request(let request) = kill?.how {
            outcome =
                app.proxy.killedAt.map { .during("\(request.description): \($0)") }
                ?? .missed("the app made fewer than \(request.number) requests")
        }
        return StepRun(app: run, duration: duration, outcome: outcome)
    }

    /// The campaign's own part of a step; a kill may make it fail, which ends it.
    private static func ownPart(of action: Action) async {
        try? await action.own?()
    }

    /// Carries out a delay or crash-point kill while the step runs (`done` says when it ended), and starts a
    /// killed server again. A crash point the step did not reach is replaced by a kill once the step ended.
    private func execute(
        _ kill: Kill?, process: AppProcess, done: Latch, started: ContinuousClock.Instant
    ) async throws -> KillOutcome? {
        guard let kill else { return nil }
        switch kill.how {
        case .request:
            return nil
        case .delay(let delay):
            try await Task.sleep(until: started + delay, clock: .continuous)
            let during = !done.isSet
            let how = "after \(milliseconds(delay))"
            if kill.party == .app {
                return try await process.kill() ? .during(how) : .missed(how)
            }
            let server = server(kill.party)
            server.kill()
            try await recover(server)
            return during ? .during(how) : .after(how)
        case .powerCut(let delay):
            try await Task.sleep(until: started + delay, clock: .continuous)
            let during = !done.isSet
            let how = "power cut after \(milliseconds(delay))"
            let discarded = try await powerCut()
            return during ? .during("\(how); \(discarded)") : .after("\(how); \(discarded)")
        case .crashPoint(let point):
            let server = server(kill.party)
            while server.isRunning && !done.isSet { try await Task.sleep(for: .milliseconds(5)) }
            if server.isRunning {
                server.kill()
                try await recover(server)
                return .after("\(point) not reached")
            }
            try await recover(server)
            return .during("at \(point)")
        }
    }

    /// Cuts the machine's power: SIGKILL to the store, the merchant and the database at once, what they never
    /// fsynced discarded, all started again; then, before any request reaches them (the proxy holds the app's and
    /// the store's notifications), checks that every acknowledged purchase and grant survived. Answers what the
    /// layer discarded.
    private func powerCut() async throws -> String {
        guard let machine else { throw ChaosError("a power cut with no machine") }
        app.proxy.hold()
        store.kill()
        merchant.kill()
        try await machine.killDatabase()
        try await store.waitUntilDead()
        try await merchant.waitUntilDead()
        let discarded = try await machine.cut()
        try await store.start()
        try await merchant.start()
        lostInCut += try await invariants.survived(acknowledged, customers)
        for server in [store, merchant] { app.proxy.forward(prefix: server.routePrefix, to: server.url) }
        app.proxy.release()
        return discarded
    }

    /// Starts a killed server again on its port and data, and lets the app's held requests through to it.
    private func recover(_ server: Server) async throws {
        try await server.waitUntilDead()
        try await server.start()
        app.proxy.forward(prefix: server.routePrefix, to: server.url)
    }

    // MARK: Settling

    /// Lets everything finish that a kill interrupted: the app's last requests reach their servers, a restarted
    /// store's first scheduler pass ends, the customer's app is opened again until the store shows none of their
    /// purchases unfinished (each launch delivers what is pending to the merchant and finishes it), and the store's
    /// notifications are sent again until each one reached the merchant. With `customer` nil, every customer's
    /// app is opened.
    private func settle(_ customer: Customer?) async throws {
        try await waitUntilProxyQuiet()
        if store.starts != storeStartsSettled {
            // A store started again finishes what fell due at its first scheduler pass; a clock change waits for
            // that pass, and does (and notifies) what is due by then. Otherwise the sandbox clock stays where it
            // is, so a purchase and its refund are often signed at the same instant, as a frozen clock signs them.
            try await controls.perform(.POST, TestControlRoutes.clock.path(), json: ["action": "advance", "by": "1s"])
            storeStartsSettled = store.starts
        }
        var open = Set(customer.map { [$0] } ?? customers)
        for _ in 0..<8 {
            for someone in customers where open.contains(someone) {
                _ = await app.run(["products"], for: someone, process: AppProcess())
            }
            try await waitUntilProxyQuiet()
            let truth = try await invariants.storeTransactions(of: customers)
            open = Set(customers.filter { truth[$0, default: []].contains { !$0.finished } })
            if open.isEmpty { break }
        }
        for _ in 0..<10 {
            let listed = try await controls.call(
                .GET, TestControlRoutes.notifications.path(Self.bundleId), as: TestNotificationsResponse.self)
            let undelivered = listed.notifications.filter { $0.state != "delivered" }
            if undelivered.isEmpty { return }
            for notification in undelivered {
                _ = try? await controls.send(
                    .POST,
                    TestControlRoutes.resendNotification.path(Self.bundleId, notification.notificationUUID))
            }
        }
    }

    /// Waits until every request the app sent through the proxy was answered.
    private func waitUntilProxyQuiet() async throws {
        let deadline = ContinuousClock.now + .seconds(120)
        while !app.proxy.isQuiet && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        guard app.proxy.isQuiet else { throw ChaosError("the app's requests were not answered within 120 s") }
    }
}

/// The measured durations the delay kills aim within, and the app's request counts the request kills choose from.
struct Windows: Sendable {
    private var steps: [Step: Duration] = [:]
    private var apps: [Step: Duration] = [:]
    private var requestCounts: [Step: Int] = [:]

    /// Takes in a step that ran to its end: a moving average of its duration; the shortest app run and the
    /// fewest requests one made, so a kill aimed within them finds the app still running.
    mutating func measured(_ step: Step, _ run: Campaign.StepRun) {
        steps[step] = steps[step].map { $0 * 0.7 + run.duration * 0.3 } ?? run.duration
        apps[step] = min(apps[step] ?? run.app.duration, run.app.duration)
        if run.app.requests > 0 { requestCounts[step] = min(requestCounts[step] ?? .max, run.app.requests) }
    }

    func step(_ step: Step) -> Duration { steps[step] ?? .seconds(1) }
    func app(_ step: Step) -> Duration { apps[step] ?? .seconds(1) }
    func requests(_ step: Step) -> Int { requestCounts[step] ?? 1 }

    func describe(_ step: Step) -> String {
        "\(milliseconds(self.step(step))) (app \(requests(step)) requests)"
    }
}

/// A latch one task sets and others read.
final class Latch: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}

/// `412 ms`.
func milliseconds(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    return "\(seconds * 1000 + attoseconds / 1_000_000_000_000_000) ms"
}
