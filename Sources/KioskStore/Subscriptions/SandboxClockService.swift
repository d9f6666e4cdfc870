import Foundation
import KioskCore
import KioskProtocol
import KioskStorage

/// The sandbox clock's test controls: show, freeze, resume, advance, set and reset it.
///
/// The clock's state is one JSON value in the `settings` table, so every replica (and a restarted store) agrees:
/// each change is written there first, then applied to this store's ``SandboxClock``; the scheduler reloads it
/// every tick. Changes and scheduler passes take turns (``SchedulerWake/exclusively(_:)``). Time only moves forward. `advance` and `set` act on every subscription event due by the new time
/// before they answer, so the answer says what happened.
struct SandboxClockService: Sendable {
    let lifecycle: SubscriptionLifecycle
    let wake: SchedulerWake

    /// The `settings` key holding the clock's state.
    static let settingKey = "sandbox_clock"

    private var database: any KioskDatabase { lifecycle.store.database }
    private var clock: SandboxClock { lifecycle.store.clocks.sandbox }

    /// The clock actions of `POST /clock`.
    enum Action: String, CaseIterable {
        case freeze, resume, advance, set, reset
    }

    /// Applies the stored state to this store's sandbox clock.
    func load() async throws {
        let state = try await database.transaction { tx in try await Self.storedState(in: tx) }
        if let state { clock.apply(state) }
    }

    func current() -> TestClockResponse {
        Self.response(state: clock.state, now: clock.now())
    }

