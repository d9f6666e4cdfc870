import Foundation
import Hummingbird
import KioskHTTP

extension ServerAPIController {
    /// Transaction info, history v1/v2, order lookup, refund history, consumption v1/v2, app account token,
    /// app transaction info, finish.
    func addTransactionRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.get("v1/transactions/:transactionId") { _, context in
            let caller = try context.requireServerAPICaller()
            return try ServerAPIAnswer.json(
                try await service.transactionInfo(try Self.transactionId(context), caller: caller))
        }
        for version in [1, 2] {
            group.get(RouterPath(stringLiteral: "v\(version)/history/:transactionId")) { request, context in
                let caller = try context.requireServerAPICaller()
                let id = try Self.transactionId(context)
                let query = try ServerAPIHistoryRequest(query: request.uri.queryParameters)
                return try ServerAPIAnswer.json(
                    try await service.history(anyTransactionId: id, query, version: version, caller: caller))
            }
            group.put(RouterPath(stringLiteral: "v\(version)/transactions/consumption/:transactionId")) {
                request, context in
                let caller = try context.requireServerAPICaller()
                let id = try Self.transactionId(context)
                let body = try await request.collectBody(context: context)
                try ServerAPIConsumptionRequest.validate(body, version: version)
                try await service.saveConsumption(
                    id, body: String(decoding: body, as: UTF8.self), version: version, caller: caller)
                return ServerAPIAnswer.empty(.accepted)
            }
        }
        group.get("v1/lookup/:orderId") { _, context in
            let caller = try context.requireServerAPICaller()
            return try ServerAPIAnswer.json(
                try await service.lookUpOrder(try context.parameters.require("orderId"), caller: caller))
        }
        group.get("v2/refund/lookup/:transactionId") { request, context in
            let caller = try context.requireServerAPICaller()
            let id = try Self.transactionId(context)
            return try ServerAPIAnswer.json(
                try await service.refundHistory(
                    anyTransactionId: id, revision: request.uri.queryParameters.get("revision"), caller: caller))
        }
        group.put("v1/transactions/:transactionId/appAccountToken") { request, context in
            let caller = try context.requireServerAPICaller()
            guard let id = Self.positiveInteger(try context.parameters.require("transactionId")) else {
                throw ServerAPIError.invalidOriginalTransactionId
            }
            let body = try await request.collectBody(context: context)
            guard
                let fields = try? JSONDecoder().decode([String: JSONScalar].self, from: body)
            else { throw ServerAPIError(4_000_000, "Invalid request. The request body is not a JSON object.") }
            guard case .string(let text) = fields["appAccountToken"], let token = UUID(uuidString: text) else {
                throw ServerAPIError.invalidAppAccountTokenUUID
            }
            try await service.setAppAccountToken(token, originalTransactionId: id, caller: caller)
            return ServerAPIAnswer.empty(.ok)
        }
        group.get("v1/transactions/appTransactions/:transactionId") { _, context in
            let caller = try context.requireServerAPICaller()
            return try ServerAPIAnswer.json(
                try await service.appTransactionInfo(anyTransactionId: try Self.transactionId(context), caller: caller))
        }
        group.post("v1/transactions/:transactionId/finish") { _, context in
            let caller = try context.requireServerAPICaller()
            try await service.finish(try Self.transactionId(context), caller: caller)
            return ServerAPIAnswer.empty(.ok)
        }
    }

    /// The `:transactionId` path parameter; `4000006` unless it is a transaction id's digits.
    static func transactionId(_ context: KioskRequestContext) throws -> Int64 {
        guard let id = positiveInteger(try context.parameters.require("transactionId")) else {
            throw ServerAPIError.invalidTransactionId
        }
        return id
    }

    /// A positive decimal number of plain digits (no sign, no spaces), as Apple's ids and timestamps are.
    static func positiveInteger(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            let value = Int64(text), value > 0
        else { return nil }
        return value
    }
}
