import Foundation
import KioskCore
import KioskProtocol
import KioskSigning
import KioskStorage

/// `verifyReceipt` for one environment: checks an app receipt or an iOS 6-style transaction receipt and answers
/// in Apple's exact shape and JSON types.
///
/// The checks, in order: a JSON object with a string `receipt-data` (else 21000/21002); base64 of a receipt
/// (21002); signed by this environment's chain (a receipt of the other environment answers 21007/21008,
/// anything else 21003); the app still exists (21010); `password` equal to the app's shared secret when given,
/// and given when the receipt holds an auto-renewable subscription (21004); the account still exists (21010).
/// Every answer also carries `message`, Kiosk's one-sentence reason, which Apple's clients ignore.
struct ReceiptValidation: Sendable {
    let database: any KioskDatabase
    let clock: any KioskClock
    let signing: StoreSigning
    let environment: StoreEnvironment

    /// The answer to one request body.
    func verify(requestBody: Data) async -> VerifyReceiptAnswer {
        let request: VerifyReceiptRequest
        switch VerifyReceiptRequest.parse(requestBody) {
        case .success(let parsed): request = parsed
        case .failure(let failure): return .appReceipt(failure.answer)
        }
        do {
            switch Self.receiptKind(of: request.receiptBytes) {
            case .appReceipt: return .appReceipt(try await verifyAppReceipt(request))
            case .transactionReceipt: return .transactionReceipt(try await verifyTransactionReceipt(request))
            case nil:
                return .appReceipt(
                    Self.failure(
                        .malformedReceiptData,
                        "receipt-data is base64, but neither of an app receipt (PKCS #7) nor of a transaction receipt."
                    ))
            }
        } catch let failure as Failure {
            return .appReceipt(failure.answer)
        } catch {
            return .appReceipt(Self.failure(.serverUnavailable, "The store could not read its database; try again."))
        }
    }

    // MARK: App receipts

    private func verifyAppReceipt(_ request: VerifyReceiptRequest) async throws -> VerifyReceiptResponse {
        let receipt = try await authenticate(
            request.receiptBytes,
            verify: { environment, bytes in await signing.appReceiptVerifier(environment).verify(bytes) })
        let now = clock.now()
        let lookup = try await look { tx -> Lookup<(App, [StoreTransaction], Set<Int64>, [StoreSubscription])> in
            let app = try await requireApp(receipt.bundleId, in: tx)
            if try await hasArmedFailure(app, in: tx) { return .armed(app.id) }
            let holdsSubscription = receipt.inApp.contains { $0.productType == .autoRenewableSubscription }
            try checkSharedSecret(request.password, of: app, required: holdsSubscription)
            guard let accountId = try await accountId(of: receipt.inApp.map(\.transactionId), app: app, in: tx) else {
                return .found((app, [], [], []))
            }
            try await requireAccount(accountId, in: tx)
            let transactions = try await tx.transactions(accountId: accountId, appId: app.id, environment: environment)
            // The unfinished queue and the subscriptions feed only the answer's subscription fields.
            guard transactions.contains(where: { $0.productType == .autoRenewable }) else {
                return .found((app, transactions, [], []))
            }
            let unfinished = try await tx.unfinishedQueueRecords(
                accountId: accountId, appId: app.id, environment: environment
            ).compactMap(\.transactionId)
            let subscriptions = try await tx.subscriptions(
                accountId: accountId, appId: app.id, environment: environment)
            return .found((app, transactions, Set(unfinished), subscriptions))
        }
        let (app, transactions, unfinished, rows) = lookup
        let byId = Dictionary(uniqueKeysWithValues: transactions.map { (String($0.id), $0) })
        var answer = VerifyReceiptResponse(
            status: VerifyReceiptStatus.valid.rawValue, environment: environment.appleName,
            receipt: ReceiptFields.receipt(receipt, byId: byId, requestDate: now), message: "The receipt is valid.")
        let subscriptions = transactions.filter { $0.productType == .autoRenewable }
        if !subscriptions.isEmpty {
            let listed = transactions.filter { $0.productType != .consumable || unfinished.contains($0.id) }
            answer.latestReceiptInfo = ReceiptFields.latestReceiptInfo(
                listed, excludeOld: request.excludeOldTransactions
            ).map(ReceiptFields.transaction)
            answer.pendingRenewalInfo = ReceiptFields.pendingRenewalInfo(rows)
            answer.latestReceipt = try latestReceipt(
                like: receipt, app: app, transactions: transactions, unfinished: unfinished, now: now)
        }
        return answer
    }