    func change(_ request: TestClockRequest) async throws -> TestClockResponse {
        guard let action = Action(rawValue: request.action) else {
            throw KioskError(
                .unknownClockAction, "'\(request.action)' is not something the sandbox clock can do.",
                field: "action", fix: "Use one of: \(Action.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
        let result = try await wake.exclusively {
            let state = try await database.transaction { tx in
                let stored = try await Self.storedState(in: tx) ?? clock.state
                let changed = try Self.changed(stored, by: action, request: request, base: clock.baseNow())
                try await tx.setSetting(
                    Self.settingKey, to: String(decoding: try JSONEncoder().encode(changed), as: UTF8.self))
                return changed
            }
            clock.apply(state)
            guard action == .advance || action == .set else { return current() }
            let now = clock.now()
            let summary = await lifecycle.runUntilQuiet(.sandbox, dueBy: now)
            // Notifications those events caused, and retries that fell due by the new time, go out before the answer.
            await lifecycle.store.notifications.deliverDue(.sandbox)
            var answer = Self.response(state: state, now: now)
            answer.renewed = summary.renewed
            answer.recovered = summary.recovered
            answer.expired = summary.expired
            answer.billingRetries = summary.billingRetries
            answer.gracePeriodsExpired = summary.gracePeriodsExpired
            return answer
        }
        wake.wake()
        return result
    }

    private static func storedState(in tx: any StorageTransaction) async throws -> SandboxClock.State? {
        guard let text = try await tx.setting(settingKey) else { return nil }
        return try JSONDecoder().decode(SandboxClock.State.self, from: Data(text.utf8))
    }

    /// The state after `action`; refuses to move time back.
    static func changed(_ state: SandboxClock.State, by action: Action, request: TestClockRequest, base: Date) throws
        -> SandboxClock.State
    {
        let now = state.now(base: base)
        var changed = state
        switch action {
        case .freeze:
            changed.frozenAt = now
        case .resume:
            guard let frozenAt = state.frozenAt else { return state }
            changed = SandboxClock.State(
                offsetMilliseconds: frozenAt.millisecondsSince1970 - base.millisecondsSince1970)
        case .advance, .set:
            let target =
                action == .advance
                ? try sandboxTime(now.checkedAdding(seconds: try duration(request.by)), field: "by")
                : try sandboxTime(try date(request.to), field: "to")
            if state.frozenAt != nil {
                changed.frozenAt = target
            } else {
                changed.offsetMilliseconds = target.millisecondsSince1970 - base.millisecondsSince1970
            }
        case .reset:
            changed = SandboxClock.State()
        }
        let next = changed.now(base: base)
        if next < now {
            throw KioskError(
                .clockMovesBack,
                "The sandbox clock only moves forward: \(action.rawValue) would take it from "
                    + "\(iso(now)) back to \(iso(next)), and subscriptions already lived through that time.",
                fix: action == .reset
                    ? "Wait until the real time passes the sandbox time, or keep using the sandbox clock."
                    : "Choose a time after \(iso(now)).")
        }
        return changed
    }

    /// Seconds from `90m`, `3d`, `1h30m`, `45s`, `1w`, or a number of seconds.
    static func duration(_ amount: TestClockAmount?) throws -> TimeInterval {
        let invalid = { (text: String) in
            KioskError(
                .invalidDuration, "'\(text)' is not a duration to advance the sandbox clock by.", field: "by",
                fix: "Send a positive duration such as 90m, 3d, 1h30m or a number of seconds.")
        }
        switch amount {
        case nil:
            throw KioskError(
                .missingDuration, "advance needs how far to move the clock.", field: "by",
                fix: "Send \"by\": \"90m\" (or 3d, 1h30m, a number of seconds).")
        case .number(let seconds):
            guard seconds > 0, seconds.isFinite else { throw invalid(String(seconds)) }
            return seconds
        case .text(let text):
            if let seconds = Double(text), seconds > 0 { return seconds }
            let units: [Character: TimeInterval] = ["w": 604_800, "d": 86_400, "h": 3_600, "m": 60, "s": 1]
            var total: TimeInterval = 0
            var digits = ""
            for character in text.lowercased() {
                if character.isNumber {
                    digits.append(character)
                } else if let unit = units[character], let value = Double(digits) {
                    total += value * unit
                    digits = ""
                } else {
                    throw invalid(text)
                }
            }
            guard digits.isEmpty, total > 0 else { throw invalid(text) }
            return total
        }
    }

    /// A date from ISO 8601 text or milliseconds since 1970; nil for milliseconds outside `Date.kioskRange`.
    static func date(_ amount: TestClockAmount?) throws -> Date? {
        switch amount {
        case .number(let milliseconds):
            return Date(checkedMillisecondsSince1970: milliseconds)
        case .text(let text):
            if let milliseconds = Int64(text) { return Date(checkedMillisecondsSince1970: milliseconds) }
            let formatter = ISO8601DateFormatter()
            if let date = formatter.date(from: text) { return date }
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            if let date = formatter.date(from: text) { return date }
            // Digits beyond Int64: milliseconds, but far out of range.
            if !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) { return nil }
            throw KioskError(
                .invalidDate, "'\(text)' is not a date to set the sandbox clock to.", field: "to",
                fix: "Send an ISO 8601 date such as 2026-12-01T00:00:00Z, or milliseconds since 1970.")
        case nil:
            throw KioskError(
                .missingDate, "set needs the date to move the clock to.", field: "to",
                fix: "Send \"to\": \"2026-12-01T00:00:00Z\".")
        }
    }

    /// The instants the sandbox clock can stand at: from 1970 to ``SandboxClock/latest``, so that every date the
    /// store signs from it stays in `Date.kioskRange`.
    static let range = Date.kioskRange.lowerBound...SandboxClock.latest

    /// `date` in whole milliseconds, if the sandbox clock can stand there; nil means out of range too.
    private static func sandboxTime(_ date: Date?, field: String) throws -> Date {
        guard let date, range.contains(date) else {
            throw KioskError(
                .clockOutOfRange,
                "The sandbox clock stays between 1970-01-01T00:00:00Z and \(SandboxClock.latestText): the store "
                    + "signs dates up to years after the sandbox time, and every date it signs must stay before "
                    + "year 10000, the last year certificates and Apple's date formats can write.",
                field: field, fix: "Choose a time no later than \(SandboxClock.latestText).")
        }
        return Date(millisecondsSince1970: date.millisecondsSince1970)
    }

    static func response(state: SandboxClock.State, now: Date) -> TestClockResponse {
        TestClockResponse(
            now: now.millisecondsSince1970, date: iso(now), frozen: state.frozenAt != nil,
            offsetMilliseconds: state.frozenAt == nil ? state.offsetMilliseconds : 0)
    }

    private static func iso(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}

/// How many subscription events of each kind a run of the scheduler acted on.
struct LifecycleSummary: Sendable {
    var renewed = 0
    var recovered = 0
    var expired = 0
    var billingRetries = 0
    var gracePeriodsExpired = 0

    mutating func count(_ outcome: LifecycleOutcome) {
        switch outcome {
        case .renewed: renewed += 1
        case .recovered: recovered += 1
        case .expired: expired += 1
        case .billingRetryStarted, .billingRetried: billingRetries += 1
        case .gracePeriodExpired: gracePeriodsExpired += 1
        case .nothing: break
        }
    }

    mutating func add(_ other: LifecycleSummary) {
        renewed += other.renewed
        recovered += other.recovered
        expired += other.expired
        billingRetries += other.billingRetries
        gracePeriodsExpired += other.gracePeriodsExpired
    }
}
