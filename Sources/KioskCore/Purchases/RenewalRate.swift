import Foundation

/// How fast sandbox subscriptions renew for a tester. The name says how long a one-month period lasts;
/// other durations scale with it (Apple's sandbox table is `monthlyEvery5Minutes`).
public enum RenewalRate: String, Codable, Sendable, CaseIterable, Hashable {
    case monthlyEvery3Minutes = "3m"
    case monthlyEvery5Minutes = "5m"
    case monthlyEvery15Minutes = "15m"
    case monthlyEvery30Minutes = "30m"
    case monthlyEvery1Hour = "1h"
}
