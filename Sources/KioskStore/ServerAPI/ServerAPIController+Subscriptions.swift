import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskProtocol
import KioskSQL
import KioskSigning
import KioskStorage

extension ServerAPIController {
    /// All subscription statuses; renewal-date extensions (single, mass, mass status).
    func addSubscriptionRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.get("v1/subscriptions/:transactionId") { request, context in
            try await allSubscriptionStatuses(request, context: context)
        }
        group.put("v1/subscriptions/extend/:originalTransactionId") { request, context in
            try await extendRenewalDate(request, context: context)
        }
        group.post("v1/subscriptions/extend/mass") { request, context in
            try await extendRenewalDatesForAllActiveSubscribers(request, context: context)
        }
        group.get("v1/subscriptions/extend/mass/:productId/:requestIdentifier") { _, context in
            try await massExtensionStatus(context: context)
        }
    }

    private var subscriptions: SubscriptionService {
        SubscriptionService(context: service.context)
    }

    // MARK: Get All Subscription Statuses

    /// `GET /inApps/v1/subscriptions/{transactionId}?status=…`: every auto-renewable of the customer the
    /// transaction (or original transaction) id belongs to, in the caller's app, grouped by subscription group,
    /// each with its latest transaction and freshly signed renewal info.
    private func allSubscriptionStatuses(_ request: Request, context: KioskRequestContext) async throws -> Response {
        let caller = try context.requireServerAPICaller()
        let id = try Self.decimalId(context.parameters.get("transactionId"), else: .invalidTransactionId)
        var wanted = Set<Int>()
        for value in request.uri.queryParameters.getAll("status") {
            guard let status = Int(value), SubscriptionService.Status(rawValue: status) != nil else {
                throw ServerAPIError.invalidStatus
            }
            wanted.insert(status)
        }
        let now = service.clocks.now(environment)
        let subscriptions = subscriptions
        let groups = try await service.database.transaction { [wanted] tx -> [SubscriptionGroupIdentifierItem] in
            guard let found = try await tx.transaction(id: id, environment: environment),
                found.appId == caller.app.id
            else { throw ServerAPIError.transactionIdNotFound }
            let all = try await tx.transactions(
                accountId: found.accountId, appId: found.appId, environment: environment)
            var byGroup: [Int64: [LastTransactionsItem]] = [:]
            for latest in SubscriptionService.latestPerSubscription(all) {
                let status = try await subscriptions.status(of: latest, now: now, in: tx).rawValue
                guard wanted.isEmpty || wanted.contains(status), let groupId = latest.subscriptionGroupId else {
                    continue
                }
                let chain = all.filter { $0.originalTransactionId == latest.originalTransactionId }
                byGroup[groupId, default: []].append(
                    LastTransactionsItem(
                        status: status, originalTransactionId: String(latest.originalTransactionId),
                        signedTransactionInfo: latest.signedTransaction,
                        signedRenewalInfo: try await subscriptions.signedRenewalInfo(
                            for: latest, chain: chain, now: now, in: tx)))
            }
            return byGroup.keys.sorted().map {
                SubscriptionGroupIdentifierItem(
                    subscriptionGroupIdentifier: String($0), lastTransactions: byGroup[$0] ?? [])
            }
        }
        return try ServerAPIAnswer.json(
            StatusResponse(
                environment: environment.appleName, bundleId: caller.app.bundleId, appAppleId: caller.app.id,
                data: groups))
    }

    // MARK: Extend a Subscription Renewal Date

    /// `PUT /inApps/v1/subscriptions/extend/{originalTransactionId}`: moves one active subscription's expiry;
    /// a repeated `requestIdentifier` answers the first outcome and changes nothing.
    private func extendRenewalDate(_ request: Request, context: KioskRequestContext) async throws -> Response {
        let caller = try context.requireServerAPICaller()
        let id = try Self.decimalId(
            context.parameters.get("originalTransactionId"), else: .invalidOriginalTransactionId)
        let body = try await Self.decodeBody(ExtendRenewalDateRequest.self, request, context: context)
        let (days, reason, requestIdentifier) = try Self.validateExtension(
            body.extendByDays, body.extendReasonCode, body.requestIdentifier)
        let now = service.clocks.now(environment)
        let subscriptions = subscriptions
        let attempt = { @Sendable () async throws -> RenewalExtensionRequest in
            try await service.ledger.commit { tx, effects in
                if let existing = try await tx.renewalExtensionRequest(
                    requestIdentifier: requestIdentifier, appId: caller.app.id, environment: environment)
                {
                    guard existing.originalTransactionId == id else { throw ServerAPIError.invalidRequestIdentifier }
                    return existing
                }
                guard let original = try await tx.transaction(id: id, environment: environment),
                    original.appId == caller.app.id, original.originalTransactionId == original.id
                else { throw ServerAPIError.originalTransactionIdNotFound }
                guard
                    let latest = SubscriptionService.latestPerSubscription(
                        try await subscriptions.chain(of: original, in: tx)
                    ).first
                else { throw ServerAPIError.subscriptionExtensionIneligible }
                let extended: StoreTransaction
                let notification: ServerNotification
                do {
                    (extended, notification) = try await subscriptions.extend(
                        latest, app: caller.app, days: days, requestIdentifier: requestIdentifier, now: now, in: tx)
                } catch SubscriptionService.ExtensionRefusal.ineligible {
                    throw ServerAPIError.subscriptionExtensionIneligible
                } catch SubscriptionService.ExtensionRefusal.maximumReached {
                    throw ServerAPIError.subscriptionMaxExtension
                }
                let record = RenewalExtensionRequest(
                    environment: environment, appId: caller.app.id, requestIdentifier: requestIdentifier,
                    productId: nil, originalTransactionId: id, extendByDays: days, reasonCode: reason,
                    storefrontCountryCodes: nil, createdAt: now, completedAt: now, succeededCount: 1, failedCount: 0,
                    webOrderLineItemId: extended.webOrderLineItemId, effectiveDate: extended.expiresDate)
                try await tx.insertRenewalExtensionRequest(record)
                effects.deliver([notification])
                return record
            }
        }
        let record = try await Self.retryingOnSameRequestIdentifier(attempt)
        return try ServerAPIAnswer.json(
            ExtendRenewalDateResponse(
                originalTransactionId: String(id), webOrderLineItemId: record.webOrderLineItemId.map(String.init),
                success: true, effectiveDate: record.effectiveDate?.millisecondsSince1970))
    }

    // MARK: Extend Subscription Renewal Dates for All Active Subscribers

    /// `POST /inApps/v1/subscriptions/extend/mass`: extends every active subscription whose latest transaction is
    /// for `productId` (optionally only in some storefronts). Kiosk completes the request before answering; a
    /// subscription already extended twice this year counts as failed. Each extension sends `RENEWAL_EXTENDED`,
    /// each failure `RENEWAL_EXTENSION`/`FAILURE`, and the end `RENEWAL_EXTENSION`/`SUMMARY`.
    private func extendRenewalDatesForAllActiveSubscribers(_ request: Request, context: KioskRequestContext)
        async throws -> Response
    {
        let caller = try context.requireServerAPICaller()
        let body = try await Self.decodeBody(MassExtendRenewalDateRequest.self, request, context: context)
        let (days, reason, requestIdentifier) = try Self.validateExtension(
            body.renewal.extendByDays, body.renewal.extendReasonCode, body.renewal.requestIdentifier)
        guard let productId = body.productId, CatalogValidator.validateProductId(productId).isEmpty else {
            throw ServerAPIError.invalidProductId
        }
        if let codes = body.storefrontCountryCodes {
            guard !codes.isEmpty else { throw ServerAPIError.invalidEmptyStorefrontCountryCodeList }
            guard codes.allSatisfy({ Storefront.named($0) != nil }) else {
                throw ServerAPIError.invalidStorefrontCountryCode
            }
        }
        let now = service.clocks.now(environment)
        let subscriptions = subscriptions
        let attempt = { @Sendable () async throws -> RenewalExtensionRequest in
            try await service.ledger.commit { tx, effects in
                if let existing = try await tx.renewalExtensionRequest(
                    requestIdentifier: requestIdentifier, appId: caller.app.id, environment: environment)
                {
                    guard existing.productId == productId else { throw ServerAPIError.invalidRequestIdentifier }
                    return existing
                }
                guard let product = try await tx.product(appId: caller.app.id, productId: productId),
                    product.type == .autoRenewable, product.deletedAt == nil
                else { throw ServerAPIError.invalidProductId }
                var record = RenewalExtensionRequest(
                    environment: environment, appId: caller.app.id, requestIdentifier: requestIdentifier,
                    productId: productId, originalTransactionId: nil, extendByDays: days, reasonCode: reason,
                    storefrontCountryCodes: body.storefrontCountryCodes, createdAt: now, completedAt: now,
                    succeededCount: 0, failedCount: 0)
                var notifications: [ServerNotification] = []
                let candidates = try await tx.latestSubscriptionTransactions(
                    productId: productId, appId: caller.app.id, environment: environment)
                for latest in candidates
                where SubscriptionService.status(of: latest, at: now) == .active
                    && body.storefrontCountryCodes.map({ $0.contains(latest.storefront) }) ?? true
                {
                    do {
                        let (_, notification) = try await subscriptions.extend(
                            latest, app: caller.app, days: days, requestIdentifier: requestIdentifier, now: now,
                            in: tx)
                        record.succeededCount += 1
                        notifications.append(notification)
                    } catch is SubscriptionService.ExtensionRefusal {
                        record.failedCount += 1
                        notifications.append(
                            try await service.notifications.create(
                                NotificationContent(type: "RENEWAL_EXTENSION", subtype: "FAILURE", transaction: latest),
                                app: caller.app, environment: environment, now: now, in: tx))
                    }
                }
                try await tx.insertRenewalExtensionRequest(record)
                let summary = NotificationSummary(
                    requestIdentifier: requestIdentifier, environment: environment.appleName,
                    appAppleId: caller.app.id, bundleId: caller.app.bundleId, productId: productId,
                    storefrontCountryCodes: body.storefrontCountryCodes, failedCount: Int64(record.failedCount),
                    succeededCount: Int64(record.succeededCount))
                notifications.append(
                    try await service.notifications.create(
                        NotificationContent(type: "RENEWAL_EXTENSION", subtype: "SUMMARY", summary: summary),
                        app: caller.app, environment: environment, now: now, in: tx))
                effects.deliver(notifications)
                return record
            }
        }
        let record = try await Self.retryingOnSameRequestIdentifier(attempt)
        return try ServerAPIAnswer.json(MassExtendRenewalDateResponse(requestIdentifier: record.requestIdentifier))
    }

    /// `GET /inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}`.
    private func massExtensionStatus(context: KioskRequestContext) async throws -> Response {
        let caller = try context.requireServerAPICaller()
        let productId = context.parameters.get("productId") ?? ""
        let requestIdentifier = context.parameters.get("requestIdentifier") ?? ""
        let record = try await service.database.transaction { tx in
            try await tx.renewalExtensionRequest(
                requestIdentifier: requestIdentifier, appId: caller.app.id, environment: environment)
        }
        guard let record, record.productId == productId else { throw ServerAPIError.statusRequestNotFound }
        return try ServerAPIAnswer.json(
            MassExtendRenewalDateStatusResponse(
                requestIdentifier: record.requestIdentifier, complete: record.completedAt != nil,
                completeDate: record.completedAt?.millisecondsSince1970, succeededCount: Int64(record.succeededCount),
                failedCount: Int64(record.failedCount)))
    }

    // MARK: Helpers

    /// A transaction id in a path: decimal digits (Apple's ids are positive 64-bit numbers).
    static func decimalId(_ text: String?, else error: ServerAPIError) throws -> Int64 {
        guard let text, !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }), let id = Int64(text), id > 0
        else { throw error }
        return id
    }

    /// Apple's limits: 1–90 days, reason 0–3, a request identifier of 1–128 characters.
    private static func validateExtension(_ days: Int?, _ reason: Int?, _ requestIdentifier: String?) throws
        -> (Int, Int, String)
    {
        guard let days, (1...90).contains(days) else { throw ServerAPIError.invalidExtendByDays }
        guard let reason, (0...3).contains(reason) else { throw ServerAPIError.invalidExtendReasonCode }
        guard let requestIdentifier, (1...128).contains(requestIdentifier.count),
            !requestIdentifier.unicodeScalars.contains(where: \.isControl)
        else {
            throw ServerAPIError.invalidRequestIdentifier
        }
        return (days, reason, requestIdentifier)
    }

    /// Runs `attempt` again when a concurrent request with the same identifier committed first, so both answer
    /// what that one did.
    private static func retryingOnSameRequestIdentifier<T: Sendable>(_ attempt: @Sendable () async throws -> T)
        async throws -> T
    {
        do {
            return try await attempt()
        } catch StorageError.uniqueViolation(let constraint) where constraint == "renewal_extensions.request_identifier"
        {
            return try await attempt()
        }
    }

    /// Decodes a Server API JSON body. Unknown fields are ignored, as Apple's parsers ignore them (a client newer
    /// than the store keeps working); a known field of the wrong type answers its own code (`serverAPIField(_:_:else:)`);
    /// anything else unreadable answers `4000000`.
    static func decodeBody<T: Decodable>(_ type: T.Type, _ request: Request, context: KioskRequestContext)
        async throws -> T
    {
        let data = try await request.collectBody(context: context)
        do {
            return try JSONDecoder().decode(type, from: data.isEmpty ? Data("{}".utf8) : data)
        } catch let error as ServerAPIError {
            throw error
        } catch {
            throw ServerAPIError(4_000_000, "Invalid request. The request body is not valid JSON for this call.")
        }
    }
}

