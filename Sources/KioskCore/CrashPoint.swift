import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A step at which a fault test may stop a Kiosk server (the store or the merchant) with a real crash.
///
/// `KIOSK_CRASH_AT=payment-committed` (or `payment-committed#3`, the third time the step is reached) makes the
/// process send itself SIGKILL right there: no cleanup, no flush, no answer, exactly as `kill -9` from outside, but
/// at a step a test can name, so it proves what survives a crash *there* instead of wherever a timer happened to
/// land. Each step is a moment where something is committed and not yet answered. Fault tests (and `kiosk-chaos`)
/// start `kiosk serve` or `kiosk merchant serve` with it; nothing else sets it. Unset, ``reach()`` costs one load.
public enum CrashPoint: String, Sendable, CaseIterable {
    /// The store: a payment's database transaction committed (the account is charged), before the client hears
    /// of it.
    case paymentCommitted = "payment-committed"
    /// The store: a batch of subscription events (renewals, expiries) committed, before its notifications go out.
    case renewalBatchCommitted = "renewal-batch-committed"
    /// The store: the app's server took a notification (answered 2xx), before the store records the delivery; a
    /// store started again sends it once more when its claim lapses.
    case notificationDelivered = "notification-delivered"
    /// The merchant: an app's delivery committed (the grant, its order and its history line), before the app is
    /// answered; the app sends it again.
    case deliveryCommitted = "delivery-committed"
    /// The merchant: a notification's UUID and the change it carries committed, before the store is answered 200;
    /// the store sends it again.
    case notificationCommitted = "notification-committed"

    /// The environment variable that arms a crash point.
    public static let environmentVariable = "KIOSK_CRASH_AT"

    /// Kills this process with SIGKILL if `KIOSK_CRASH_AT` names this step and this is the named time it is
    /// reached.
    public func reach() {
        guard let armed = Self.armed, armed.point == self else { return }
        let count = Self.hits.withLock { hits -> Int in
            hits += 1
            return hits
        }
        if count == armed.time { kill(getpid(), SIGKILL) }
    }

    /// The step and the time `KIOSK_CRASH_AT` names, read once; nil when unset.
    static let armed: (point: CrashPoint, time: Int)? = ProcessInfo.processInfo.environment[environmentVariable]
        .flatMap(parse)

    private static let hits = Mutex(0)

    /// `name` or `name#n` (n ≥ 1); nil for anything else, which arms nothing.
    static func parse(_ text: String) -> (point: CrashPoint, time: Int)? {
        let parts = text.split(separator: "#", maxSplits: 1).map(String.init)
        guard let point = parts.first.flatMap(CrashPoint.init(rawValue:)) else { return nil }
        guard parts.count == 2 else { return (point, 1) }
        guard let time = Int(parts[1]), time >= 1 else { return nil }
        return (point, time)
    }
}
