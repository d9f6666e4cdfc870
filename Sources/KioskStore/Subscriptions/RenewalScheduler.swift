import Foundation
import KioskCore
import Logging
import ServiceLifecycle
import Synchronization

/// Runs subscription life cycles: every tick (and at once when the sandbox clock changes) it reloads the sandbox
/// clock's stored state, then acts on every subscription whose `nextEventAt` is due on its environment's clock.
///
/// Rows are claimed in batches per database transaction (`FOR UPDATE SKIP LOCKED` on PostgreSQL), so replicas
/// share the work and each event happens once.
struct RenewalScheduler: Service {
    let lifecycle: SubscriptionLifecycle
    let clock: SandboxClockService
    /// Real time between ticks.
    let interval: Duration

    func run() async throws {
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                clock.wake.wake()
            }
        }
        defer { ticker.cancel() }
        await tick()
        for await _ in clock.wake.signals.cancelOnGracefulShutdown() {
            await tick()
        }
    }

    /// One pass over both environments.
    func tick() async {
        await clock.wake.exclusively { await pass() }
    }

    private func pass() async {
        do {
            try await clock.load()
        } catch {
            lifecycle.store.logger.error("The sandbox clock's state could not be read", metadata: ["error": "\(error)"])
        }
        for environment in StoreEnvironment.allCases {
            _ = await lifecycle.runUntilQuiet(environment, dueBy: lifecycle.store.clocks.now(environment))
        }
    }
}

/// What the scheduler and the sandbox clock's controls share in one store: a wake-up before the next tick, and
/// a turn to act, so an `advance` answers everything it caused and no tick takes part of its work.
final class SchedulerWake: Sendable {
    let signals: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation
    private let turns = Mutex(Turns())

    private struct Turns {
        var taken = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    init() {
        (signals, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Wakes the scheduler; wakes that arrive while it works collapse into one.
    func wake() { continuation.yield() }

    /// Runs `body` when no other pass of the scheduler (or clock change) runs, first come first served.
    func exclusively<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let free = turns.withLock { turns -> Bool in
                if turns.taken {
                    turns.waiters.append(waiter)
                    return false
                }
                turns.taken = true
                return true
            }
            if free { waiter.resume() }
        }
        defer {
            let next = turns.withLock { turns -> CheckedContinuation<Void, Never>? in
                if turns.waiters.isEmpty {
                    turns.taken = false
                    return nil
                }
                return turns.waiters.removeFirst()
            }
            next?.resume()
        }
        return try await body()
    }
}