    /// A receipt signed now for the same device, listing what the account owns now: Apple's `latest_receipt`.
    private func latestReceipt(
        like receipt: AppReceipt, app: App, transactions: [StoreTransaction], unfinished: Set<Int64>, now: Date
    ) throws -> String {
        var latest = receipt
        latest.receiptCreationDate = now
        latest.inApp = PurchaseService.receiptPurchases(transactions, unfinished: unfinished)
        return Data(try signing.sign(latest, environment: environment)).base64EncodedString()
    }

    // MARK: iOS 6-style transaction receipts

    private func verifyTransactionReceipt(_ request: VerifyReceiptRequest) async throws
        -> LegacyVerifyReceiptResponse
    {
        let receipt = try await authenticate(
            request.receiptBytes,
            verify: { environment, bytes in
                await signing.transactionReceiptVerifier(environment).verify(Data(bytes).base64EncodedString())
            })
        let now = clock.now()
        let lookup = try await look { tx -> Lookup<(StoreTransaction, StoreTransaction, String, StoreSubscription?)> in
            let app = try await requireApp(receipt.bundleId, in: tx)
            if try await hasArmedFailure(app, in: tx) { return .armed(app.id) }
            try checkSharedSecret(request.password, of: app, required: receipt.expiresDate != nil)
            guard let id = Int64(receipt.transactionId),
                let transaction = try await tx.transaction(id: id, environment: environment),
                transaction.appId == app.id
            else {
                throw Failure(.accountNotFound, "The store has no purchase \(receipt.transactionId) any more.")
            }
            try await requireAccount(transaction.accountId, in: tx)
            let renewals = try await tx.transactions(
                accountId: transaction.accountId, appId: app.id, environment: environment
            ).filter { $0.originalTransactionId == transaction.originalTransactionId }
            let subscription = try await tx.subscription(
                originalTransactionId: transaction.originalTransactionId, environment: environment)
            return .found(
                (
                    transaction, renewals.max { $0.purchaseDate < $1.purchaseDate } ?? transaction, app.bundleId,
                    subscription
                ))
        }
        let (transaction, latest, bundleId, subscription) = lookup
        var answer = LegacyVerifyReceiptResponse(
            status: VerifyReceiptStatus.valid.rawValue,
            receipt: ReceiptFields.legacyReceipt(receipt, transaction: transaction), message: "The receipt is valid.")
        guard transaction.productType == .autoRenewable else { return answer }
        let latestReceipt = StoreLedger.transactionReceipt(of: latest, bundleId: bundleId)
        let latestFields = ReceiptFields.legacyReceipt(latestReceipt, transaction: latest)
        let expired = latest.expiresDate.map { $0 <= now } ?? false
        let willRenew = subscription.map { $0.autoRenewEnabled && $0.state != .expired && $0.state != .revoked }
        answer.latestReceipt = try StoreLedger.receipt(of: latest, bundleId: bundleId, signing: signing)
        answer.autoRenewProductId = subscription?.autoRenewProductId ?? latest.productId
        answer.autoRenewStatus = willRenew == true ? 1 : 0
        answer.expirationIntent = subscription?.expirationIntent.map { String($0) }
        if expired {
            answer.status = VerifyReceiptStatus.subscriptionExpired.rawValue
            answer.latestExpiredReceiptInfo = latestFields
            answer.message = "The receipt is valid, but the subscription expired."
        } else {
            answer.latestReceiptInfo = latestFields
        }
        return answer
    }

    // MARK: Checks shared by both kinds

