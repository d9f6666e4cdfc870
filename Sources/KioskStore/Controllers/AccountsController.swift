import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskProtocol

/// `/admin/v1/accounts`: production customer accounts (sandbox testers are `/admin/v1/testers`).
struct AccountsController {
    let catalog: CatalogService

    func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.get("accounts") { _, _ in
            AccountList(accounts: try await catalog.accounts().map(AccountResource.init))
        }
        group.post("accounts") { request, context in
            let body = try await request.decodeJSON(as: AccountBody.self, context: context)
            guard let email = body.email else {
                throw KioskError.invalid(
                    "missing_field", "The field 'email' is required.", field: "email", fix: "Add 'email'.")
            }
            let account = try await catalog.createAccount(email: email, changes: body.changes)
            return EditedResponse(status: .created, response: AccountResource(account))
        }
        group.get("accounts/:email") { _, context in
            AccountResource(try await catalog.account(email: try context.parameters.require("email")))
        }
        group.patch("accounts/:email") { request, context in
            let body = try await request.decodeJSON(as: AccountBody.self, context: context)
            let email = try context.parameters.require("email")
            if let newEmail = body.email, newEmail.lowercased() != email.lowercased() {
                throw KioskError.invalid(
                    "email_immutable", "An account's email cannot change.", field: "email",
                    fix: "Create a new account with the new email and delete the old one.")
            }
            return AccountResource(try await catalog.updateAccount(email: email, changes: body.changes))
        }
        group.delete("accounts/:email") { _, context in
            try await catalog.deleteAccount(email: try context.parameters.require("email"))
            return Response(status: .noContent)
        }
    }
}
