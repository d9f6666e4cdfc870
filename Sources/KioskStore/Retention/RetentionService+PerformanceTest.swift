import Foundation
import KioskCore
import KioskProtocol
import KioskSQL
import KioskStorage

/// The sandbox performance test of a Get Retention Message endpoint (Apple's Initiate Performance Test and Get
/// Performance Test Results): the store calls the endpoint as it would for real, signed requests about the purchase
/// the developer named, a few at a time, and times each answer against the budget. A test passes when enough
/// answers came in time; a production real-time URL needs one that passed.
extension RetentionService {
    enum PerformanceTestState: String {
        case pending = "PENDING"
        case pass = "PASS"
        case fail = "FAIL"
    }

    /// How a test runs: Apple's parameters are not published beyond the response time; Kiosk's are these, with the
    /// store's budget as the threshold.
    var performanceTestConfig: PerformanceTestConfig {
        let concurrency = 4
        let total = 20
        let threshold = Self.milliseconds(budget)
        return PerformanceTestConfig(
            maxConcurrentRequests: concurrency, totalRequests: total,
            totalDuration: (total + concurrency - 1) / concurrency * threshold, responseTimeThreshold: threshold,
            successRateThreshold: 90)
    }

    /// Initiate Performance Test: `originalTransactionId` must be the original transaction of a sandbox
    /// auto-renewable of the app, the sandbox real-time URL configured, and no other test of the app running.
    func startPerformanceTest(originalTransactionId text: String?, caller: ServerAPICaller) async throws
        -> PerformanceTestResponse
    {
        guard let text else { throw ServerAPIError.invalidPerformanceTestRequest }
        guard let id = ServerAPIController.positiveInteger(text) else { throw ServerAPIError.invalidTransactionId }
        let requestId = UUID().uuidString.lowercased()
        let config = performanceTestConfig
        let environment = caller.environment
        let now = clocks.now(environment)
        try await database.transaction { tx in
            let app = caller.app.id
            guard let transaction = try await tx.transaction(id: id, environment: environment), transaction.appId == app
            else { throw ServerAPIError.invalidTransactionId }
            guard transaction.id == transaction.originalTransactionId else {
                throw ServerAPIError.transactionIdIsNotOriginalTransactionId
            }
            guard transaction.productType == .autoRenewable else { throw ServerAPIError.invalidPerformanceTestRequest }
            guard let url = try await tx.retentionRealtimeURL(appId: app, environment: environment) else {
                throw ServerAPIError.realtimeURLNotFound
            }
            // One pending test per app and environment: the store's unique index decides between concurrent starts.
            do {
                try await tx.insertRetentionPerformanceTest(
                    RetentionPerformanceTestRecord(
                        requestId: requestId, appId: app, environment: environment, originalTransactionId: id,
                        target: url, state: PerformanceTestState.pending.rawValue,
                        config: String(decoding: try JSONEncoder().encode(config), as: UTF8.self), createdAt: now))
            } catch StorageError.uniqueViolation(let constraint)
                where constraint == "retention_performance_tests.pending"
            {
                throw ServerAPIError.existingPerformanceTestRun
            }
        }
        startInBackground(requestId)
        return PerformanceTestResponse(config: config, requestId: requestId)
    }

    /// Get Performance Test Results.
    func performanceTestResult(requestId: String, caller: ServerAPICaller) async throws
        -> PerformanceTestResultResponse
    {
        guard let uuid = UUID(uuidString: requestId) else { throw ServerAPIError.invalidRequestId }
        let record = try await database.transaction { tx in
            try await tx.retentionPerformanceTest(requestId: uuid.uuidString.lowercased())
        }
        guard let record, record.appId == caller.app.id, record.environment == caller.environment else {
            throw ServerAPIError.performanceTestRunNotFound
        }
        return try Self.resultResponse(of: record)
    }

    /// What a test says so far: its stored result once finished, else pending.
    static func resultResponse(of record: RetentionPerformanceTestRecord) throws -> PerformanceTestResultResponse {
        if let result = record.result {
            return try JSONDecoder().decode(PerformanceTestResultResponse.self, from: Data(result.utf8))
        }
        let config = try JSONDecoder().decode(PerformanceTestConfig.self, from: Data(record.config.utf8))
        return PerformanceTestResultResponse(
            config: config, target: record.target, result: record.state, successRate: nil,
            numPending: config.totalRequests, responseTimes: nil, failures: nil)
    }

