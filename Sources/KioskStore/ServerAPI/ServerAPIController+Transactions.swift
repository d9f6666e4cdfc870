import Foundation
import Hummingbird

extension ServerAPIController {
    /// Transaction info, history v1/v2, order lookup, refund history, consumption v1/v2, app account token,
    /// app transaction info, finish.
    func addTransactionRoutes(to group: RouterGroup<KioskRequestContext>) {
    }
}
