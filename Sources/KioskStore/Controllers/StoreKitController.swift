import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskProtocol

/// The client protocol KioskKit speaks (`StoreKitPaths`), mounted once per environment:
/// `/storekit/v1` for production and `/sandbox/storekit/v1` for the sandbox.
struct StoreKitController {
    let purchases: PurchaseService
    /// Turning a subscription's auto-renew off runs the retention flow.
    let retention: RetentionService
    /// Wakes the updates streams this controller serves.
    let feed: QueueFeed
    let environment: StoreEnvironment

    func addRoutes(to router: Router<KioskRequestContext>) {
        let base = router.group(
            RouterPath(stringLiteral: String(StoreKitPaths.base(sandbox: environment == .sandbox).dropFirst()))
        )
        .add(middleware: QueryTextMiddleware())
        base.post("sessions") { request, context in
            let body = try await request.decodeJSON(as: SignInRequest.self, context: context)
            return try JSONAnswer.response(try await purchases.signIn(body, environment: environment), status: .created)
        }
        let client = base.group().add(middleware: ClientAuthMiddleware(purchases: purchases, environment: environment))
        client.delete("sessions") { _, context in
            try await purchases.signOut(try context.requireClient())
            return Response(status: .noContent)
        }
        client.post("products") { request, context in
            let body = try await request.decodeJSON(as: ProductsRequest.self, context: context)
            return try JSONAnswer.response(try await purchases.products(body, for: try context.requireClient()))
        }
        client.post("payments") { request, context in
            let body = try await request.decodeJSON(as: PaymentRequest.self, context: context)
            return try JSONAnswer.response(try await purchases.pay(body, for: try context.requireClient()))
        }
        client.get("queue") { _, context in
            try JSONAnswer.response(try await purchases.unfinished(for: try context.requireClient()))
        }
        client.post("queue/:sequence/finish") { _, context in
            let sequence = try context.parameters.require("sequence", as: Int64.self)
            return try JSONAnswer.response(
                try await purchases.finish(sequence: sequence, for: try context.requireClient()))
        }
        client.post("restore") { request, context in
            let data = try await request.collectBody(context: context)
            let body = data.isEmpty ? RestoreRequest() : try JSONBody.decode(RestoreRequest.self, from: data)
            return try JSONAnswer.response(try await purchases.restore(body, for: try context.requireClient()))
        }
        client.get("receipt") { _, context in
            try JSONAnswer.response(try await purchases.receipt(for: try context.requireClient()))
        }
        client.get("entitlements") { _, context in
            try JSONAnswer.response(try await purchases.entitlements(for: try context.requireClient()))
        }
        client.post("subscriptions/:originalTransactionId/cancel") { request, context in
            let body = try await request.decodeJSON(as: CancelSubscriptionRequest.self, context: context)
            return try JSONAnswer.response(
                try await retention.cancel(
                    originalTransactionId: try context.parameters.require("originalTransactionId", as: Int64.self),
                    body, for: try context.requireClient()))
        }
        client.get("updates") { request, context in
            let client = try context.requireClient()
            let cursor = try UpdatesStream.cursor(of: request)
            let hangUp = await ClientHangUp.hangUp(on: context.channel)
            return UpdatesStream(purchases: purchases, feed: feed, client: client, cursor: cursor, hangUp: hangUp)
                .response()
        }
    }
}

/// JSON answers of the client protocol and the test controls: compact, sorted keys.
enum JSONAnswer {
    static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        let data = try JSONEncoder.kiosk.encode(value)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
