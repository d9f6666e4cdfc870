import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskProtocol

/// `/admin/v1/agreements/paid-apps`: the Paid Apps agreement that gates every product.
struct AgreementsController {
    let catalog: CatalogService

    func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.get("agreements/paid-apps") { _, _ in
            AgreementResource(try await catalog.agreement())
        }
        group.put("agreements/paid-apps") { request, context in
            let body = try await request.decodeJSON(as: AgreementBody.self, context: context)
            return AgreementResource(try await catalog.setAgreement(body.status))
        }
        group.post("agreements/paid-apps/accept") { _, _ in
            AgreementResource(try await catalog.setAgreement(.active))
        }
    }
}
