import Foundation
import KioskProtocol
import KioskTestSupport
import KioskTesting
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A user of the shop: a sandbox tester with a phone (the app's state directory), and the same person's account
/// at the merchant.
struct Customer: Sendable, Hashable {
    var tester: String
    var userId: String
    var userToken: String
    var device: URL
}

/// The example app, `coin-shop --merchant` (the seeds' server model on KioskKit), run on a customer's phone. It
/// reaches the store and the merchant through the campaign's proxy, which can kill it at one of its requests.
struct App: Sendable {
    let executable: URL
    let proxy: KillingProxy
    let bundleId: String
    let password: String
    /// Every app process running now, for a campaign stopped by a signal.
    let running: RunningApps

    /// What one run did: how it ended, how long it took, and how many requests it made (the live updates stream
    /// left out).
    struct Run: Sendable {
        var result: KioskProcess.Result?
        var duration: Duration
        var requests: Int
    }

    /// Runs `coin-shop <command>` for `customer`; `process` hears of it (its id, then its end), and `kill` decides
    /// at which request, if any, the proxy kills it. Never throws: a run that could not start says so in `result`.
    func run(_ command: [String], for customer: Customer, process: AppProcess, kill: RequestKill? = nil) async -> Run {
        let counter = RequestCounter()
        proxy.unwatch()
        proxy.arm { method, path in
            guard let number = counter.count(path) else { return nil }
            return kill?.number == number ? kill?.moment : nil
        }
        let started = ContinuousClock.now
        let result = try? await KioskProcess.run(
            command + [
                "--server", proxy.url, "--merchant", proxy.url, "--user-token", customer.userToken,
                "--bundle-id", bundleId, "--email", customer.tester, "--password", password,
                "--state-dir", customer.device.path,
                // Longer than a server's restart on a loaded machine: the proxy holds requests meanwhile.
                "--timeout", "120",
            ], executable: executable, timeout: 600,
            onStart: { pid in
                running.insert(pid)
                proxy.watch(pid)
                process.started(pid)
            })
        process.ended()
        running.removeEnded()
        proxy.arm(nil)
        return Run(result: result, duration: ContinuousClock.now - started, requests: counter.value)
    }
}

/// Where the proxy kills the app: its `number`-th request (1-based, the live updates stream left out).
struct RequestKill: Sendable {
    var number: Int
    var moment: KillingProxy.Moment

    var description: String {
        "request #\(number), \(moment == .beforeForwarding ? "before it left" : "after its answer came back")"
    }
}

/// Counts an app run's requests, leaving out the live updates stream (it never ends, so no kill is aimed at it).
final class RequestCounter: Sendable {
    private let counted = Mutex(0)
    private static let updates = StoreKitPaths.base(sandbox: true) + StoreKitPaths.updates

    /// The request's number, or nil for the updates stream.
    func count(_ path: String) -> Int? {
        guard path != Self.updates else { return nil }
        return counted.withLock { count in
            count += 1
            return count
        }
    }

    var value: Int { counted.withLock { $0 } }
}

/// The app processes running now.
final class RunningApps: Sendable {
    private let pids = Mutex<Set<Int32>>([])

    func insert(_ pid: Int32) { _ = pids.withLock { $0.insert(pid) } }

    /// Forgets the processes that ended.
    func removeEnded() {
        pids.withLock { pids in pids = pids.filter { signalKill($0, signal: 0) } }
    }

    /// SIGKILL to every one of them.
    func killAll() {
        for pid in pids.withLock({ $0 }) { _ = signalKill(pid) }
    }
}

/// The app process of the running step, for a kill after a delay.
final class AppProcess: Sendable {
    private let state = Mutex<(pid: Int32?, ended: Bool)>((nil, false))

    func started(_ pid: Int32) { state.withLock { $0.pid = pid } }
    func ended() { state.withLock { $0.ended = true } }

    /// Sends SIGKILL if the app still runs (waiting for it to start if it has not yet); false when it had
    /// already ended.
    func kill() async throws -> Bool {
        while true {
            let killed = state.withLock { state -> Bool? in
                if state.ended { return false }
                guard let pid = state.pid else { return nil }
                return signalKill(pid)
            }
            if let killed { return killed }
            try await Task.sleep(for: .milliseconds(1))
        }
    }
}

/// SIGKILL (or `signal`; 0 only asks whether the process exists) to `pid`; false if it was not delivered.
func signalKill(_ pid: Int32, signal: Int32 = SIGKILL) -> Bool {
    #if canImport(Glibc)
        Glibc.kill(pid, signal) == 0
    #else
        Darwin.kill(pid, signal) == 0
    #endif
}
