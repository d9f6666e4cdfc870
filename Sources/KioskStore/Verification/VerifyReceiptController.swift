import Foundation
import Hummingbird
import KioskCore

/// Apple's legacy `verifyReceipt`: `POST /verifyReceipt` (production) and `POST /sandbox/verifyReceipt`.
/// Every answer is HTTP 200 with the outcome in `status`, as Apple answers; any other method answers 21000.
struct VerifyReceiptController {
    let service: ServerAPIService
    let environment: StoreEnvironment

    func addRoutes(to router: Router<KioskRequestContext>) {
        let path: RouterPath = environment == .sandbox ? "sandbox/verifyReceipt" : "verifyReceipt"
        let verifier = ReceiptValidation(
            database: service.database, clock: service.clocks.clock(for: environment), signing: service.signing,
            environment: environment)
        router.post(path) { request, context in
            let body = try await request.body.collect(upTo: context.maxUploadSize)
            return try ServerAPIAnswer.json(await verifier.verify(requestBody: Data(buffer: body)))
        }
        for method in [HTTPRequest.Method.get, .put, .delete, .patch] {
            router.on(path, method: method) { _, _ in
                try ServerAPIAnswer.json(
                    ReceiptValidation.failure(.notPostOfJSON, "verifyReceipt takes an HTTP POST of a JSON object."))
            }
        }
    }
}
