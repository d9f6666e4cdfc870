import AsyncHTTPClient
import Foundation
import KioskCore
import KioskHTTPClient
import KioskProtocol
import KioskSigning
import NIOCore
import NIOHTTP1
import Synchronization
import X509

/// The merchant's calls to the store: `verifyReceipt` (production first, then the sandbox on 21007, as Apple asks)
/// and the App Store Server API (signed with the app's In-App Purchase key). The same calls work against Kiosk and
/// against Apple; the configuration says where.
struct StoreConnection: Sendable {
    let app: LoadedMerchantConfiguration.LoadedApp
    let clock: any KioskClock
    var timeout: TimeAmount = .seconds(30)

    // MARK: verifyReceipt

    /// A receipt's transactions, from the environment that accepted it.
    struct VerifiedReceipt: Sendable {
        var environment: StoreEnvironment
        var transactions: [PurchaseFacts]
    }

    /// Validates a base64 app receipt: production first; a 21007 answer means a sandbox receipt, sent again to
    /// the sandbox. Every transaction of `in_app` and `latest_receipt_info` comes back once.
    func verifyReceipt(_ receiptData: String) async throws -> VerifiedReceipt {
        var environment = StoreEnvironment.production
        var answer = try await postReceipt(receiptData, to: .production)
        if answer.status == 21007 {
            environment = .sandbox
            answer = try await postReceipt(receiptData, to: .sandbox)
        }
        guard answer.status == 0, let receipt = answer.receipt else {
            throw Self.receiptRefusal(status: answer.status, message: answer.message)
        }
        guard app.environments.contains(environment) else {
            throw KioskError(
                .wrongEnvironment,
                "The receipt is from \(environment.appleName), which \(app.bundleId) does not accept here.",
                field: "receiptData", fix: "Send a receipt from an accepted environment.")
        }
        guard receipt.bundleId == app.bundleId else {
            throw KioskError(
                .wrongApp, "The receipt is for \(receipt.bundleId), not \(app.bundleId).", field: "receiptData",
                fix: "Send the receipt of \(app.bundleId).")
        }
        var seen = Set<String>()
        var transactions: [PurchaseFacts] = []
        for entry in receipt.inApp + (answer.latestReceiptInfo ?? []) where seen.insert(entry.transactionId).inserted {
            transactions.append(
                PurchaseFacts(
                    environment: environment, bundleId: app.bundleId, transactionId: entry.transactionId,
                    originalTransactionId: entry.originalTransactionId, productId: entry.productId,
                    quantity: Int(entry.quantity) ?? 1, purchaseDate: entry.purchaseDate,
                    expiresDate: entry.expiresDate, revocationDate: entry.cancellationDate,
                    revocationReason: entry.cancellationReason.map { $0 == "1" ? "issue_in_app" : "other" },
                    appAccountToken: entry.appAccountToken.flatMap(UUID.init(uuidString:)),
                    signedDate: receipt.requestDate, provenance: .present))
        }
        return VerifiedReceipt(environment: environment, transactions: transactions)
    }

    private func postReceipt(_ receiptData: String, to environment: StoreEnvironment) async throws
        -> VerifyReceiptResponse
    {
        guard let url = app.settings.store.verifyReceipt[environment] else {
            throw KioskError(
                .storeNotConfigured,
                "No verifyReceipt URL for \(environment.appleName) is configured for \(app.bundleId).",
                fix: "Set store in the merchant configuration.")
        }
        var body: [String: Any] = ["receipt-data": receiptData, "exclude-old-transactions": false]
        if let secret = app.settings.sharedSecret { body["password"] = secret }
        let (status, data) = try await send(
            .POST, url, json: try JSONSerialization.data(withJSONObject: body), what: "verifyReceipt")
        return try Self.answer(VerifyReceiptResponse.self, status, data, call: "verifyReceipt")
    }

    private static func receiptRefusal(status: Int, message: String?) -> KioskError {
        let reason: String =
            switch status {
            case 0: "it answered no receipt"
            case 21000: "the store could not read the request"
            case 21002: "the receipt data is malformed"
            case 21003: "the receipt could not be authenticated (forged or tampered)"
            case 21004: "the shared secret does not match the app's"
            case 21006: "the subscription has expired"
            case 21008: "the receipt is from production but was sent to the sandbox"
            case 21010: "the account or purchase no longer exists"
            default: "status \(status)"
            }
        let detail = message.map { " (\($0))" } ?? ""
        if status == 21005 || status == 21009 || (21100...21199).contains(status) {
            return storeUnavailable("verifyReceipt answered \(status)\(detail)")
        }
        return KioskError(
            .receiptRefused, "The store refused the receipt: \(reason)\(detail); nothing was granted.",
            field: "receiptData", fix: "Send the app receipt unchanged (base64), refreshed if needed.")
    }

    // MARK: App Store Server API

    /// The signed transaction the store holds for `transactionId`, or nil when it knows none (404).
    func transactionInfo(_ transactionId: String, environment: StoreEnvironment) async throws -> String? {
        let (status, data) = try await serverAPI(
            .GET, "/inApps/v1/transactions/\(transactionId)", environment: environment)
        if status == 404 { return nil }
        return try Self.answer(TransactionInfoResponse.self, status, data, call: "Get Transaction Info")
            .signedTransactionInfo
    }

