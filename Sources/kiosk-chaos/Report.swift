import Foundation

/// How one trial's kill went.
enum KillOutcome: Sendable {
    /// The process died while the step was under way.
    case during(String)
    /// The step had ended first (a delay longer than the step took, a crash point the step did not reach): the
    /// server was killed then, idle or at its background work.
    case after(String)
    /// The app had ended before its delay ran out: nothing was killed.
    case missed(String)

    var description: String {
        switch self {
        case .during(let how): "killed during the step (\(how))"
        case .after(let how): "killed after the step (\(how))"
        case .missed(let how): "not killed: the app had ended (\(how))"
        }
    }
}

/// What a campaign did and found: kills per process and step, violations (each transaction counted once, however
/// many trials see it), and how long it took.
struct Report: Sendable {
    let seed: UInt64
    let engine: String
    let planned: Int
    /// A power-cut campaign's report: the machine's cuts, and what was acknowledged before them.
    let powerCut: Bool
    private(set) var trials = 0
    /// What the servers acknowledged in a power-cut campaign (answered purchases, acknowledged grants).
    private(set) var acknowledgedPurchases = 0
    private(set) var acknowledgedGrants = 0
    private(set) var kills: [Party: [Step: (during: Int, after: Int, missed: Int)]] = [:]
    private(set) var violations: [Violation.Kind: Set<String>] = [:]
    /// Per crash point aimed at (its name without `#n`): how many trials aimed at it, and in how many it fired.
    private(set) var crashPoints: [String: (aimed: Int, fired: Int)] = [:]
    /// Trials whose kill missed its step at first and was aimed again.
    private(set) var reaimed = 0
    /// Trials whose checks passed only after the system was settled once more (an app or a notification that
    /// needed another round), not violations.
    private(set) var resettled = 0
    private let started = ContinuousClock.now
    private var phases: [Phase: Duration] = [:]

    /// Where a trial's time goes.
    enum Phase: String, CaseIterable, Sendable {
        /// Bringing about what the step needs, and starting a server armed with its crash point.
        case prepare
        /// The step, the kill and the killed server's restart.
        case step
        /// The app reopened, notifications sent again.
        case settle
        /// The invariants and the merchant's reconciliation.
        case check
    }

    init(seed: UInt64, engine: String, planned: Int, powerCut: Bool = false) {
        self.seed = seed
        self.engine = engine
        self.planned = planned
        self.powerCut = powerCut
    }

    /// The parties killed: the three processes, or the machine.
    var parties: [Party] { powerCut ? [.machine] : Party.processes }

    mutating func acknowledged(purchases: Int, grants: Int) {
        acknowledgedPurchases = purchases
        acknowledgedGrants = grants
    }

    /// Records trial `plan`'s kill and what the checks after it found; answers the violations seen for the first
    /// time.
    mutating func record(
        _ plan: TrialPlan, _ outcome: KillOutcome, crashPoint: String?, reaims: Int, violations found: [Violation],
        resettles: Int
    ) -> [Violation] {
        trials += 1
        if resettles > 0 { resettled += 1 }
        if reaims > 0 { reaimed += 1 }
        if let crashPoint {
            var tally = crashPoints[crashPoint, default: (0, 0)]
            tally.aimed += 1
            if case .during = outcome { tally.fired += 1 }
            crashPoints[crashPoint] = tally
        }
        var tally = kills[plan.party, default: [:]][plan.step, default: (0, 0, 0)]
        switch outcome {
        case .during: tally.during += 1
        case .after: tally.after += 1
        case .missed: tally.missed += 1
        }
        kills[plan.party, default: [:]][plan.step] = tally
        return self.found(found)
    }

    /// Takes in violations found; answers those seen for the first time.
    @discardableResult
    mutating func found(_ found: [Violation]) -> [Violation] {
        var new: [Violation] = []
        for violation in found where violations[violation.kind, default: []].insert(violation.subject).inserted {
            new.append(violation)
        }
        return new
    }

