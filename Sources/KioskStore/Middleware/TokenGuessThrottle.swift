import Foundation
import KioskCore
import NIOCore

/// Slows guessing of the store's bearer tokens (the admin token on the admin API, the sandbox test controls and the
/// console's admin-token form; the metrics token). After ``maxFailures`` wrong tokens from one client address within
/// ``window``, that address is refused, right token or wrong, until the window has passed; other addresses are not
/// affected, so a guesser cannot lock the operator out. Kept in memory per replica. Behind a reverse proxy every
/// client has the proxy's address: the proxy should throttle too (docs/operations.md).
actor TokenGuessThrottle {
    static let maxFailures = 20
    static let window: TimeInterval = 15 * 60
    /// The most addresses remembered; the stalest are forgotten first.
    static let maxTracked = 10_000

    private var failures: [String: [Date]] = [:]

    /// When `address` may try again, or nil when it may try now.
    func lockedUntil(_ address: String, now: Date) -> Date? {
        let recent = (failures[address] ?? []).filter { $0 > now.addingTimeInterval(-Self.window) }
        failures[address] = recent.isEmpty ? nil : recent
        guard recent.count >= Self.maxFailures else { return nil }
        return recent[recent.count - Self.maxFailures].addingTimeInterval(Self.window)
    }

    /// Counts a wrong token from `address`.
    func failed(_ address: String, now: Date) {
        if failures[address] == nil, failures.count >= Self.maxTracked {
            let stalest = failures.min { ($0.value.last ?? .distantPast) < ($1.value.last ?? .distantPast) }
            stalest.map { failures[$0.key] = nil }
        }
        failures[address, default: []].append(now)
    }

    /// Checks a token sent from `address` with `isRight`, counting a wrong one; throws `too_many_attempts` while the
    /// address is locked out.
    func check(from address: String, now: Date, _ isRight: () -> Bool) throws -> Bool {
        if let until = lockedUntil(address, now: now) { throw Self.lockedOut(until: until, now: now) }
        if isRight() { return true }
        failed(address, now: now)
        return false
    }

    static func lockedOut(until: Date, now: Date) -> KioskError {
        // Clamped to the window before the conversion, so no clock can make it trap.
        let seconds = min(max(until.timeIntervalSince(now), 60), window)
        let minutes = Int((seconds / 60).rounded(.up))
        return KioskError(
            .tooManyAttempts,
            "Too many wrong tokens came from this address: it is refused for \(minutes) more minute(s), "
                + "right token or wrong.",
            field: "Authorization", fix: "Wait, then send the right token.")
    }

    /// The client address a request came from, as the throttle keys it.
    static func address(of channel: any Channel) -> String {
        channel.remoteAddress?.ipAddress ?? "unknown"
    }
}
