import Foundation
import Hummingbird
import KioskCore

/// Apple's legacy `verifyReceipt`: `POST /verifyReceipt` (production) and `POST /sandbox/verifyReceipt`.
struct VerifyReceiptController {
    let service: ServerAPIService
    let environment: StoreEnvironment

    func addRoutes(to router: Router<KioskRequestContext>) {
    }
}
