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

    // MARK: Get All Subscription Statuses

    /// `GET /inApps/v1/subscriptions/{transactionId}?status=…`.
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
        return try ServerAPIAnswer.json(
            try await service.subscriptionStatuses(anyTransactionId: id, statuses: wanted, caller: caller))
    }

    // MARK: Extend a Subscription Renewal Date

    /// `PUT /inApps/v1/subscriptions/extend/{originalTransactionId}`.
    private func extendRenewalDate(_ request: Request, context: KioskRequestContext) async throws -> Response {
        let caller = try context.requireServerAPICaller()
        let id = try Self.decimalId(
            context.parameters.get("originalTransactionId"), else: .invalidOriginalTransactionId)
        let body = try await Self.decodeBody(ExtendRenewalDateRequest.self, request, context: context)
        let (days, reason, requestIdentifier) = try Self.validateExtension(
            body.extendByDays, body.extendReasonCode, body.requestIdentifier)
        let record = try await service.extendRenewalDate(
            originalTransactionId: id, days: days, reason: reason, requestIdentifier: requestIdentifier, caller: caller)
        return try ServerAPIAnswer.json(
            ExtendRenewalDateResponse(
                originalTransactionId: String(id), webOrderLineItemId: record.webOrderLineItemId.map(String.init),
                success: true, effectiveDate: record.effectiveDate?.millisecondsSince1970))
    }

    // MARK: Extend Subscription Renewal Dates for All Active Subscribers

    /// `POST /inApps/v1/subscriptions/extend/mass`.
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
        let record = try await service.extendRenewalDates(
            productId: productId, storefronts: body.storefrontCountryCodes, days: days, reason: reason,
            requestIdentifier: requestIdentifier, caller: caller)
        return try ServerAPIAnswer.json(MassExtendRenewalDateResponse(requestIdentifier: record.requestIdentifier))
    }

    /// `GET /inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}`.
    private func massExtensionStatus(context: KioskRequestContext) async throws -> Response {
        let caller = try context.requireServerAPICaller()
        return try ServerAPIAnswer.json(
            try await service.massExtensionStatus(
                productId: context.parameters.get("productId") ?? "",
                requestIdentifier: context.parameters.get("requestIdentifier") ?? "", caller: caller))
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
