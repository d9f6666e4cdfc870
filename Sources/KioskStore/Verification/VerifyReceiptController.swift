import Foundation
import Hummingbird
import KioskCore
import KioskHTTP

/// Apple's legacy `verifyReceipt`: `POST /verifyReceipt` (production) and `POST /sandbox/verifyReceipt`.
/// Every answer is HTTP 200 with the outcome in `status`, as Apple answers; any other method, and a body larger
/// than ``StoreBodyLimits/verifyReceipt``, answers 21000. A body whose HTTP framing is broken never reaches
/// `verifyReceipt`: it is answered 400, as any front end would.
struct VerifyReceiptController {
    let service: ServerAPIService
    let environment: StoreEnvironment

    func addRoutes(to router: Router<KioskRequestContext>) {
        let path: RouterPath = environment == .sandbox ? "sandbox/verifyReceipt" : "verifyReceipt"
        let verifier = ReceiptValidation(
            database: service.database, clock: service.clocks.clock(for: environment), signing: service.signing,
            environment: environment)
        let route = router.group().add(middleware: BodyLimitMiddleware(StoreBodyLimits.verifyReceipt))
        route.post(path) { request, context in
            let body: Data
            do {
                body = try await request.collectBody(context: context)
            } catch let error as KioskError where error.kind == .tooLarge {
                return try ServerAPIAnswer.json(ReceiptValidation.failure(.notPostOfJSON, error.message))
            }
            return try ServerAPIAnswer.json(await verifier.verify(requestBody: body))
        }
        for method in [HTTPRequest.Method.get, .put, .delete, .patch] {
            router.on(path, method: method) { _, _ in
                try ServerAPIAnswer.json(
                    ReceiptValidation.failure(.notPostOfJSON, "verifyReceipt takes an HTTP POST of a JSON object."))
            }
        }
    }
}
