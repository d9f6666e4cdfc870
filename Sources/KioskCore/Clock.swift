import Foundation

/// Where "now" comes from. Every component that needs the time takes one, so tests and the sandbox
/// can move time explicitly.
public protocol KioskClock: Sendable {
    func now() -> Date
}

/// The real clock, in whole milliseconds: the precision every timestamp is stored with, so a value the store
/// answers before storing it is the same value it answers after reading it back.
public struct SystemClock: KioskClock {
    public init() {}
    public func now() -> Date { Date(millisecondsSince1970: Date().millisecondsSince1970) }
}

/// A clock that stands still until moved; for tests.
public final class ManualClock: KioskClock, @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    public init(_ start: Date = Date(timeIntervalSince1970: 1_767_225_600)) {
        current = start
    }

    public func now() -> Date { lock.withLock { current } }

    public func advance(by seconds: TimeInterval) {
        lock.withLock { current += seconds }
    }

    public func set(_ date: Date) {
        lock.withLock { current = date }
    }
}

/// The sandbox's controllable clock: the store's base clock moved by an offset, or frozen at a date.
///
/// Sandbox purchases, renewals, grace and retry windows and notification retries all read it, so a tester can
/// freeze time, advance it or jump to a date (`kiosk test clock …`) and watch a subscription's life happen at
/// once. Production never reads it. The state is kept in the database by the store; this object holds the
/// copy every sandbox request reads.
public final class SandboxClock: KioskClock, @unchecked Sendable {
    /// Where the sandbox clock stands relative to the base clock.
    public struct State: Codable, Sendable, Hashable {
        /// Added to the base clock while running.
        public var offsetMilliseconds: Int64
        /// When set, the sandbox clock stands still at this date.
        public var frozenAt: Date?

        public init(offsetMilliseconds: Int64 = 0, frozenAt: Date? = nil) {
            self.offsetMilliseconds = offsetMilliseconds
            self.frozenAt = frozenAt
        }

        /// The sandbox time this state gives when the base clock reads `base`, in whole milliseconds.
        public func now(base: Date) -> Date {
            // Added as time intervals, not Int64s: a stored offset can then never overflow into a trap.
            let moved = base.addingTimeInterval(Double(offsetMilliseconds) / 1000)
            return frozenAt ?? Date(millisecondsSince1970: moved.millisecondsSince1970)
        }
    }

    /// The latest instant the sandbox clock can be set or advanced to. Kiosk signs dates up to years after the
    /// sandbox time (renewals, grace and billing-retry windows, extensions), and every date it signs must stay in
    /// ``Foundation/Date/kioskRange``; 100 years of margin before year 10000 keeps them there.
    public static let latest = Date(millisecondsSince1970: 250_246_627_199_999)

    /// ``latest`` in words, for error messages.
    public static let latestText = "9899-12-31T23:59:59Z"

    private let base: any KioskClock
    private let lock = NSLock()
    private var current: State

    public init(base: any KioskClock, state: State = State()) {
        self.base = base
        current = state
    }

    public func now() -> Date {
        let state = self.state
        return state.now(base: base.now())
    }

    /// The base clock's time: what a state change measures an offset against.
    public func baseNow() -> Date { base.now() }

    public var state: State { lock.withLock { current } }

    /// Replaces the state (after it was stored, or read back from the database).
    public func apply(_ state: State) {
        lock.withLock { current = state }
    }
}

/// The store's clocks: production runs on the base clock, the sandbox on its controllable ``SandboxClock``.
/// Authentication (tokens, sessions) always reads the base clock, whatever the environment.
public struct StoreClocks: Sendable {
    public let base: any KioskClock
    public let sandbox: SandboxClock

    public init(base: any KioskClock, sandbox: SandboxClock? = nil) {
        self.base = base
        self.sandbox = sandbox ?? SandboxClock(base: base)
    }

    public func clock(for environment: StoreEnvironment) -> any KioskClock {
        environment == .sandbox ? sandbox : base
    }

    /// "Now" in `environment`.
    public func now(_ environment: StoreEnvironment) -> Date {
        clock(for: environment).now()
    }
}