    /// Send Consumption Information (v2) for `transactionId`: whether the purchase was delivered. True when the
    /// store took it (202).
    func sendConsumptionInformation(_ transactionId: String, delivered: Bool, environment: StoreEnvironment)
        async throws -> Bool
    {
        let body: [String: Any] = [
            "customerConsented": true, "sampleContentProvided": false,
            "deliveryStatus": delivered ? "DELIVERED" : "UNDELIVERED_OTHER",
        ]
        let (status, _) = try await serverAPI(
            .PUT, "/inApps/v2/transactions/consumption/\(transactionId)", environment: environment,
            body: try JSONSerialization.data(withJSONObject: body, options: .sortedKeys))
        return status == 202
    }

    /// Every signed transaction of the customer who made `transactionId` (all pages of history v2).
    func transactionHistory(_ transactionId: String, environment: StoreEnvironment) async throws -> [String] {
        var signed: [String] = []
        var revision: String?
        repeat {
            let query =
                revision.map { "?revision=\($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0)" }
                ?? ""
            let (status, data) = try await serverAPI(
                .GET, "/inApps/v2/history/\(transactionId)\(query)", environment: environment)
            if status == 404 { return signed }
            let page = try Self.answer(HistoryResponse.self, status, data, call: "Get Transaction History")
            signed += page.signedTransactions
            revision = page.hasMore ? page.revision : nil
        } while revision != nil
        return signed
    }

    /// Every notification the store sent (or tried to) between the dates: their signed payloads.
    func notificationHistory(from start: Date, to end: Date, environment: StoreEnvironment) async throws -> [String] {
        var signed: [String] = []
        var token: String?
        repeat {
            let query =
                token.map {
                    "?paginationToken=\($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0)"
                } ?? ""
            let body = ["startDate": start.millisecondsSince1970, "endDate": end.millisecondsSince1970]
            let (status, data) = try await serverAPI(
                .POST, "/inApps/v1/notifications/history\(query)", environment: environment,
                body: try JSONEncoder().encode(body))
            let page = try Self.answer(NotificationHistoryResponse.self, status, data, call: "Get Notification History")
            signed += page.notificationHistory.map(\.signedPayload)
            token = page.hasMore ? page.paginationToken : nil
        } while token != nil
        return signed
    }

    private func serverAPI(
        _ method: HTTPMethod, _ path: String, environment: StoreEnvironment, body: Data? = nil
    ) async throws -> (Int, Data) {
        guard let key = app.serverAPIKey else {
            throw KioskError(
                .serverApiNotConfigured, "\(app.bundleId) has no serverAPIKey, which this needs.",
                fix: "Add serverAPIKey to the app in the merchant configuration (`kiosk keys create`).")
        }
        guard let base = app.settings.store.serverAPI[environment] else {
            throw KioskError(
                .storeNotConfigured,
                "No App Store Server API URL for \(environment.appleName) is configured for \(app.bundleId).",
                fix: "Set store in the merchant configuration.")
        }
        return try await send(
            method, base + path, bearer: try key.token(now: clock.now()), json: body,
            what: "the App Store Server API")
    }

    /// The clients calls to a store go through, one per set of trusted TLS roots, for the life of the process: a
    /// refused connection fails at once, so the merchant answers 503 `store_unavailable` (and the app retries)
    /// instead of retrying the connection until the deadline.
    private static let clients = Mutex<[[Certificate]: HTTPClient]>([:])

    private static func client(trusting roots: [Certificate]) throws -> HTTPClient {
        try clients.withLock { clients in
            if let client = clients[roots] { return client }
            let client = try JSONHTTPClient.makeHTTPClient(trusting: roots, failFast: true)
            clients[roots] = client
            return client
        }
    }

    private func send(_ method: HTTPMethod, _ url: String, bearer: String? = nil, json body: Data?, what: String)
        async throws -> (Int, Data)
    {
        let client = JSONHTTPClient(http: try Self.client(trusting: app.tlsRoots))
        do {
            let answer = try await client.send(
                method, url, bearer: bearer, headers: ["Accept": "application/json"], json: body, timeout: timeout,
                limit: 32 << 20)
            return (Int(answer.status.code), answer.body)
        } catch {
            switch error {
            case .cancelled: throw CancellationError()
            case .untrustedCertificate(let cause), .unreachable(let cause):
                throw Self.storeUnavailable("\(what) could not be reached at \(url): \(cause)")
            }
        }
    }

    /// The typed answer of a Server API call that must answer 200 with Apple's model.
    private static func answer<Answer: Decodable>(_ type: Answer.Type, _ status: Int, _ data: Data, call: String)
        throws -> Answer
    {
        let text = String(decoding: data.prefix(300), as: UTF8.self)
        guard status == 200 else { throw storeUnavailable("\(call) answered HTTP \(status) \(text)") }
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw storeUnavailable("\(call) answered a body that is not Apple's \(type): \(text)")
        }
    }

    private static func storeUnavailable(_ message: String) -> KioskError {
        KioskError(.storeUnavailable, message, fix: "Retry later; nothing was granted.")
    }
}
