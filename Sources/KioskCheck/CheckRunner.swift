import AsyncHTTPClient
import Foundation
import KioskCore
import KioskHTTPClient
import KioskProtocol

/// What one `kiosk check` run is asked to do.
public struct CheckOptions: Sendable {
    public var file: CheckFile
    /// The store's base URL and admin token.
    public var server: String
    public var token: String
    /// Only these stories (all when empty).
    public var storyNames: [String]
    /// A delivery fault laid on every life story (`duplicate`, `concurrent-duplicate`), or a fault story's name.
    public var fault: String?
    public var seed: UInt64
    /// Where `${NAME}` in headers is read from.
    public var environment: [String: String]

    public init(
        file: CheckFile, server: String, token: String, storyNames: [String], fault: String?, seed: UInt64,
        environment: [String: String]
    ) {
        self.file = file
        self.server = server.hasSuffix("/") ? String(server.dropLast()) : server
        self.token = token
        self.storyNames = storyNames
        self.fault = fault
        self.seed = seed
        self.environment = environment
    }
}

/// Plays the chosen stories against the developer's server through a running store, and judges each.
public enum CheckRunner {
    /// Every story's name, kind and what it asserts.
    public static var catalogue: [(name: String, kind: String, summary: String)] {
        stories.map { ($0.name, $0.kind.rawValue, $0.summary) }
    }

    /// The faults `--fault` takes.
    public static var faultNames: [String] {
        deliveryFaults.keys.sorted() + stories.filter { $0.kind == .fault }.map(\.name)
    }

    /// The stories `options` choose, in the order they are played; an unknown name is an error listing the known.
    static func chosen(_ options: CheckOptions) throws -> (stories: [Story], mode: RelayMode) {
        let known = Set(stories.map(\.name))
        if let unknown = options.storyNames.first(where: { !known.contains($0) }) {
            throw CheckError("There is no story '\(unknown)'. `kiosk check --list` lists them.")
        }
        var chosen = options.storyNames.isEmpty ? stories : stories.filter { options.storyNames.contains($0.name) }
        var mode = RelayMode.forward
        if let fault = options.fault {
            if let delivery = deliveryFaults[fault] {
                mode = delivery
                chosen = chosen.filter { $0.kind == .life }
            } else if let story = stories.first(where: { $0.name == fault && $0.kind == .fault }) {
                chosen = [story]
            } else {
                throw CheckError("There is no fault '\(fault)'. Use one of: \(faultNames.joined(separator: ", ")).")
            }
        }
        return (chosen, mode)
    }

    /// Runs the check; `progress` hears a line as each story starts and ends.
    public static func run(_ options: CheckOptions, progress: @escaping @Sendable (String) -> Void) async throws
        -> CheckReport
    {
        let (chosen, mode) = try chosen(options)
        // Every header's variables are read before anything in the store changes: a missing one stops here.
        for call in [options.file.probe, options.file.purchaseCall, options.file.reconcileCall].compactMap({ $0 }) {
            _ = try call.resolvedHeaders(options.environment)
        }
        let http = try JSONHTTPClient.makeHTTPClient(trusting: [], failFast: true)
        do {
            let report = try await run(chosen, mode: mode, options, http: http, progress: progress)
            try? await http.shutdown()
            return report
        } catch {
            try? await http.shutdown()
            throw error
        }
    }

