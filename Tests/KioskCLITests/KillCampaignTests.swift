import Foundation
import KioskTestSupport
import KioskTesting
import Testing

/// The kill campaign in small: `kiosk-chaos` runs 12 trials on each engine, which kill each of the three
/// processes (the app, the store, the merchant) in each step (a purchase, a renewal, a refund, a notification's
/// retry) once, half of them at a named point (a crash point, the app's n-th request) and half after a random
/// delay; every charged payment must end up granted exactly once, every refund taken back, every balance what the
/// ledger says, and the merchant's reconciliation must find nothing.
@Suite(.runsServers) struct KillCampaignTests {
    static let trials = 12
    /// Fixed, so a failure here is replayed by `kiosk-chaos --trials 12 --seed 1501`.
    static let seed = 1501

    @Test(.timeLimit(.minutes(20)), arguments: TestDatabaseEngine.available)
    func everyPaymentIsGrantedOnceWhateverIsKilled(engine: TestDatabaseEngine) async throws {
        var arguments = ["--trials", String(Self.trials), "--seed", String(Self.seed)]
        var postgres: String?
        if engine == .postgres {
            postgres = try TestEnvironment.require(.postgreSQL)
            arguments += ["--postgres-url", postgres!]
        }
        let run = try await withPostgresSlot(ifUsing: postgres) {
            // Generous: a debug build on a loaded 2-core machine; a run takes well under a minute alone.
            try await KioskProcess.run(
                arguments, executable: KioskProcess.builtExecutable(named: "kiosk-chaos"), timeout: 420)
        }
        let output = run.stdout + run.stderr
        #expect(run.status == 0, "\(output)")
        #expect(output.contains("kiosk-chaos report: \(Self.trials) of \(Self.trials) trials"), "\(output)")
        let killed = try #require(output.split(separator: "\n").first { $0.hasPrefix("killed: ") }, "\(output)")
        for party in ["app", "store", "merchant"] {
            let count = killed.split(separator: ",").first { $0.contains(party) }
                .flatMap { Int($0.split(separator: " ").last ?? "") }
            #expect((count ?? 0) >= 1, "\(party) killed at least once: \(killed)")
        }
        #expect(output.contains("\nlost grants: 0\n"), "\(output)")
        #expect(output.contains("\nduplicated grants: 0\n"), "\(output)")
        #expect(output.contains("\nother violations: 0\n"), "\(output)")
    }
}
