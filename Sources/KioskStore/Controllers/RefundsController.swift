import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskProtocol

/// `/admin/v1/apps/{bundleId}/transactions/{transactionId}/refund` and `/reverse-refund`: the store's operator refunds
/// a production purchase (in full or a share of it) or takes a refund back, as Apple's support does; the app's server
/// hears REFUND or REFUND_REVERSED. Repeating either changes nothing more.
struct RefundsController {
    let refunds: RefundService

    func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.post(AdminRoutes.refund.routerPath) { request, context in
            let body = try await request.decodeJSON(as: RefundRequest.self, context: context)
            return try JSONAnswer.response(
                try await refunds.refund(
                    bundleId: try context.parameters.require("bundleId"),
                    transactionId: try context.parameters.require("transactionId", as: Int64.self), body,
                    environment: .production))
        }
        group.post(AdminRoutes.reverseRefund.routerPath) { _, context in
            try JSONAnswer.response(
                try await refunds.reverseRefund(
                    bundleId: try context.parameters.require("bundleId"),
                    transactionId: try context.parameters.require("transactionId", as: Int64.self),
                    environment: .production))
        }
    }
}