    /// Verifies `bytes` against this environment's root; when that fails on trust, tries the other environment's
    /// root to tell 21007/21008 from a forgery (21003).
    private func authenticate<Receipt: Sendable & Hashable>(
        _ bytes: [UInt8],
        verify: (StoreEnvironment, [UInt8]) async -> ReceiptVerificationResult<Receipt>
    ) async throws -> Receipt {
        let result = await verify(environment, bytes)
        switch result {
        case .verified(let receipt):
            return receipt
        case .invalid(let failure):
            switch failure {
            case .malformedContainer, .malformedPayload:
                throw Failure(.malformedReceiptData, "receipt-data is not a receipt: \(failure.description).")
            case .unsupportedAlgorithm, .invalidSignature, .untrustedChain:
                let other = environment == .production ? StoreEnvironment.sandbox : .production
                if case .verified = await verify(other, bytes) {
                    throw environment == .production
                        ? Failure(
                            .sandboxReceiptSentToProduction,
                            "This is a sandbox receipt; send it to /sandbox/verifyReceipt.")
                        : Failure(
                            .productionReceiptSentToSandbox, "This is a production receipt; send it to /verifyReceipt.")
                }
                throw Failure(.notAuthenticated, "The receipt could not be authenticated: \(failure.description).")
            }
        }
    }

    /// What a read found, or that the sandbox test controls armed a failure for the app.
    private enum Lookup<Found: Sendable>: Sendable {
        case found(Found)
        case armed(App.ID)
    }

    /// Runs `body` as a read (`KioskDatabase.read`), beside the writer. An armed failure the read saw is used up in a
    /// write of its own and answered (thrown as its status); if another request used it up first, the read runs
    /// again.
    private func look<Found: Sendable>(
        _ body: @escaping @Sendable (any StorageTransaction) async throws -> Lookup<Found>
    )
        async throws -> Found
    {
        while true {
            switch try await database.read(body) {
            case .found(let found):
                return found
            case .armed(let appId):
                let status = try await database.transaction { tx in
                    try await tx.consumeArmedFailure(appId: appId, api: .verifyReceipt)
                }
                if let status {
                    throw Failure(
                        status: status,
                        message: "The sandbox test controls armed this failure (`kiosk test fail-next`).")
                }
            }
        }
    }

    /// Whether the sandbox test controls armed a `verifyReceipt` failure for the app.
    private func hasArmedFailure(_ app: App, in tx: any StorageTransaction) async throws -> Bool {
        guard environment == .sandbox else { return false }
        return try await tx.armedFailures(appId: app.id).contains { $0.api == .verifyReceipt && $0.remaining > 0 }
    }

    private func requireApp(_ bundleId: String, in tx: any StorageTransaction) async throws -> App {
        guard let app = try await tx.app(bundleId: bundleId) else {
            throw Failure(.accountNotFound, "The store has no app \(bundleId) any more.")
        }
        return app
    }

    private func checkSharedSecret(_ password: String?, of app: App, required: Bool) throws {
        guard let password else {
            if required {
                throw Failure(
                    .sharedSecretMismatch,
                    "The receipt holds an auto-renewable subscription, so the request needs `password`: the app's "
                        + "shared secret (`kiosk apps shared-secret \(app.bundleId)`).")
            }
            return
        }
        guard let secret = app.sharedSecret else {
            throw Failure(
                .sharedSecretMismatch,
                "The app \(app.bundleId) has no shared secret; create one with `kiosk apps shared-secret \(app.bundleId)`."
            )
        }
        guard AdminAuthMiddleware.constantTimeEquals(password, secret) else {
            throw Failure(.sharedSecretMismatch, "`password` is not the shared secret of \(app.bundleId).")
        }
    }

    /// The account that made the first of `transactionIds` still stored for `app`; nil when none is.
    private func accountId(of transactionIds: [String], app: App, in tx: any StorageTransaction) async throws -> UUID? {
        for id in transactionIds.compactMap(Int64.init) {
            if let transaction = try await tx.transaction(id: id, environment: environment), transaction.appId == app.id
            {
                return transaction.accountId
            }
        }
        return nil
    }

    private func requireAccount(_ id: UUID, in tx: any StorageTransaction) async throws {
        if try await tx.account(id: id, environment: environment) == nil {
            throw Failure(.accountNotFound, "The account that made these purchases no longer exists.")
        }
    }

