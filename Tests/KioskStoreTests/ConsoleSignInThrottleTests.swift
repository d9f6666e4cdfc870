import Foundation
import Testing

@testable import KioskStore

/// The console's sign-in throttle: guesses sent at once for one email are checked one at a time, so none slips past
/// the lockout; and a store busy checking passwords makes other sign-ins wait their turn, never refuses them all.
@Suite struct ConsoleSignInThrottleTests {
    static let now = Date(timeIntervalSince1970: 1_790_000_000)

    @Test func guessesSentAtOnceForOneEmailAreCheckedOneAtATime() async {
        let throttle = ConsoleSignInThrottle()
        #expect(await throttle.begin(email: "ann@example.com", now: Self.now) == .proceed)
        #expect(await throttle.begin(email: "ann@example.com", now: Self.now) == .emailBusy)
        #expect(await throttle.begin(email: "bob@example.com", now: Self.now) == .proceed, "other emails go on")
        await throttle.end(email: "ann@example.com", succeeded: false, now: Self.now)
        await throttle.end(email: "bob@example.com", succeeded: true, now: Self.now)
        // Four more wrong guesses, each one after the other: the fifth failure locks the email.
        for _ in 1..<ConsoleSignInThrottle.maxFailures {
            #expect(await throttle.begin(email: "ann@example.com", now: Self.now) == .proceed)
            await throttle.end(email: "ann@example.com", succeeded: false, now: Self.now)
        }
        let locked = await throttle.begin(email: "ann@example.com", now: Self.now)
        #expect(locked == .lockedOut(until: Self.now.addingTimeInterval(ConsoleSignInThrottle.window)))
    }

    @Test func aBusyStoreMakesSignInsWaitRatherThanRefusingThem() async {
        let throttle = ConsoleSignInThrottle()
        let busy = (0..<ConsoleSignInThrottle.maxConcurrentChecks).map { "guess\($0)@example.com" }
        for email in busy { #expect(await throttle.begin(email: email, now: Self.now) == .proceed) }
        let waiting = Task { await throttle.begin(email: "dee@example.com", now: Self.now) }
        while await throttle.queued == 0 { await Task.yield() }
        await throttle.end(email: busy[0], succeeded: false, now: Self.now)
        #expect(await waiting.value == .proceed, "the next sign-in takes the freed check")
        await throttle.end(email: "dee@example.com", succeeded: true, now: Self.now)
        #expect(await throttle.begin(email: busy[0], now: Self.now) == .proceed, "and the check is free again after")
    }
}