extension KeyedDecodingContainer {
    /// The Server API body field at `key`: nil when absent or null, `refusal` (the field's own Apple code) when it
    /// holds something other than a `T`, so a wrong type is refused like a wrong value instead of read as absent.
    func serverAPIField<T: Decodable>(_ type: T.Type, _ key: Key, else refusal: ServerAPIError) throws -> T? {
        do {
            return try decodeIfPresent(type, forKey: key)
        } catch {
            throw refusal
        }
    }
}

// MARK: - Wire types

private struct ExtendRenewalDateRequest: Decodable {
    var extendByDays: Int?
    var extendReasonCode: Int?
    var requestIdentifier: String?

    private enum CodingKeys: String, CodingKey {
        case extendByDays, extendReasonCode, requestIdentifier
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        extendByDays = try container.serverAPIField(Int.self, .extendByDays, else: .invalidExtendByDays)
        extendReasonCode = try container.serverAPIField(Int.self, .extendReasonCode, else: .invalidExtendReasonCode)
        requestIdentifier = try container.serverAPIField(
            String.self, .requestIdentifier, else: .invalidRequestIdentifier)
    }
}

private struct MassExtendRenewalDateRequest: Decodable {
    var renewal: ExtendRenewalDateRequest
    var storefrontCountryCodes: [String]?
    var productId: String?

    private enum CodingKeys: String, CodingKey {
        case storefrontCountryCodes, productId
    }

    init(from decoder: any Decoder) throws {
        renewal = try ExtendRenewalDateRequest(from: decoder)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        storefrontCountryCodes = try container.serverAPIField(
            [String].self, .storefrontCountryCodes, else: .invalidStorefrontCountryCode)
        productId = try container.serverAPIField(String.self, .productId, else: .invalidProductId)
    }
}
