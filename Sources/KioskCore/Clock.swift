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
