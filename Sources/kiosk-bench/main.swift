// kiosk-bench: measures the store's costly steps against baselines taken in the same run, and prints ratios.
//
//     swift run -c release kiosk-bench [--seconds 2] [--renewals 100000] [--catalog 100000] [--only sign,purchase,…]
//
// Sections run in order 1–6, then 8 (the merchant), 9 (64 connections, with wrk), 10 (a large catalog) and 7
// (renewals, the longest); `--only` names the ones to run (sign, product, console, purchase, verify, jws, merchant,
// load, catalog, renewals); `--renewals 0` and `--catalog 0` skip theirs.
//
// Each line compares an operation with the cheapest thing it cannot avoid (a bare P-256 signature, a one-row
// commit, the health endpoint), so numbers stay comparable across machines and runs.
import Crypto
import Foundation
import KioskCore
import KioskHTTP
import KioskProtocol
import KioskSQL
import KioskSigning
import KioskTestSupport
import KioskTesting
import Logging

// The log handler `kiosk serve` installs, so the stores measured here log (and pay for logging) as it does.
KioskLogging.bootstrap(format: .text, level: .warning)

/// Runs `body` repeatedly for about `seconds` and returns operations per second.
func rate(seconds: Double, _ body: () async throws -> Void) async throws -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    let limit = Duration.milliseconds(Int(seconds * 1000))
    var count = 0
    while clock.now - start < limit {
        for _ in 0..<10 { try await body() }
        count += 10
    }
    let elapsed = clock.now - start
    return Double(count) / elapsed.inSeconds
}

