import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskProtocol

/// `/admin/v1/agreements/paid-apps`: the Paid Apps agreement that gates every product, and the legal entity, bank
/// account and tax information it needs.
struct AgreementsController {
    let catalog: CatalogService

    func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.get(AdminRoutes.paidAppsAgreement.routerPath) { _, _ in
            Self.resource(try await catalog.agreement())
        }
        group.put(AdminRoutes.paidAppsAgreement.routerPath) { request, context in
            let body = try await request.decodeJSON(as: AgreementBody.self, context: context)
            return Self.resource(try await catalog.setAgreement(body.status))
        }
        group.patch(AdminRoutes.paidAppsAgreement.routerPath) { request, context in
            let body = try await request.decodeJSON(as: AgreementDetailsBody.self, context: context)
            return Self.resource(try await catalog.updateAgreement(body))
        }
        group.post(AdminRoutes.acceptPaidAppsAgreement.routerPath) { request, context in
            let body =
                try await request.optionalJSON(as: AgreementDetailsBody.self, context: context)
                ?? AgreementDetailsBody()
            return Self.resource(try await catalog.updateAgreement(body, acceptingTerms: true))
        }
    }

    static func resource(_ answer: (agreement: PaidAppsAgreement, vendorNumber: String)) -> AgreementResource {
        AgreementResource(answer.agreement, vendorNumber: answer.vendorNumber)
    }
}
