import Foundation
import KioskCore

/// What a developer's server answers `kiosk check` at `GET {probe}/{appAccountToken}?now=MILLISECONDS`: what the
/// user the token names holds at `now` (the store's sandbox clock, which runs ahead of the real one). The contract
/// is documented in docs/check.md; Kiosk's merchant serves it at ``MerchantPaths/adminProbe(appAccountToken:)``.
public struct CheckProbe: Codable, Sendable, Hashable {
    /// The names of the entitlements active at `now` (or the product ids, as the check file names them).
    public var entitlements: [String]
    /// Every balance the user has, in whole units (coins).
    public var balances: [String: Int64]

    public init(entitlements: [String], balances: [String: Int64]) {
        self.entitlements = entitlements
        self.balances = balances
    }
}

/// A check's verdict: every story's result, the steps that led there and every delivery's answer.
public struct CheckReport: Codable, Sendable {
    public var seed: UInt64
    public var server: String
    public var bundleId: String
    public var notificationURL: String
    public var fault: String?
    public var seconds: Double
    /// Whether the check file had a probe (without one, only the wire was judged).
    public var probe: Bool
    public var stories: [StoryResult]

    public init(
        seed: UInt64, server: String, bundleId: String, notificationURL: String, fault: String?, seconds: Double,
        probe: Bool, stories: [StoryResult]
    ) {
        self.seed = seed
        self.server = server
        self.bundleId = bundleId
        self.notificationURL = notificationURL
        self.fault = fault
        self.seconds = seconds
        self.probe = probe
        self.stories = stories
    }

    /// "26 passed, 1 failed, 3 not made".
    public var counts: String { "\(count(.pass)) passed, \(count(.fail)) failed, \(count(.notMade)) not made" }

    /// True when no story failed (stories that could not be made are listed, not failed).
    public var passed: Bool { !stories.contains { $0.result == .fail } }

    public func count(_ result: StoryResult.Result) -> Int { stories.filter { $0.result == result }.count }
}

/// One story's verdict.
public struct StoryResult: Codable, Sendable {
    public enum Result: String, Codable, Sendable {
        case pass
        case fail
        case notMade = "not made"
    }

    public var name: String
    public var kind: String
    public var summary: String
    /// The story's user: the app account token its purchases carried.
    public var user: String
    public var result: Result = .fail
    /// Why it failed or was not made.
    public var reason: String?
    /// The step (from 1) that failed.
    public var failedStep: Int?
    public var steps: [StepRecord] = []
    /// Expectations that could not be checked (no probe).
    public var notChecked: [String] = []
    /// What the server did that Apple asks for but does not require (no consumption information, …).
    public var notes: [String] = []
    public var seconds: Double = 0

    public init(name: String, kind: String, summary: String, user: String) {
        self.name = name
        self.kind = kind
        self.summary = summary
        self.user = user
    }

    public static func seconds(_ value: Double) -> String { String(format: "%.1f", value) }
}

/// One step of a story as the verdict shows it.
public struct StepRecord: Sendable, Codable, Hashable {
    public var title: String
    public var deliveries: [Delivery] = []
    /// What the probe showed, for a check.
    public var probe: CheckProbe?
    public var failure: String?

    public init(title: String, deliveries: [Delivery] = [], probe: CheckProbe? = nil, failure: String? = nil) {
        self.title = title
        self.deliveries = deliveries
        self.probe = probe
        self.failure = failure
    }
}

/// One POST of a notification to the developer's server, and how it answered.
public struct Delivery: Sendable, Codable, Hashable {
    public var notificationUUID: String
    public var type: NotificationType
    public var subtype: NotificationSubtype?
    /// The app account token of the transaction it carries, if any.
    public var appAccountToken: String?
    /// The HTTP status, or nil when the server did not answer in time (or could not be reached).
    public var status: Int?
    public var milliseconds: Int
    /// Why there was no status.
    public var error: String?
    /// Made by the kit with a wrong key or for another app: it must change nothing.
    public var forged: Bool
    /// How the relay handled it: `forward`, `duplicate`, `hold`, …
    public var handling: String

    public init(
        notificationUUID: String, type: NotificationType, subtype: NotificationSubtype?, appAccountToken: String?,
        status: Int?,
        milliseconds: Int, error: String?, forged: Bool, handling: String
    ) {
        self.notificationUUID = notificationUUID
        self.type = type
        self.subtype = subtype
        self.appAccountToken = appAccountToken
        self.status = status
        self.milliseconds = milliseconds
        self.error = error
        self.forged = forged
        self.handling = handling
    }

    /// "DID_RENEW (BILLING_RECOVERY) → 200 in 12 ms".
    public var summary: String {
        let name = type.rawValue + (subtype.map { " (\($0))" } ?? "") + (forged ? " [forged]" : "")
        let answer = status.map { "\($0)" } ?? "no answer (\(error ?? "?"))"
        return "\(name) → \(answer) in \(milliseconds) ms\(handling == "forward" ? "" : ", \(handling)")"
    }
}

/// A recorded check run, without its steps (``AdminRoutes/recordCheckRun``, ``AdminRoutes/checkRuns``).
public struct CheckRunSummary: Codable, Sendable, Hashable {
    public var id: String
    public var bundleId: String
    public var createdAt: Date
    public var passed: Bool
    /// "26 passed, 0 failed, 3 not made".
    public var counts: String
    public var seed: UInt64
    /// Where the console shows it.
    public var consolePath: String

    public init(
        id: String, bundleId: String, createdAt: Date, passed: Bool, counts: String, seed: UInt64, consolePath: String
    ) {
        self.id = id
        self.bundleId = bundleId
        self.createdAt = createdAt
        self.passed = passed
        self.counts = counts
        self.seed = seed
        self.consolePath = consolePath
    }
}

public struct CheckRunList: Codable, Sendable, Hashable {
    public var checkRuns: [CheckRunSummary]

    public init(checkRuns: [CheckRunSummary]) {
        self.checkRuns = checkRuns
    }
}