    /// Why a pending test cannot run.
    private struct CannotRun: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs the pending test `requestId` and records its result; a test that cannot run ends `FAIL`, with why, so
    /// that it does not stay pending and block the app's next test.
    func runPerformanceTest(requestId: String) async {
        do {
            guard
                let (record, app, productId, locale) = try await database.transaction({
                    tx -> (RetentionPerformanceTestRecord, App, String, String)? in
                    guard let record = try await tx.retentionPerformanceTest(requestId: requestId),
                        record.state == PerformanceTestState.pending.rawValue
                    else { return nil }
                    guard let app = try await tx.app(id: record.appId),
                        let transaction = try await tx.transaction(
                            id: record.originalTransactionId, environment: record.environment)
                    else {
                        throw CannotRun(
                            description: "the purchase \(record.originalTransactionId) it names no longer exists")
                    }
                    let account = try await tx.account(id: transaction.accountId, environment: record.environment)
                    let storefront = account.flatMap { Storefront.named($0.storefront) } ?? Storefront.named("USA")
                    let locale = (storefront?.defaultLocale ?? "en_US").replacingOccurrences(of: "_", with: "-")
                    let subscription = try await tx.subscription(
                        originalTransactionId: record.originalTransactionId, environment: record.environment)
                    return (record, app, subscription?.productId ?? transaction.productId, locale)
                })
            else { return }
            let config = try JSONDecoder().decode(PerformanceTestConfig.self, from: Data(record.config.utf8))
            let threshold = Duration.milliseconds(config.responseTimeThreshold)
            var calls: [EndpointCall] = []
            var sent = 0
            while sent < config.totalRequests {
                let batch = min(config.maxConcurrentRequests, config.totalRequests - sent)
                let signed = try (0..<batch).map { _ in
                    try signedRealtimeRequest(
                        app: app, environment: record.environment, originalTransactionId: record.originalTransactionId,
                        productId: productId, locale: locale, requestIdentifier: UUID().uuidString.lowercased(),
                        now: clocks.now(record.environment))
                }
                calls += await withTaskGroup(of: EndpointCall.self) { group in
                    for payload in signed {
                        group.addTask { await call(record.target, signedPayload: payload, budget: threshold) }
                    }
                    return await group.reduce(into: []) { $0.append($1) }
                }
                sent += batch
            }
            var finished = record
            let result = Self.result(of: calls, config: config, target: record.target)
            finished.state = result.result
            finished.result = String(decoding: try JSONEncoder().encode(result), as: UTF8.self)
            finished.finishedAt = clocks.now(record.environment)
            try await database.transaction { [finished] tx in try await tx.updateRetentionPerformanceTest(finished) }
        } catch {
            logger.error(
                "A retention messaging performance test could not run",
                metadata: ["requestId": "\(requestId)", "error": "\(error)"])
            await fail(requestId, reason: "\(error)")
        }
    }

    /// Ends the pending test `requestId` as `FAIL` because `reason`: no call counted, none pending.
    private func fail(_ requestId: String, reason: String) async {
        do {
            try await database.transaction { tx in
                guard var record = try await tx.retentionPerformanceTest(requestId: requestId),
                    record.state == PerformanceTestState.pending.rawValue
                else { return }
                let now = clocks.now(record.environment)
                if let config = try? JSONDecoder().decode(PerformanceTestConfig.self, from: Data(record.config.utf8)) {
                    let result = Self.result(of: [], config: config, target: record.target)
                    record.result = String(decoding: try JSONEncoder().encode(result), as: UTF8.self)
                }
                record.state = PerformanceTestState.fail.rawValue
                record.failureReason = String(reason.prefix(1000))
                record.finishedAt = now
                try await tx.updateRetentionPerformanceTest(record)
            }
        } catch {
            logger.error(
                "A retention messaging performance test that could not run could not be marked FAIL",
                metadata: ["requestId": "\(requestId)", "error": "\(error)"])
        }
    }

    /// The result of a finished test: the share of calls answered in time, the times of those answers, and the
    /// failures by Apple's `sendAttemptResult`.
    static func result(of calls: [EndpointCall], config: PerformanceTestConfig, target: String)
        -> PerformanceTestResultResponse
    {
        let succeeded = calls.filter(\.succeeded)
        let rate = calls.isEmpty ? 0 : succeeded.count * 100 / calls.count
        var failures: [String: Int] = [:]
        for call in calls {
            if case .failed(let result, _, _) = call.result { failures[result.rawValue, default: 0] += 1 }
        }
        let times = succeeded.map(\.milliseconds).sorted()
        func percentile(_ p: Int) -> Int {
            times[min(times.count - 1, max(0, (times.count * p + 99) / 100 - 1))]
        }
        return PerformanceTestResultResponse(
            config: config, target: target,
            result: (rate >= config.successRateThreshold ? PerformanceTestState.pass : .fail).rawValue,
            successRate: rate, numPending: 0,
            responseTimes: times.isEmpty
                ? nil
                : PerformanceTestResponseTimes(
                    average: times.reduce(0, +) / times.count, p50: percentile(50), p90: percentile(90),
                    p95: percentile(95), p99: percentile(99)),
            failures: failures.isEmpty ? nil : failures)
    }
}