    private static func run(
        _ chosen: [Story], mode: RelayMode, _ options: CheckOptions, http: HTTPClient,
        progress: @escaping @Sendable (String) -> Void
    ) async throws -> CheckReport {
        let started = ContinuousClock.now
        let client = JSONHTTPClient(http: http)
        let store = CheckStore(
            server: options.server, token: options.token, client: client, bundleId: options.file.bundleId)
        let app = try await store.appResource()
        let products = try await store.products()
        let sold = Set(products.map(\.productId))
        if let missing = options.file.products.first(where: { !sold.contains($0.productId) }) {
            throw CheckError(
                "The store does not sell \(missing.productId) in \(options.file.bundleId). Import the app's catalog or correct the check file."
            )
        }
        let catalog = CheckCatalog(file: options.file, store: products)
        let answerWithin = options.file.answerWithin ?? 5
        let relay = NotificationRelay(
            target: options.file.notificationURL, bundleId: options.file.bundleId, http: http,
            answerWithin: .milliseconds(Int64(answerWithin * 1000)))
        let server = ServerCalls(file: options.file, http: client, environment: options.environment)
        let clock = try await store.clock()
        if !clock.frozen { try await store.clock(TestClockRequest(action: "freeze")) }
        let runId = UUID().uuidString.prefix(8).lowercased()
        let results: [StoryResult]
        do {
            results = try await relay.serve { url in
                var results: [StoryResult] = []
                _ = try await store.updateApp(
                    AppUpdateBody(sandboxNotificationURLs: [url], sandboxNotificationRetries: true))
                for (index, story) in chosen.enumerated() {
                    progress("[\(index + 1)/\(chosen.count)] \(story.name) …")
                    let result = await play(
                        story, index: index, mode: story.kind == .life ? mode : .forward, store: store, relay: relay,
                        server: server, catalog: catalog, options: options, runId: String(runId),
                        answerWithin: answerWithin)
                    progress(
                        "[\(index + 1)/\(chosen.count)] \(story.name): \(result.result.rawValue) (\(StoryResult.seconds(result.seconds)) s)"
                    )
                    results.append(result)
                }
                return results
            }
        } catch {
            await restore(store, app: app, wasFrozen: clock.frozen)
            throw error
        }
        await restore(store, app: app, wasFrozen: clock.frozen)
        let elapsed = started.duration(to: .now)
        let report = CheckReport(
            seed: options.seed, server: options.server, bundleId: options.file.bundleId,
            notificationURL: options.file.notificationURL, fault: options.fault,
            seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
            probe: options.file.probe != nil, stories: results)
        do {
            let recorded = try await store.record(report)
            progress("The console shows this run at \(options.server)\(recorded.consolePath)")
        } catch {
            progress("The run was not recorded in the store (the console will not list it): \(error)")
        }
        return report
    }

    private static func play(
        _ story: Story, index: Int, mode: RelayMode, store: CheckStore, relay: NotificationRelay, server: ServerCalls,
        catalog: CheckCatalog, options: CheckOptions, runId: String, answerWithin: Double
    ) async -> StoryResult {
        let started = ContinuousClock.now
        relay.reset(to: mode)
        let tester = "check-\(runId)-\(index + 1)@kiosk.test"
        let run = StoryRun(
            store: store, relay: relay, server: server, catalog: catalog, tester: tester,
            random: SplitMix64(seed: options.seed, stream: index, salt: 0xC4EC), answerWithin: answerWithin)
        var result = StoryResult(
            name: story.name, kind: story.kind.rawValue, summary: story.summary, user: run.user.uuidString.lowercased())
        do {
            try await store.createTester(email: tester, password: "kiosk-check-\(runId)")
            if let held = try await server.probe(run.user, now: try await store.clock().now),
                !held.entitlements.isEmpty || held.balances.values.contains(where: { $0 != 0 })
            {
                throw NotMade(
                    "the server already holds things for user \(result.user) (an earlier run with seed \(options.seed)?): run with another --seed, or on a fresh server"
                )
            }
            try await story.play(run)
            result.result = .pass
        } catch let notMade as NotMade {
            result.result = .notMade
            result.reason = "\(notMade)"
        } catch {
            result.result = .fail
            result.reason = "\(error)"
        }
        // Whatever the story left held is dropped, so the next story starts clean.
        relay.reset()
        try? await run.settle(run.store)
        result.steps = run.steps
        result.notChecked = run.notChecked
        result.notes = run.notes
        result.failedStep = run.steps.firstIndex { $0.failure != nil }.map { $0 + 1 }
        if result.result == .pass, !run.notChecked.isEmpty {
            result.reason = "passed on the wire; \(run.notChecked.count) probe checks not made (no probe)"
        }
        let elapsed = started.duration(to: .now)
        result.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return result
    }

    /// Puts the app's sandbox notification URLs, retries and the clock back as they were.
    private static func restore(_ store: CheckStore, app: AppResource, wasFrozen: Bool) async {
        _ = try? await store.updateApp(
            AppUpdateBody(
                sandboxNotificationURLs: app.sandboxNotificationURLs,
                sandboxNotificationRetries: app.sandboxNotificationRetries))
        if !wasFrozen { _ = try? await store.clock(TestClockRequest(action: "resume")) }
    }
}
