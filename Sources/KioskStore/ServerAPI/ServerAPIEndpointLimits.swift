import Foundation
import KioskCore
import Synchronization

/// Apple's published rate limits of the App Store Server API ("Identifying rate limits"): per app and endpoint, a
/// rate a second that Apple enforces over each hour (so `rate × 3600` requests an hour), the sandbox's a tenth of
/// production's. Counted in memory per store process, on the environment's clock (moving the sandbox clock moves
/// the hour). A request over the limit gets 429 `4290000` with `Retry-After`, Apple's way: the UNIX time in
/// milliseconds when the next request may go.
final class ServerAPIEndpointLimits: Sendable {
    /// Requests a second, by method and path under `inApps/`, as Apple's table lists them. An endpoint Apple does
    /// not list has no limit.
    static let perSecond: [String: Int] = [
        "POST v1/transactions/{transactionId}/finish": 50,
        "GET v1/transactions/appTransactions/{transactionId}": 50,
        "GET v1/transactions/{transactionId}": 50,
        "GET v2/history/{transactionId}": 50,
        "GET v1/history/{transactionId}": 50,
        "GET v1/subscriptions/{transactionId}": 50,
        "PUT v2/transactions/consumption/{transactionId}": 50,
        "PUT v1/transactions/consumption/{transactionId}": 50,
        "POST v1/notifications/history": 50,
        "PUT v1/subscriptions/extend/{originalTransactionId}": 20,
        "PUT v1/transactions/{transactionId}/appAccountToken": 20,
        "GET v1/lookup/{orderId}": 10,
        "GET v2/refund/lookup/{transactionId}": 10,
        "POST v1/subscriptions/extend/mass": 1,
        "POST v1/notifications/test": 1,
        "GET v1/notifications/test/{testNotificationToken}": 1,
    ]

    let scope: ServerAPIRateLimitScope
    private let windows = Mutex<[Key: Window]>([:])

    private struct Key: Hashable {
        var appId: App.ID
        var environment: StoreEnvironment
        var endpoint: String
    }

    private struct Window {
        var start: Date
        var count: Int
    }

    init(scope: ServerAPIRateLimitScope) {
        self.scope = scope
    }

    /// The endpoint's requests an hour for an app in `environment`, or nil when it has no limit there.
    func hourlyLimit(endpoint: String, environment: StoreEnvironment) -> Int? {
        guard scope == .all || (scope == .production && environment == .production),
            let rate = Self.perSecond[endpoint]
        else { return nil }
        return environment == .production ? rate * 3600 : rate * 360
    }

    /// Counts one request of `endpoint` (`GET v1/transactions/{transactionId}`) by the app at `now`: nil when it
    /// may go, else when the app's hour for it ends and the next request may go.
    func admit(endpoint: String, appId: App.ID, environment: StoreEnvironment, now: Date) -> Date? {
        guard let limit = hourlyLimit(endpoint: endpoint, environment: environment) else { return nil }
        let key = Key(appId: appId, environment: environment, endpoint: endpoint)
        return windows.withLock { windows in
            var window = windows[key] ?? Window(start: now, count: 0)
            if now >= window.start + 3600 || now < window.start { window = Window(start: now, count: 0) }
            guard window.count < limit else { return window.start + 3600 }
            window.count += 1
            windows[key] = window
            return nil
        }
    }

    private static let inApps = Array("inApps/".utf8)

    /// `GET v1/transactions/{transactionId}` for a request the router matched to `endpointPath`
    /// (`/sandbox/inApps/v1/transactions/{transactionId}`).
    static func endpoint(method: String, endpointPath: String) -> String? {
        // Searched in the UTF-8 bytes: Foundation's `range(of:)` took 0.9% of Get Transaction Info's time at 64
        // connections, the standard library's generic `firstRange(of:)` three times that.
        var path = endpointPath
        return path.withUTF8 { bytes -> String? in
            guard let start = bytes.baseAddress, bytes.count >= inApps.count else { return nil }
            for offset in 0...(bytes.count - inApps.count) where memcmp(start + offset, inApps, inApps.count) == 0 {
                let rest = UnsafeBufferPointer(rebasing: bytes[(offset + inApps.count)...])
                return method + " " + String(decoding: rest, as: UTF8.self)
            }
            return nil
        }
    }
}

/// Where Apple's per-endpoint limits of the App Store Server API apply (`--server-api-rate-limits`,
/// `KIOSK_SERVER_API_RATE_LIMITS`).
public enum ServerAPIRateLimitScope: String, Sendable, CaseIterable {
    /// No endpoint limits (the per-key limit still applies).
    case off
    /// Production only, the default: the sandbox is for testing as fast as a test runs.
    case production
    /// Both environments, the sandbox at a tenth: to see your server meet Apple's sandbox limits.
    case all
}