    mutating func spent(_ duration: Duration, on phase: Phase) { phases[phase, default: .zero] += duration }

    /// Processes killed per party (during a step or after it).
    func killed(_ party: Party) -> Int {
        kills[party, default: [:]].values.reduce(0) { $0 + $1.during + $1.after }
    }

    func count(_ kind: Violation.Kind) -> Int { violations[kind]?.count ?? 0 }

    /// Kills that did not land during their step, even aimed again: after it ended, or not at all.
    var missedKills: Int {
        kills.values.flatMap(\.values).reduce(0) { $0 + $1.after + $1.missed }
    }

    /// No violation, and every kill landed during its step (every crash point aimed at fired).
    var isClean: Bool { violations.values.allSatisfy(\.isEmpty) && missedKills == 0 }

    var elapsed: Duration { ContinuousClock.now - started }

    /// The report printed at the end.
    var lines: [String] {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        func pad(_ text: String, _ width: Int) -> String {
            text + String(repeating: " ", count: max(1, width - text.count))
        }
        var lines = [
            "kiosk-chaos report: \(trials) of \(planned) trials, seed \(seed), \(engine)",
            String(
                format: "elapsed %.1f s, %.2f s a trial", seconds, trials == 0 ? 0 : seconds / Double(trials))
                + " ("
                + Phase.allCases.map { phase in
                    let spent = phases[phase, default: .zero] / max(1, trials)
                    let seconds = Double(spent.components.seconds) + Double(spent.components.attoseconds) / 1e18
                    return String(format: "%@ %.2f s", phase.rawValue, seconds)
                }.joined(separator: ", ") + ")",
            "kills (during the step + after it, and missed):",
            pad("", 10) + Step.allCases.map { pad($0.rawValue, 16) }.joined() + "total",
        ]
        for party in parties {
            let cells = Step.allCases.map { step -> String in
                let tally = kills[party, default: [:]][step, default: (0, 0, 0)]
                let missed = tally.missed > 0 ? ", \(tally.missed) missed" : ""
                return pad("\(tally.during) + \(tally.after)\(missed)", 16)
            }
            lines.append(pad(party.rawValue, 10) + cells.joined() + String(killed(party)))
        }
        lines.append(
            "killed: " + parties.map { "\($0.rawValue) \(killed($0))" }.joined(separator: ", "))
        if powerCut {
            lines.append("answered purchases: \(acknowledgedPurchases), acknowledged grants: \(acknowledgedGrants)")
            lines.append("lost answered purchases: \(count(.lostPurchase))")
            lines.append("lost acknowledged grants: \(count(.lostAcknowledgement))")
        }
        lines.append("re-aimed kills: \(reaimed)")
        lines.append("kills that missed their step: \(missedKills)")
        if !crashPoints.isEmpty {
            lines.append(
                "crash points fired/aimed: "
                    + crashPoints.keys.sorted().map { "\($0) \(crashPoints[$0]!.fired)/\(crashPoints[$0]!.aimed)" }
                    .joined(separator: ", "))
        }
        lines.append("lost grants: \(count(.lostGrant))")
        lines.append("duplicated grants: \(count(.duplicatedGrant))")
        let others = Violation.Kind.allCases.filter {
            ![.lostGrant, .duplicatedGrant, .lostPurchase, .lostAcknowledgement].contains($0)
        }
        lines.append("other violations: \(others.map(count).reduce(0, +))")
        for kind in others where count(kind) > 0 { lines.append("  \(kind.rawValue): \(count(kind))") }
        if resettled > 0 {
            lines.append("trials whose checks passed only after settling once more: \(resettled)")
        }
        lines.append(
            !violations.values.allSatisfy(\.isEmpty)
                ? "result: VIOLATIONS (seed \(seed))"
                : missedKills > 0
                    ? "result: KILLS MISSED THEIR STEP (seed \(seed))"
                    : "result: every charged payment granted exactly once")
        return lines
    }
}
