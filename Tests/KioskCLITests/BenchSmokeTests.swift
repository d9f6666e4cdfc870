import Foundation
import KioskTestSupport
import Testing

/// `kiosk-bench` run as built (the debug build in CI) with its smallest settings, so a change that breaks a
/// benchmark fails here rather than on the next manual run. Each benchmark must print its line with a rate and a
/// ratio; no figure is judged (a smoke run measures nothing worth comparing).
@Suite(.runsServers) struct BenchSmokeTests {
    /// Each report line kiosk-bench prints with one SQLite store, `--renewals 10` (1, 3 and 10 due at once).
    static let benchmarks = [
        "JWS sign (", "product aggregate insert (SQLite, FULL sync)", "POST product (validate + commit + answer)",
        "purchase over HTTP (SQLite: charge+JWS+queue)", "verifyReceipt (app receipt, 8 in flight)",
        "verifyReceipt (receipts seen once, 8 in flight)", "Get Transaction Info (JWT auth, 8 in flight)",
        "verifyReceipt answer written (20 purchases)", "JWS verify (SignedDataVerifier, transaction)",
        "merchant delivery, fresh transaction (SQLite)", "merchant delivery, replayed transaction (SQLite)",
        "renewals, 1 due at once (SQLite)", "renewals, 3 due at once (SQLite)", "renewals, 10 due at once (SQLite)",
    ]
    /// With wrk on the PATH, the load section's report lines; without it, its one "skipped" line.
    static let loadBenchmarks = [
        "GET /health (64 connections)", "purchase, fresh keys (SQLite, 64 connections)",
        "verifyReceipt (64 connections)", "Get Transaction Info (64 connections)",
    ]

    /// The pages and lists the large-catalog section times.
    static let catalogPages = [
        "console overview", "console app page, first 100 products", "console app page 50", "console product page",
        "console customers", "admin apps", "admin products, limit 100 offset 5000", "admin one product",
        "admin catalog export, JSON", "admin catalog export, .storekit",
    ]

    @Test func everyBenchmarkPrintsARateAndARatio() async throws {
        // An empty KIOSK_TEST_POSTGRES_URL means no PostgreSQL, as in the tests: the bench once took it for a URL and
        // printed "PostgreSQL" rows measured on an SQLite file named `?schema=kiosk_bench_…`.
        let result = try await KioskProcess.run(
            ["--seconds", "0.1", "--renewals", "10", "--catalog", "150"],
            environment: ["KIOSK_TEST_POSTGRES_URL": ""],
            executable: KioskProcess.builtExecutable(named: "kiosk-bench"),
            timeout: 600)
        #expect(result.status == 0, "\(result.stdout)\n-- stderr:\n\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let reports = lines.compactMap(Self.report)
        // In CI (.ci/run installs wrk) the 64-connection section must run; elsewhere it may say it skipped.
        let withWrk = TestEnvironment.value(.wrk) != nil
        if TestEnvironment.isCI { _ = try TestEnvironment.require(.wrk) }
        #expect(lines.contains { $0.hasPrefix("64 connections: skipped") } == !withWrk, "\(result.stdout)")
        let expected = Self.benchmarks + (withWrk ? Self.loadBenchmarks : [])
        #expect(reports.count == expected.count, "\(result.stdout)")
        // The large-catalog section prints an import line, one timed line per page and the memory line.
        #expect(
            lines.contains { $0.hasPrefix("import 150 products in 1 app(s) (SQLite, one request per app): median ") })
        #expect(lines.contains { $0.hasPrefix("  a one-row write during an import: longest ") })
        for page in Self.catalogPages {
            #expect(
                lines.contains { $0.hasPrefix(page) && $0.contains(" ms ") && $0.contains(" KiB ") },
                "\(page) in\n\(result.stdout)")
        }
        #expect(lines.contains { $0.hasPrefix("resident memory with 150 products in the store: ") })
        // Each renewal run reports the Server API reads made while it ran, and the purchase run its CPU per purchase.
        #expect(
            lines.count { $0.hasPrefix("  a Server API read meanwhile (one in flight): ") } == 3, "\(result.stdout)")
        #expect(lines.count { $0.hasPrefix("  CPU per purchase: ") && $0.contains(" µs ") } == 1, "\(result.stdout)")
        // The SQLite runs count the pages each purchase (one client, and 64 connections) and renewal wrote to the
        // write-ahead log.
        #expect(
            lines.count { $0.hasPrefix("  log pages per purchase: ") } == (withWrk ? 2 : 1), "\(result.stdout)")
        #expect(lines.count { $0.hasPrefix("  log pages per renewal: ") } == 3, "\(result.stdout)")
        // The 64-connection purchases count the log's syncs, a fraction of one per purchase.
        #expect(
            lines.count { $0.hasPrefix("  log syncs per purchase: ") } == (withWrk ? 1 : 0), "\(result.stdout)")
        for name in expected {
            let matching = reports.filter { $0.name.hasPrefix(name) }
            #expect(matching.count == 1, "\(name): \(matching) in\n\(result.stdout)")
            for report in matching {
                #expect(report.rate > 0 && report.baseline > 0 && report.ratio > 0, "\(report)")
            }
        }
    }

    /// A report line: `name  123/s  vs baseline  456/s  ratio 0.270`, the load rows with latencies after each rate
    /// (`107/s p99 102.98 ms`) and after the ratio.
    static func report(_ line: String) -> (name: String, rate: Double, baseline: Double, ratio: Double)? {
        let pattern =
            /^\s*(?<name>\S.*?)\s+(?<rate>\d+)\/s.*?\s{2}vs\s.+?\s(?<baseline>\d+)\/s.*?\s{2}ratio (?<ratio>[0-9.]+)/
        guard let match = line.firstMatch(of: pattern), let rate = Double(match.rate),
            let baseline = Double(match.baseline), let ratio = Double(match.ratio)
        else { return nil }
        return (String(match.name), rate, baseline, ratio)
    }
}
