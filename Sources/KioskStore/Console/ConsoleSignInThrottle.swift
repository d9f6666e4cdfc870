import Foundation

/// Slows password guessing at the console's sign-in. After ``maxFailures`` wrong passwords for one email within
/// ``window``, that email is refused until the window has passed. One email's password is checked one attempt at a
/// time, so guesses sent at once are counted one after the other and cannot slip past the lockout. At most
/// ``maxConcurrentChecks`` password checks run at once, so a flood cannot keep every core busy with scrypt; the
/// others wait their turn (up to ``maxWaiting`` of them) rather than being refused, so a few parallel wrong guesses
/// do not turn everyone else away. Kept in memory per replica: behind a load balancer an attacker gets
/// ``maxFailures`` tries per replica per window.
actor ConsoleSignInThrottle {
    static let maxFailures = 5
    static let window: TimeInterval = 15 * 60
    static let maxConcurrentChecks = 4
    /// The most sign-ins waiting for a check; more are answered "busy".
    static let maxWaiting = 256
    /// The most emails remembered; the stalest are forgotten first.
    static let maxTracked = 10_000

    enum Verdict: Equatable {
        case proceed
        case lockedOut(until: Date)
        /// This email's password is being checked right now.
        case emailBusy
        /// The store has more sign-ins waiting than it queues.
        case busy
    }

    private var failures: [String: [Date]] = [:]
    private var checkingEmails: Set<String> = []
    private var checking = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// How many sign-ins wait for a check.
    var queued: Int { waiting.count }

    /// Whether a password for `email` may be checked now, waiting for a free check if need be; `.proceed` must be
    /// followed by ``end(email:succeeded:now:)`` or ``abandon(email:)``.
    func begin(email: String, now: Date) async -> Verdict {
        let recent = (failures[email] ?? []).filter { $0 > now.addingTimeInterval(-Self.window) }
        failures[email] = recent.isEmpty ? nil : recent
        if recent.count >= Self.maxFailures {
            return .lockedOut(until: recent[recent.count - Self.maxFailures].addingTimeInterval(Self.window))
        }
        guard !checkingEmails.contains(email) else { return .emailBusy }
        if checking >= Self.maxConcurrentChecks {
            guard waiting.count < Self.maxWaiting else { return .busy }
            // The email is held while it waits, so a second guess for it meanwhile is refused, not queued.
            checkingEmails.insert(email)
            await withCheckedContinuation { waiting.append($0) }
            // ``finish()`` handed this one its check: `checking` already counts it.
            return .proceed
        }
        checkingEmails.insert(email)
        checking += 1
        return .proceed
    }

    /// Ends a check that could not be made (the store could not read the account): it counts as no attempt.
    func abandon(email: String) {
        finish(email)
    }

    /// Records the check's outcome: a success forgets the email's failures.
    func end(email: String, succeeded: Bool, now: Date) {
        finish(email)
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

    /// Frees `email` and its check: the check passes to the longest-waiting sign-in, if any.
    private func finish(_ email: String) {
        checkingEmails.remove(email)
        if waiting.isEmpty {
            checking -= 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}
