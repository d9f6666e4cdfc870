import KioskCore

/// The three processes of a purchase: the app (`coin-shop`), the store (`kiosk serve`), the merchant
/// (`kiosk merchant serve`); and, in a power-cut campaign, the whole machine the store and the merchant run on.
enum Party: String, CaseIterable, Sendable {
    case app, store, merchant, machine

    /// The processes the kill campaign kills one at a time.
    static let processes: [Party] = [.app, .store, .merchant]
}

/// What the system is doing when a process is killed.
enum Step: String, CaseIterable, Sendable {
    /// The app pays, the store charges, the app delivers to the merchant and finishes (the store's notification
    /// races the app's delivery).
    case purchase
    /// The sandbox clock moves a subscription month: the store renews and notifies the merchant.
    case renewal
    /// The sandbox refunds a granted transaction: the store revokes it and notifies the merchant.
    case refund
    /// The store retries a notification the merchant never took (a refund sent while its URL did not answer),
    /// once the sandbox clock makes the retry due.
    case notification
}

/// How a process is killed.
enum Mechanism: String, Sendable {
    /// At a named moment: a server's crash point (`KIOSK_CRASH_AT`), the app's n-th request (before it leaves, or
    /// after its answer came back but before the app sees it).
    case point
    /// After a random delay within the step's measured duration.
    case delay
    /// A power cut of the machine after a random delay within the step's measured duration.
    case powerCut
}

/// One trial's kill: which process, in which step, how.
struct TrialPlan: Sendable {
    var party: Party
    var step: Step
    var mechanism: Mechanism
}

/// Which process is killed in which step, and how, for every trial of a campaign seeded `seed`.
///
/// Choices are random but stratified, so short runs cover everything: every 3 consecutive trials (from the first)
/// kill each process once, every 12 kill each process in each step once, and of each process's first two kills
/// (and of every later pair) one is at a named point and one after a random delay. A trial's own choices (the
/// user, the delay, the request, the product) come from its own stream, so trial n makes the same choices whatever
/// the earlier trials met.
struct CampaignPlan: Sendable {
    let seed: UInt64
    static let blockSize = Party.processes.count * Step.allCases.count

    func trial(_ index: Int) -> TrialPlan {
        var random = SplitMix64(seed: seed, stream: index / Self.blockSize, salt: 0xB10C)
        let parties = Party.processes
        // Per process: the order of the four steps, and of its mechanisms (one of each per pair of kills).
        var steps: [Party: [Step]] = [:]
        var mechanisms: [Party: [Mechanism]] = [:]
        for party in parties {
            steps[party] = Step.allCases.shuffled(using: &random)
            mechanisms[party] =
                [Mechanism.point, .delay].shuffled(using: &random) + [Mechanism.point, .delay].shuffled(using: &random)
        }
        let position = index % Self.blockSize
        let round = position / parties.count
        var order: [Party] = []
        for _ in 0...round { order = parties.shuffled(using: &random) }
        let party = order[position % parties.count]
        return TrialPlan(party: party, step: steps[party]![round], mechanism: mechanisms[party]![round])
    }

    /// Power-cut trial `index`: every 4 consecutive trials (from the first) cut the power once in each step.
    func powerCut(_ index: Int) -> TrialPlan {
        var random = SplitMix64(seed: seed, stream: index / Step.allCases.count, salt: 0xC07)
        let steps = Step.allCases.shuffled(using: &random)
        return TrialPlan(party: .machine, step: steps[index % steps.count], mechanism: .powerCut)
    }

    /// What a trial's own choices are for: the step (customer, product, refund), or the kill (delay, request,
    /// crash point's time). Separate streams, so how many choices the step took cannot move the kill.
    enum Purpose: UInt64 {
        case step = 0x57E9
        case kill = 0x4111
    }

    /// The generator of trial `index`'s own choices for `purpose`.
    func random(forTrial index: Int, purpose: Purpose = .step) -> SplitMix64 {
        SplitMix64(seed: seed, stream: index, salt: purpose.rawValue)
    }
}
