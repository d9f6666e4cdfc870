import AsyncHTTPClient
import Foundation
import KioskCore
import KioskProtocol
import KioskStorage
import KioskTestSupport
import KioskTesting
import NIOCore

/// Section 7: the renewal scheduler. Seeds `count` monthly sandbox subscriptions that all fall due at once, moves the
/// sandbox clock past their period end, and measures how fast the store renews them all — each renewal one signed
/// transaction, a queue entry, a DID_RENEW notification and the subscription's next job — against a one-row commit on
/// the same database. Run at several sizes, the time per renewal shows whether the cost grows linearly.
///
/// Meanwhile one client reads a transaction through the Server API, one request after another: `readsDuring` is how
/// long a read waits while renewal batches hold the writer.
func benchmarkRenewals(databaseURL: String?, count: Int) async throws -> (
    renewalsPerSecond: Double, commitsPerSecond: Double, readsDuring: LoadResult, logPages: Double?
) {
    try await withTestStore(databaseURL: databaseURL, serverAPIRequestsPerSecond: 1_000_000) { store in
        let bundleId = "com.example.renew"
        let productId = "com.example.renew.monthly"
        let template = try await store.firstSubscription(bundleId: bundleId, productId: productId)
        try await store.built.database.seedSubscriptions(count - 1, copying: template)
        let reader = try await VerificationFixture(store)

        let database = store.built.database
        var commitNumber = 0
        let commits = try await rate(seconds: 1) {
            commitNumber += 1
            let value = String(commitNumber)
            try await database.transaction { tx in try await tx.setSetting("bench", to: value) }
        }

        let pagesBefore = try await logPagesWritten(store)
        let clock = ContinuousClock()
        let start = clock.now
        let reads = Task {
            var latencies: [Duration] = []
            while !Task.isCancelled {
                let began = clock.now
                do {
                    try await get(reader.transactionInfoURL, headers: [("Authorization", "Bearer \(reader.bearer)")])
                } catch  where Task.isCancelled {
                    break  // the renewals ended while this read was in flight
                }
                latencies.append(clock.now - began)
            }
            return latencies
        }
        let answer = try await advanceSandboxClock(store, by: "5m")
        let elapsed = clock.now - start
        reads.cancel()
        let readsDuring = LoadResult(latencies: try await reads.value, elapsed: elapsed)
        let renewed = answer["renewed"] as? Int ?? -1
        precondition(renewed == count, "expected \(count) renewals, the store reports: \(answer)")
        let seconds = elapsed.inSeconds
        let pagesAfter = try await logPagesWritten(store)
        let logPages = pagesBefore.flatMap { before in pagesAfter.map { ($0 - before) / Double(count) } }
        return (Double(count) / seconds, commits, readsDuring, logPages)
    }
}

/// `POST /sandbox/test/v1/clock` advance, which answers once everything due ran: with a read timeout long enough for
/// the largest run (the test store's own requests give up after two minutes).
private func advanceSandboxClock(_ store: TestStore, by duration: String) async throws -> [String: Any] {
    var configuration = HTTPClient.Configuration()
    configuration.timeout = .init(connect: .seconds(10), read: .hours(1))
    let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    var request = HTTPClientRequest(url: store.baseURL + TestControlRoutes.clock.path())
    request.method = .POST
    request.headers.add(name: "Authorization", value: "Bearer \(store.adminToken)")
    request.headers.add(name: "Content-Type", value: "application/json")
    request.body = .bytes(ByteBuffer(string: #"{"action":"advance","by":"\#(duration)"}"#))
    do {
        let response = try await client.execute(request, timeout: .hours(1))
        let body = try await response.body.collect(upTo: 1 << 20)
        try await client.shutdown()
        return try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any] ?? [:]
    } catch {
        try? await client.shutdown()
        throw error
    }
}

extension TestStore {
    /// An app with a monthly auto-renewable, a tester, and one subscription bought through the test controls: the
    /// template the seeded subscriptions copy.
    fileprivate func firstSubscription(bundleId: String, productId: String) async throws -> StoreTransaction.ID {
        _ = try await request(.POST, AdminRoutes.apps.path(), json: ["bundleId": bundleId, "name": "Renewals"])
        let group = try await request(
            .POST, AdminRoutes.subscriptionGroups.path(bundleId), json: ["referenceName": "Bench"])
        precondition(group.status == 201, "group creation failed: \(group.text)")
        let product = try await request(
            .POST, AdminRoutes.products.path(bundleId),
            json: [
                "productId": productId, "type": "auto_renewable", "referenceName": "Monthly", "pricing": ["tier": 1],
                "subscription": ["group": "Bench", "level": 1], "duration": "P1M",
                "localizations": [["locale": "en_US", "displayName": "Monthly", "description": "A monthly plan"]],
            ])
        precondition(product.status == 201, "product creation failed: \(product.text)")
        _ = try await request(.POST, AdminRoutes.acceptPaidAppsAgreement.path(), json: SampleAgreement.json)
        _ = try await request(
            .POST, AdminRoutes.testers.path(), json: ["email": "renewals@example.com", "password": "bench password"])
        let bought = try await request(
            .POST, TestControlRoutes.purchases.path(bundleId),
            json: ["tester": "renewals@example.com", "productId": productId], token: .some(adminToken))
        guard let transaction = bought.json["transaction"] as? [String: Any],
            let text = transaction["transactionId"] as? String, let id = Int64(text)
        else { fatalError("test purchase failed: \(bought.text)") }
        return id
    }
}