extension Duration {
    /// The duration in seconds, with its fraction.
    var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// CPU time this process has used so far (user and system, every thread): the server and the bench's own client.
/// On a machine whose disk and neighbours make rates vary by a third from run to run, CPU per operation is the steadier
/// figure to compare before and after a change.
func processCPUTime() -> Duration {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let microseconds =
        Int64(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1_000_000
        + Int64(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
    return .microseconds(microseconds)
}

/// `kiosk_database_log_pages_total` from the store's `/metrics`: nil on PostgreSQL, which does not report it.
func logPagesWritten(_ store: TestStore) async throws -> Double? {
    try await store.metric("kiosk_database_log_pages_total")
}

/// `  log pages per <what>: 32.3 (…)`: what each operation wrote to SQLite's write-ahead log since `before` (a
/// ``logPagesWritten(_:)``); nothing on PostgreSQL. A count, so unlike the rates it does not move with the machine.
func reportLogPages(per what: String, operations: Int, _ store: TestStore, since before: Double?) async throws {
    guard let before, let after = try await logPagesWritten(store), operations > 0 else { return }
    emit(
        "  log pages per \(what): "
            + String(format: "%.1f (4 KiB each, SQLite's write-ahead log)", (after - before) / Double(operations)))
}

/// `kiosk_database_writer_busy_seconds_total` from the store's `/metrics`: nil on PostgreSQL, which has no one writer.
func writerBusySeconds(_ store: TestStore) async throws -> Double? {
    try await store.metric("kiosk_database_writer_busy_seconds_total")
}

/// `  writer time per <what>: 402 µs (…)`: how long SQLite's one writer spent on each operation since `before` (a
/// ``writerBusySeconds(_:)``), the part of it nothing runs beside, and the share of `elapsed` it was busy; nothing on
/// PostgreSQL. At a writer busy nearly all the time, the writer is what limits the rate.
func reportWriterTime(
    per what: String, operations: Double, elapsed: Double, _ store: TestStore, since before: Double?
) async throws {
    guard let before, let after = try await writerBusySeconds(store), operations > 0, elapsed > 0 else { return }
    emit(
        "  writer time per \(what): "
            + String(
                format: "%.0f µs (SQLite's one writer, commit included, not the log's sync), busy %.0f%% of the run",
                (after - before) * 1e6 / operations, (after - before) / elapsed * 100))
}

/// `  log syncs per <what>: 0.05 (…)`: how many times SQLite's write-ahead log was synced for each operation since
/// `before` (`kiosk_database_log_syncs_total`); nothing on PostgreSQL. A sync makes every commit before it durable, so
/// under load one serves many operations.
func reportLogSyncs(per what: String, operations: Int, _ store: TestStore, since before: Double?) async throws {
    guard let before, let after = try await store.metric("kiosk_database_log_syncs_total"), operations > 0 else {
        return
    }
    emit(
        "  log syncs per \(what): "
            + String(format: "%.3f (each makes every commit before it durable)", (after - before) / Double(operations)))
}

/// `kiosk_database_statements_total` from the store's `/metrics`, which both engines report.
func statementsRun(_ store: TestStore) async throws -> Double {
    guard let statements = try await store.metric("kiosk_database_statements_total") else {
        preconditionFailure("the store's /metrics has no kiosk_database_statements_total")
    }
    return statements
}

/// `  statements per <what>: 16.0 (…)`: the statements each operation ran since `before` (a ``statementsRun(_:)``),
/// the reads that scrape `/metrics` included. A count, like the log pages.
func reportStatements(per what: String, operations: Int, _ store: TestStore, since before: Double) async throws {
    guard operations > 0 else { return }
    let after = try await statementsRun(store)
    emit(
        "  statements per \(what): "
            + String(
                format: "%.1f (BEGIN and COMMIT included; a round trip each on PostgreSQL)",
                (after - before) / Double(operations)))
}

/// `  CPU per <what>: 812 µs (…)`: `used` (a difference of ``processCPUTime()``) over `operations`.
func reportCPU(per what: String, operations: Double, used: Duration) {
    let microseconds = used.inSeconds * 1e6
    emit(
        "  CPU per \(what): "
            + String(format: "%.0f µs (server and client, this process)", microseconds / max(operations, 1)))
}

func report(_ name: String, _ measured: Double, baselineName: String, _ baseline: Double) {
    func pad(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }
    func perSecond(_ value: Double) -> String { pad(String(format: "%.0f/s", value), 10) }
    emit(
        pad(name, 52) + perSecond(measured) + "  vs " + pad(baselineName, 16) + perSecond(baseline)
            + String(format: "  ratio %.3f", measured / baseline))
}

let arguments = CommandLine.arguments
let usage = """
    usage: kiosk-bench [--seconds 2] [--renewals 100000] [--catalog 100000] [--only sign,product,console,purchase,\
    verify,jws,merchant,load,catalog,renewals]

    """
if arguments.contains("--help") || arguments.contains("-h") {
    FileHandle.standardOutput.write(Data(usage.utf8))
    exit(0)
}
// Every flag is known and takes a value: a mistyped one stops the run instead of starting a long default one.
for (index, argument) in arguments.enumerated().dropFirst() where index % 2 == 1 {
    guard ["--seconds", "--renewals", "--catalog", "--only"].contains(argument), index + 1 < arguments.count else {
        FileHandle.standardError.write(Data("kiosk-bench: unexpected '\(argument)'\n\(usage)".utf8))
        exit(64)
    }
}

/// The number after `name` on the command line, `fallback` when the flag is absent; anything but a number in
/// `range` stops the run with a message.
func option<Number: LosslessStringConvertible & Comparable>(
    _ name: String, in range: ClosedRange<Number>, default fallback: Number
) -> Number {
    guard let index = arguments.firstIndex(of: name) else { return fallback }
    guard index + 1 < arguments.count, let value = Number(arguments[index + 1]), range.contains(value) else {
        FileHandle.standardError.write(
            Data("kiosk-bench: \(name) takes a number from \(range.lowerBound) to \(range.upperBound)\n".utf8))
        exit(64)
    }
    return value
}

let seconds = option("--seconds", in: 0.1...3_600.0, default: 2.0)

/// The sections a run measures, by name.
let sectionNames = [
    "sign", "product", "console", "purchase", "verify", "jws", "merchant", "load", "catalog", "renewals",
]
let chosenSections: Set<String> = {
    guard let index = arguments.firstIndex(of: "--only") else { return Set(sectionNames) }
    let names = index + 1 < arguments.count ? arguments[index + 1].split(separator: ",").map(String.init) : []
    guard !names.isEmpty, names.allSatisfy(sectionNames.contains) else {
        FileHandle.standardError.write(
            Data("kiosk-bench: --only takes a comma-separated list of \(sectionNames.joined(separator: ", "))\n".utf8))
        exit(64)
    }
    return Set(names)
}()

/// Whether this run measures the section `name`.
func wanted(_ name: String) -> Bool { chosenSections.contains(name) }
emit("kiosk-bench: each figure over ~\(seconds) s on this machine; compare ratios, not absolute rates")

// 1. Signing a transaction-sized JWS against a bare P-256 signature of the same bytes.
if wanted("sign") {
    let identity = try SigningIdentity.generate(environment: .sandbox, now: Date())
    let signer = JWSSigner(identity: identity)
    let payload = Array(String(repeating: "{\"transactionId\":\"2000000000000001\"}", count: 13).utf8)
    let rawSign = try await rate(seconds: seconds) { _ = try identity.leafPrivateKey.signature(for: payload) }
    let jwsSign = try await rate(seconds: seconds) { _ = try signer.sign(payloadJSON: payload) }
    report("JWS sign (\(payload.count)-byte payload)", jwsSign, baselineName: "P-256 sign", rawSign)
}

// 2. Writing a whole product aggregate against a one-row commit, on a fresh SQLite file.
if wanted("product") {
    var logger = Logger(label: "kiosk-bench")
    logger.logLevel = .error
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-bench-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let database = try await DatabaseOpener.open(
        url: directory.appendingPathComponent("bench.sqlite").path, logger: logger)
    let now = Date(timeIntervalSince1970: 1_767_225_600)
    try await database.transaction { tx in
        try await tx.insertApp(App(id: 1, bundleId: "com.example.bench", name: "Bench", createdAt: now, updatedAt: now))
    }
    var settingNumber = 0
    let oneRow = try await rate(seconds: seconds) {
        settingNumber += 1
        let value = String(settingNumber)
        try await database.transaction { tx in try await tx.setSetting("bench", to: value) }
    }
    var productNumber = 0
    let aggregate = try await rate(seconds: seconds) {
        productNumber += 1
        let product = Product(
            appId: 1, productId: "com.example.bench.\(productNumber)", referenceName: "Bench", type: .consumable,
            pricing: Pricing(tier: 1, customPrices: ["CHN": 600]),
            localizations: [
                ProductLocalization(locale: "en_US", displayName: "Coins", description: "A pile of coins"),
                ProductLocalization(locale: "zh_CN", displayName: "金币", description: "一堆金币"),
            ], reviewState: .readyToSubmit, createdAt: now, updatedAt: now)
        try await database.transaction { tx in try await tx.insertProduct(product) }
    }
    report("product aggregate insert (SQLite, FULL sync)", aggregate, baselineName: "one-row commit", oneRow)
    try await database.close()
}

// 3. A console write over HTTP against the cheapest request the same server answers.
if wanted("console") {
    try await withTestStore { store in
        _ = try await store.request(
            .POST, AdminRoutes.apps.path(), json: ["bundleId": "com.example.http", "name": "HTTP"])
        let health = try await rate(seconds: seconds) { _ = try await store.request(.GET, "/health") }
        var number = 0
        let create = try await rate(seconds: seconds) {
            number += 1
            let answer = try await store.request(
                .POST, AdminRoutes.products.path("com.example.http"),
                json: [
                    "productId": "com.example.http.\(number)", "type": "consumable", "referenceName": "Coins",
                    "pricing": ["tier": 1],
                    "localizations": [["locale": "en_US", "displayName": "Coins", "description": "A pile of coins"]],
                ])
            precondition(answer.status == 201, "product creation failed: \(answer.text)")
        }
        report("POST product (validate + commit + answer)", create, baselineName: "GET /health", health)
    }
}

// 4. Purchases: a payment over HTTP until its signed transaction and queue entry are durable, against a one-row
// commit on the same store's database (SQLite always; PostgreSQL too when KIOSK_TEST_POSTGRES_URL is set and not
// empty, as the tests read it).
let postgresURL = TestEnvironment.value(.postgreSQL)
for (engine, url) in [("SQLite", nil), ("PostgreSQL", postgresURL)]
where wanted("purchase") && (engine == "SQLite" || url != nil) {
    let schemaURL = url.map {
        $0 + ($0.contains("?") ? "&" : "?") + "schema=kiosk_bench_\(UInt32.random(in: 0...UInt32.max))"
    }
    try await withTestStore(databaseURL: schemaURL) { store in
        let token = try await store.openShop(
            bundleId: "com.example.shop", productId: "com.example.coins", type: "consumable")
        let database = store.built.database
        var commitNumber = 0
        let commit = try await rate(seconds: seconds) {
            commitNumber += 1
            let value = String(commitNumber)
            try await database.transaction { tx in try await tx.setSetting("bench", to: value) }
        }
        var purchases = 0
        let pagesBefore = try await logPagesWritten(store)
        let statementsBefore = try await statementsRun(store)
        let writerBefore = try await writerBusySeconds(store)
        let cpuStart = processCPUTime()
        let started = ContinuousClock.now
        let purchase = try await rate(seconds: seconds) {
            let answer = try await store.request(
                .POST, "/sandbox/storekit/v1/payments",
                json: ["productId": "com.example.coins", "quantity": 1, "idempotencyKey": UUID().uuidString],
                token: .some(token))
            precondition(answer.json["state"] as? String == "purchased", "purchase failed: \(answer.text)")
            purchases += 1
        }
        let elapsed = ContinuousClock.now - started
        report("purchase over HTTP (\(engine): charge+JWS+queue)", purchase, baselineName: "one-row commit", commit)
        reportCPU(per: "purchase", operations: Double(purchases), used: processCPUTime() - cpuStart)
        try await reportWriterTime(
            per: "purchase", operations: Double(purchases), elapsed: elapsed.inSeconds, store, since: writerBefore)
        try await reportLogPages(per: "purchase", operations: purchases, store, since: pagesBefore)
        try await reportStatements(per: "purchase", operations: purchases, store, since: statementsBefore)
    }
}

// 5. Verification over HTTP with 8 requests in flight: verifyReceipt and the Server API's Get Transaction Info
// against a bare Hummingbird endpoint answering a fixed JSON body of the same size, on the same loopback. The Server
// API's per-key rate limit is lifted: it would measure the limit, not the endpoint.
if wanted("verify") {
    try await withTestStore(serverAPIRequestsPerSecond: 1_000_000) { store in
        let fixture = try await VerificationFixture(store)
        try await withBareJSONServer(bodySize: fixture.signedTransaction.count + 28) { bareURL in
            let concurrency = 8
            let bare = try await load(seconds: seconds, concurrency: concurrency) { try await get(bareURL) }
            @Sendable func verify(_ body: String) async throws {
                let answer = try await post(fixture.verifyReceiptURL, json: Data(body.utf8))
                precondition(
                    String(decoding: answer, as: UTF8.self).contains(#""status":0"#),
                    "verifyReceipt failed: \(String(decoding: answer, as: UTF8.self))")
            }
            let verifyReceipt = try await load(seconds: seconds, concurrency: concurrency) {
                try await verify(fixture.verifyReceiptBody)
            }
            report("verifyReceipt (app receipt, 8 in flight)", verifyReceipt, baselineName: "bare JSON GET", bare)
            // The row above sends one receipt, which the store verifies once and then remembers, as it does for an
            // app that sends its receipt again; this one sends each receipt once, until they run out (at most 20,000
            // of about 5 KB each, fetched first, so a long run stops this row early rather than fill memory).
            let fresh = try await fixture.freshVerifyReceiptBodies(count: min(Int(seconds * 3_000), 20_000))
            let firstSeen = try await load(each: fresh, seconds: seconds, concurrency: concurrency, verify)
            report("verifyReceipt (receipts seen once, 8 in flight)", firstSeen, baselineName: "bare JSON GET", bare)
            let transactionInfo = try await load(seconds: seconds, concurrency: concurrency) {
                try await get(fixture.transactionInfoURL, headers: [("Authorization", "Bearer \(fixture.bearer)")])
            }
            report(
                "Get Transaction Info (JWT auth, 8 in flight)", transactionInfo, baselineName: "bare JSON GET", bare)
        }
    }
}

// 5b. verifyReceipt's answer for an account of 20 purchases, one of them a subscription: written as bytes, as the
// store sends it, against `JSONEncoder` writing the same bytes.
if wanted("verify") {
    let answer = VerifyReceiptResponse.benchSample(purchases: 20)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
    let (sample, expected) = (try answer.jsonBytes(), Array(try encoder.encode(answer)))
    precondition(sample == expected, "the written answer is not the encoder's")
    let encoded = try await rate(seconds: seconds) { _ = try encoder.encode(answer) }
    let written = try await rate(seconds: seconds) { _ = try answer.jsonBytes() }
    report("verifyReceipt answer written (20 purchases)", written, baselineName: "JSONEncoder", encoded)
}

// 6. Verifying a signed transaction locally as a merchant does (SignedDataVerifier: chain to the root at its
// signing date, markers, ES256, bundle id and environment, typed decode) against a bare P-256 verify of the same bytes.
if wanted("jws") {
    let chain = try SigningIdentity.generate(environment: .sandbox, now: Date())
    let signedDate = Date().millisecondsSince1970
    let jws = try JWSSigner(identity: chain).sign(
        payload: JWSTransactionDecodedPayload(
            transactionId: "2000000000000001", originalTransactionId: "2000000000000001", bundleId: "com.example.bench",
            productId: "com.example.coins", purchaseDate: signedDate, originalPurchaseDate: signedDate, quantity: 1,
            type: "Consumable", signedDate: signedDate, environment: "Sandbox", storefront: "USA",
            storefrontId: "143441", currency: "USD", price: 990))
    let signingInput = Array(jws.utf8[..<jws.utf8.lastIndex(of: UInt8(ascii: "."))!])
    let signature = try chain.leafPrivateKey.signature(for: signingInput)
    let publicKey = chain.leafPrivateKey.publicKey
    let verifier = try SignedDataVerifier(
        rootCertificates: [chain.root], environment: .sandbox, bundleId: "com.example.bench", appAppleId: nil)
    let rawVerify = try await rate(seconds: seconds) {
        precondition(publicKey.isValidSignature(signature, for: signingInput))
    }
    let jwsVerify = try await rate(seconds: seconds) {
        _ = try await verifier.verifyAndDecodeTransaction(jws)
    }
    report("JWS verify (SignedDataVerifier, transaction)", jwsVerify, baselineName: "P-256 verify", rawVerify)
}

// 8. The merchant: delivering a fresh signed transaction (verify + grant + entitlements) and replaying a granted
// one, against the merchant's /health, per engine (the store and the merchant on the same engine).
for (engine, url) in [("SQLite", nil), ("PostgreSQL", postgresURL)]
where wanted("merchant") && (engine == "SQLite" || url != nil) {
    func schema() -> String? {
        url.map { $0 + ($0.contains("?") ? "&" : "?") + "schema=kiosk_bench_\(UInt32.random(in: 0...UInt32.max))" }
    }
    let (delivery, replay, health) = try await benchmarkMerchantDeliveries(
        seconds: seconds, storeDatabaseURL: schema(), merchantDatabaseURL: schema())
    report("merchant delivery, fresh transaction (\(engine))", delivery, baselineName: "its /health", health)
    report("merchant delivery, replayed transaction (\(engine))", replay, baselineName: "its /health", health)
}

// 9. Under load: 64 connections from wrk (a separate process) against the store in this process, and against a
// bare Hummingbird server answering a fixed JSON body: the framework's own limit on this machine.
if wanted("load") {
    if wrkPath == nil {
        emit("64 connections: skipped, \(WrkMissing())")
    } else {
        try await withTestStore(serverAPIRequestsPerSecond: 1_000_000) { store in
            let fixture = try await VerificationFixture(store)
            let token = try await store.openShop(
                bundleId: "com.example.load", productId: "com.example.load.coins", type: "consumable")
            try await withBareJSONServer(bodySize: fixture.signedTransaction.count + 28) { bareURL in
                let bare = try await wrk(bareURL, seconds: seconds)
                emit(
                    "bare Hummingbird fixed JSON GET (64 connections)".padding(
                        toLength: 52, withPad: " ", startingAt: 0)
                        + String(
                            format: "%.0f/s p50 %.2f ms p99 %.2f ms", bare.load.requestsPerSecond,
                            bare.load.p50Milliseconds, bare.load.p99Milliseconds))
                let health = try await wrk(store.baseURL + "/health", seconds: seconds)
                report("GET /health (64 connections)", health, baselineName: "bare JSON GET", bare)
                let writerBefore = try await writerBusySeconds(store)
                let pagesBefore = try await logPagesWritten(store)
                let syncsBefore = try await store.metric("kiosk_database_log_syncs_total")
                let started = ContinuousClock.now
                let purchase = try await wrk(
                    store.baseURL + "/sandbox/storekit/v1/payments", seconds: seconds,
                    headers: ["Authorization: Bearer \(token)"],
                    jsonBody: #"{"productId":"com.example.load.coins","quantity":1,"idempotencyKey":"{n}"}"#)
                let elapsed = (ContinuousClock.now - started).inSeconds
                report("purchase, fresh keys (SQLite, 64 connections)", purchase, baselineName: "bare JSON GET", bare)
                try await reportWriterTime(
                    per: "purchase", operations: purchase.load.requestsPerSecond * elapsed, elapsed: elapsed, store,
                    since: writerBefore)
                try await reportLogPages(
                    per: "purchase", operations: Int(purchase.load.requestsPerSecond * elapsed), store,
                    since: pagesBefore)
                try await reportLogSyncs(
                    per: "purchase", operations: Int(purchase.load.requestsPerSecond * elapsed), store,
                    since: syncsBefore)
                let verifyReceipt = try await wrk(
                    fixture.verifyReceiptURL, seconds: seconds, jsonBody: fixture.verifyReceiptBody)
                report("verifyReceipt (64 connections)", verifyReceipt, baselineName: "bare JSON GET", bare)
                let transactionInfo = try await wrk(
                    fixture.transactionInfoURL, seconds: seconds, headers: ["Authorization: Bearer \(fixture.bearer)"])
                report("Get Transaction Info (64 connections)", transactionInfo, baselineName: "bare JSON GET", bare)
            }
        }
    }
}

// 10. A large catalog: every console page and admin list that shows products, timed with `--catalog` products in
// the store (10,000 to an app), and the time each app's import takes.
let catalogSize = option("--catalog", in: 0...1_000_000, default: 100_000)
if wanted("catalog") && catalogSize > 0 {
    try await benchmarkLargeCatalog(products: catalogSize)
}

// 7. Renewals: how fast the scheduler renews subscriptions that all fall due at once, at three sizes per engine; the
// time per renewal staying flat as the count grows tenfold shows the cost grows linearly.
let renewalCount = option("--renewals", in: 0...10_000_000, default: 100_000)
for (engine, url) in [("SQLite", nil), ("PostgreSQL", postgresURL)]
where wanted("renewals") && renewalCount > 0 && (engine == "SQLite" || url != nil) {
    var perRenewal: [(Int, Double)] = []
    for count in [renewalCount / 10, renewalCount * 3 / 10, renewalCount] where count > 0 {
        let schemaURL = url.map {
            $0 + ($0.contains("?") ? "&" : "?") + "schema=kiosk_bench_\(UInt32.random(in: 0...UInt32.max))"
        }
        let (renewals, commits, reads, logPages) = try await benchmarkRenewals(databaseURL: schemaURL, count: count)
        report("renewals, \(count) due at once (\(engine))", renewals, baselineName: "one-row commit", commits)
        emit(
            "  a Server API read meanwhile (one in flight): "
                + String(
                    format: "%.0f/s p50 %.2f ms p99 %.2f ms", reads.requestsPerSecond, reads.p50Milliseconds,
                    reads.p99Milliseconds))
        if let logPages {
            emit("  log pages per renewal: " + String(format: "%.1f (4 KiB each, SQLite's write-ahead log)", logPages))
        }
        perRenewal.append((count, 1_000_000 / renewals))
    }
    if let first = perRenewal.first, let last = perRenewal.last {
        emit(
            "  \(engine): "
                + String(format: "%.0f µs per renewal at %d, %.0f µs at %d", first.1, first.0, last.1, last.0)
                + String(
                    format: " (×%.2f per renewal for ×%d subscriptions)", last.1 / first.1, last.0 / max(first.0, 1)))
    }
}
