import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskProtocol

/// `/admin/v1/testers`: sandbox test users.
struct TestersController {
    let catalog: CatalogService

    func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.get("testers") { _, _ in
            TesterList(testers: try await catalog.testers().map(TesterResource.init))
        }
        group.post("testers") { request, context in
            let body = try await request.decodeJSON(as: TesterBody.self, context: context)
            guard let email = body.email else {
                throw KioskError.invalid(
                    "missing_field", "The field 'email' is required.", field: "email", fix: "Add 'email'.")
            }
            let tester = try await catalog.createTester(email: email, changes: body.changes)
            return EditedResponse(status: .created, response: TesterResource(tester))
        }
        group.get("testers/:email") { _, context in
            TesterResource(try await catalog.tester(email: try context.parameters.require("email")))
        }
        group.patch("testers/:email") { request, context in
            let body = try await request.decodeJSON(as: TesterBody.self, context: context)
            let email = try context.parameters.require("email")
            if let newEmail = body.email, newEmail.lowercased() != email.lowercased() {
                throw KioskError.invalid(
                    "email_immutable", "A tester's email cannot change.", field: "email",
                    fix: "Create a new tester with the new email and delete the old one.")
            }
            return TesterResource(try await catalog.updateTester(email: email, changes: body.changes))
        }
        group.delete("testers/:email") { _, context in
            try await catalog.deleteTester(email: try context.parameters.require("email"))
            return Response(status: .noContent)
        }
        group.post("testers/:email/clear-purchase-history") { _, context in
            TesterResource(try await catalog.clearPurchaseHistory(email: try context.parameters.require("email")))
        }
    }
}