    // MARK: Request and failures

    private enum ReceiptKind { case appReceipt, transactionReceipt }

    /// A DER SEQUENCE is a PKCS #7 app receipt; an ASCII property list naming `purchase-info` a transaction receipt.
    private static func receiptKind(of bytes: [UInt8]) -> ReceiptKind? {
        guard let first = bytes.first else { return nil }
        if first == 0x30 { return .appReceipt }
        if first == UInt8(ascii: "{"), String(decoding: bytes, as: UTF8.self).contains("\"purchase-info\"") {
            return .transactionReceipt
        }
        return nil
    }

    /// A refusal: its status and Kiosk's reason.
    struct Failure: Error {
        var status: Int
        var message: String

        init(_ status: VerifyReceiptStatus, _ message: String) {
            self.init(status: status.rawValue, message: message)
        }

        init(status: Int, message: String) {
            self.status = status
            self.message = message
        }

        var answer: VerifyReceiptResponse { ReceiptValidation.failure(status: status, message) }
    }

    /// `{"status": …, "message": …}`, with `is-retryable` for Apple's internal-error range 21100–21199.
    static func failure(_ status: VerifyReceiptStatus, _ message: String) -> VerifyReceiptResponse {
        failure(status: status.rawValue, message)
    }

    static func failure(status: Int, _ message: String) -> VerifyReceiptResponse {
        VerifyReceiptResponse(
            status: status, message: message,
            isRetryable: VerifyReceiptStatus.retryableRange.contains(status) ? true : nil)
    }
}

/// What `verifyReceipt` answers: an app receipt's answer (or any failure), or an iOS 6-style receipt's.
enum VerifyReceiptAnswer: Encodable, Sendable {
    case appReceipt(VerifyReceiptResponse)
    case transactionReceipt(LegacyVerifyReceiptResponse)

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .appReceipt(let answer): try answer.encode(to: encoder)
        case .transactionReceipt(let answer): try answer.encode(to: encoder)
        }
    }
}

/// The request body Apple defines: `receipt-data`, `password`, `exclude-old-transactions`.
struct VerifyReceiptRequest: Sendable {
    var receiptBytes: [UInt8]
    var password: String?
    var excludeOldTransactions: Bool

    static func parse(_ body: Data) -> Result<VerifyReceiptRequest, ReceiptValidation.Failure> {
        guard let object = try? JSONDecoder().decode(Fields.self, from: body) else {
            return .failure(.init(.notPostOfJSON, "The body is not a JSON object."))
        }
        guard case .string(let text)? = object.receiptData else {
            return .failure(.init(.malformedReceiptData, "The body has no string `receipt-data`."))
        }
        guard let bytes = Data(base64Encoded: text, options: .ignoreUnknownCharacters), !bytes.isEmpty else {
            return .failure(.init(.malformedReceiptData, "`receipt-data` is not base64."))
        }
        var password: String?
        switch object.password {
        case nil, .null: password = nil
        case .string(let text): password = text.isEmpty ? nil : text
        default: return .failure(.init(.malformedReceiptData, "`password` must be a string."))
        }
        let excludeOld: Bool
        switch object.excludeOldTransactions {
        case nil, .null: excludeOld = false
        case .bool(let flag): excludeOld = flag
        case .string(let text) where ["true", "false"].contains(text.lowercased()):
            excludeOld = text.lowercased() == "true"
        default: return .failure(.init(.malformedReceiptData, "`exclude-old-transactions` must be true or false."))
        }
        return .success(
            VerifyReceiptRequest(receiptBytes: Array(bytes), password: password, excludeOldTransactions: excludeOld))
    }

    /// The three fields as sent; other fields are not read.
    private struct Fields: Decodable {
        var receiptData: JSONScalar?
        var password: JSONScalar?
        var excludeOldTransactions: JSONScalar?

        enum CodingKeys: String, CodingKey {
            case receiptData = "receipt-data"
            case password
            case excludeOldTransactions = "exclude-old-transactions"
        }
    }
}
