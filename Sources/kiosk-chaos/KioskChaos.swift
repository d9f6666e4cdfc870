// kiosk-chaos: the kill campaign. Every charged payment is delivered exactly once, whatever crashes: trial after
// trial, one of the three processes of a purchase (the app, the store, the merchant) is killed with SIGKILL in a
// purchase, a renewal, a refund or a notification's retry, started again, and the store's truth is compared with
// the merchant's ledger.
//
//     swift run -c release kiosk-chaos --trials 1000 [--seed S] [--postgres-url postgres://…]
//
// With --power-cut, each trial cuts the power of the machine the store and the merchant run on instead (their
// data on scripts/lazyfs.py's FUSE layer, which loses what was never fsynced):
//
//     swift run -c release kiosk-chaos --power-cut --trials 100 [--postgres-bin /usr/lib/postgresql/15/bin]

import ArgumentParser
import Foundation
import KioskTestSupport
import KioskTesting

@main
struct KioskChaos: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kiosk-chaos",
        abstract: "Kill the app, the store or the merchant at random, trial after trial; check every payment is "
            + "granted exactly once.",
        discussion: """
            Each trial picks (from the seed) a process and a step, kills the process with SIGKILL at a named \
            point (a server's KIOSK_CRASH_AT crash point, the app's n-th request) or after a random delay within \
            the step's measured duration, starts it again on the same data, lets the app and the store's \
            notifications finish what was interrupted, and checks against the store's transactions that each one \
            is granted exactly once in the merchant's ledger, each refund is taken back, each balance is what the \
            ledger says, and the merchant's reconciliation finds nothing. A kill that missed its step (or a crash \
            point the step never reached) is aimed again at the step run anew, up to three times. Exits non-zero on \
            any violation, and on a kill that still missed.
            """)

    @Option(help: "How many trials to run.")
    var trials = 100
    @Option(help: "The seed of every random choice (default: a new one; it is printed, so a run can be replayed).")
    var seed: UInt64?
    @Option(
        help: """
            Run the store and the merchant on PostgreSQL, e.g. postgres://kiosk:kiosk@127.0.0.1:5432/kiosk: each \
            gets a schema of its own, dropped at the end. Default: SQLite files in the work folder.
            """)
    var postgresUrl: String?
    @Option(help: "The kiosk binary (default: the one built beside kiosk-chaos).")
    var kioskBinary: String?
    @Option(help: "The coin-shop binary, the app (default: the one built beside kiosk-chaos).")
    var coinShopBinary: String?
    @Option(help: "How many customers (sandbox testers, each with a phone and a merchant account).")
    var customers = 3
    @Option(help: "Where the data, logs and phones go (default: a new temporary folder, removed after a clean run).")
    var workDir: String?
    @Flag(help: "Keep the work folder and the PostgreSQL schemas after a clean run too.")
    var keep = false
    @Flag(
        help: """
            Cut the power instead of killing one process: the store's and the merchant's data are on a FUSE layer \
            (scripts/lazyfs.py, run as root) that keeps what was written but not fsynced in memory; each trial kills \
            both servers (and their PostgreSQL) at a random moment of its step, drops that memory, starts them \
            again, and checks every purchase the store answered and every grant the merchant acknowledged survived.
            """)
    var powerCut = false
    @Option(help: "With --power-cut: a Python with fusepy (Debian's python3-fusepy).")
    var fusePython = "/usr/bin/python3"
    @Option(help: "With --power-cut: the FUSE layer (default: scripts/lazyfs.py of this checkout).")
    var lazyfs: String?
    @Option(
        help: """
            With --power-cut: run the store and the merchant on a PostgreSQL of the machine's own, its data \
            directory on the FUSE layer, from this bin folder (e.g. /usr/lib/postgresql/15/bin). Default: SQLite.
            """)
    var postgresBin: String?
    @Option(
        help: ArgumentHelp(
            "Break the merchant's ledger after the last trial (lost-grant, duplicate-grant) and check once more: "
                + "the checks' own test.", visibility: .hidden))
    var plant: Plant?

    func validate() throws {
        guard trials >= 1 else { throw ValidationError("--trials must be at least 1.") }
        if powerCut && postgresUrl != nil {
            throw ValidationError("--power-cut runs a PostgreSQL of its own on the FUSE layer: use --postgres-bin.")
        }
        if !powerCut && (postgresBin != nil || lazyfs != nil) {
            throw ValidationError("--postgres-bin and --lazyfs go with --power-cut.")
        }
        guard (1...20).contains(customers) else { throw ValidationError("--customers must be 1–20.") }
    }

    func run() async throws {
        // Beside this executable: a release campaign runs release servers and a release app.
        let folder =
            Bundle.main.executableURL?.resolvingSymlinksInPath().deletingLastPathComponent()
            ?? URL(fileURLWithPath: ".")
        let kiosk = URL(fileURLWithPath: kioskBinary ?? folder.appendingPathComponent("kiosk").path)
        let coinShop = URL(fileURLWithPath: coinShopBinary ?? folder.appendingPathComponent("coin-shop").path)
        for binary in [kiosk, coinShop] where !FileManager.default.isExecutableFile(atPath: binary.path) {
            throw ValidationError(
                "\(binary.path) is not an executable: build it beside kiosk-chaos (`swift build -c release` builds "
                    + "kiosk, coin-shop and kiosk-chaos together), or name it with --kiosk-binary / --coin-shop-binary."
            )
        }
        let seed = seed ?? UInt64.random(in: 1...999_999)
        let directory =
            workDir.map { URL(fileURLWithPath: $0, isDirectory: true) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-chaos-\(seed)-\(UUID().uuidString)")
        let schemas = postgresUrl.map { base in
            let run = "chaos_\(seed)_" + UUID().uuidString.lowercased().prefix(8)
            return (store: "\(run)_store", merchant: "\(run)_merchant", base: base)
        }
        var settings = CampaignSettings(
            trials: trials, seed: seed, customers: customers, kiosk: kiosk, coinShop: coinShop, directory: directory,
            postgres: schemas.map {
                (
                    TestDatabaseEngine.url($0.base, schema: $0.store),
                    TestDatabaseEngine.url($0.base, schema: $0.merchant)
                )
            })
        settings.plant = plant
        if powerCut {
            let script =
                lazyfs
                ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("scripts/lazyfs.py").path
            let postgres = try postgresBin.map { (bin: URL(fileURLWithPath: $0), port: try freeLoopbackPort()) }
            settings.powerCut = PowerCutSettings(
                python: URL(fileURLWithPath: fusePython), lazyFS: URL(fileURLWithPath: script), postgres: postgres)
            settings.postgres = postgres.map {
                let base = "postgres://kiosk@127.0.0.1:\($0.port)/postgres"
                return (TestDatabaseEngine.url(base, schema: "store"), TestDatabaseEngine.url(base, schema: "merchant"))
            }
        }
        emit(
            "kiosk-chaos: \(trials) \(powerCut ? "power cuts" : "trials"), seed \(seed) (replay with --seed \(seed)), "
                + "\(settings.postgres == nil ? "SQLite" : "PostgreSQL"), work folder \(directory.path)")
        let campaign = try Campaign(settings)
        // Stopped from outside (^C, a test's timeout): no server or app outlives the campaign.
        let stops = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                campaign.abandon()
                emit(
                    "kiosk-chaos stopped by signal \(number) (seed \(seed)); the work folder is kept: \(directory.path)"
                )
                Foundation.exit(128 + number)
            }
            source.resume()
            return source
        }
        defer { for stop in stops { stop.cancel() } }
        let report: Report
        do {
            report = try await campaign.run(progress: emit)
        } catch {
            emit("kiosk-chaos stopped (seed \(seed)): \(error)")
            emit("The work folder (logs, data, phones) is kept: \(directory.path)")
            throw ExitCode(2)
        }
        for line in report.lines { emit(line) }
        if report.isClean && !keep {
            try? FileManager.default.removeItem(at: directory)
            if let schemas {
                for schema in [schemas.store, schemas.merchant] {
                    try await TestDatabaseEngine.dropSchema(
                        schema, at: TestDatabaseEngine.url(schemas.base, schema: schema))
                }
            }
        } else {
            emit("The work folder (logs, data, phones) is kept: \(directory.path)")
        }
        if !report.isClean { throw ExitCode(1) }
    }
}
