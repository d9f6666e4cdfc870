import Foundation

/// Slows password guessing at the console's sign-in. After ``maxFailures`` wrong passwords for one email within
/// ``window``, that email is refused until the window has passed; and at most ``maxConcurrentChecks`` password
/// checks run at once, so a flood of sign-ins cannot keep every core busy with scrypt. Kept in memory per replica:
/// behind a load balancer an attacker gets ``maxFailures`` tries per replica per window.
actor ConsoleSignInThrottle {
    static let maxFailures = 5
    static let window: TimeInterval = 15 * 60
    static let maxConcurrentChecks = 4
    /// The most emails remembered; the stalest are forgotten first.
    static let maxTracked = 10_000

    enum Verdict: Equatable {
        case proceed
        case lockedOut(until: Date)
        case busy
    }

    private var failures: [String: [Date]] = [:]
    private var checking = 0

    /// Whether a password for `email` may be checked now; `.proceed` must be followed by ``end(email:succeeded:now:)``.
    func begin(email: String, now: Date) -> Verdict {
        let recent = (failures[email] ?? []).filter { $0 > now.addingTimeInterval(-Self.window) }
        failures[email] = recent.isEmpty ? nil : recent
        if recent.count >= Self.maxFailures {
            return .lockedOut(until: recent[recent.count - Self.maxFailures].addingTimeInterval(Self.window))
        }
        guard checking < Self.maxConcurrentChecks else { return .busy }
        checking += 1
        return .proceed
    }

    /// Ends a check that could not be made (the store could not read the account): it counts as no attempt.
    func abandon() {
        checking -= 1
    }

    /// Records the check's outcome: a success forgets the email's failures.
    func end(email: String, succeeded: Bool, now: Date) {
        checking -= 1
        guard !succeeded else {
            failures[email] = nil
            return
        }
        if failures[email] == nil, failures.count >= Self.maxTracked {
            let stalest = failures.min { ($0.value.last ?? .distantPast) < ($1.value.last ?? .distantPast) }
            stalest.map { failures[$0.key] = nil }
        }
        failures[email, default: []].append(now)
    }
}
