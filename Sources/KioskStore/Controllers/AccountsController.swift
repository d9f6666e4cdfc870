import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskProtocol

/// `/admin/v1/testers` (sandbox testers) and `/admin/v1/accounts` (production customer accounts): one set of
/// routes over an environment's accounts, each path with its own JSON shapes.
struct AccountsController {
    let accounts: AccountService

    func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        addRoutes(
            to: group, routes: (AdminRoutes.testers, AdminRoutes.tester), environment: .sandbox, body: TesterBody.self,
            resource: TesterResource.init,
            list: TesterList.init(testers:total:nextOffset:), noun: ("A tester's", "tester"))
        addRoutes(
            to: group, routes: (AdminRoutes.accounts, AdminRoutes.account), environment: .production,
            body: AccountBody.self,
            resource: AccountResource.init, list: AccountList.init(accounts:total:nextOffset:),
            noun: ("An account's", "account"))
        group.post(AdminRoutes.clearPurchaseHistory.routerPath) { _, context in
            TesterResource(try await accounts.clearPurchaseHistory(email: try context.parameters.require("email")))
        }
    }

    private func addRoutes<Body: AccountRequestBody, Resource: ResponseEncodable, List: ResponseEncodable>(
        to group: RouterGroup<KioskRequestContext>, routes: (list: KioskRoute, one: KioskRoute),
        environment: StoreEnvironment, body: Body.Type,
        resource: @escaping @Sendable (Account) -> Resource, list: @escaping @Sendable ([Resource], Int?, Int?) -> List,
        noun: (possessive: String, name: String)
    ) {
        let accounts = accounts
        group.get(routes.list.routerPath) { request, _ in
            let page = try PageQuery(request)
            let (found, total) = try await accounts.accountPage(
                environment, offset: page?.offset ?? 0, limit: page?.limit)
            return list(
                found.map(resource), page.map { _ in total }, page?.nextOffset(shown: found.count, total: total))
        }
        group.post(routes.list.routerPath) { request, context in
            let body = try await request.decodeJSON(as: Body.self, context: context)
            guard let email = body.email else {
                throw KioskError(.missingField, "The field 'email' is required.", field: "email", fix: "Add 'email'.")
            }
            let account = try await accounts.createAccount(environment, email: email, changes: body.changes)
            return EditedResponse(status: .created, response: resource(account))
        }
        group.get(routes.one.routerPath) { _, context in
            resource(try await accounts.account(environment, email: try context.parameters.require("email")))
        }
        group.patch(routes.one.routerPath) { request, context in
            let body = try await request.decodeJSON(as: Body.self, context: context)
            let email = try context.parameters.require("email")
            if let newEmail = body.email, newEmail.lowercased() != email.lowercased() {
                throw KioskError(
                    .emailImmutable, "\(noun.possessive) email cannot change.", field: "email",
                    fix: "Create a new \(noun.name) with the new email and delete the old one.")
            }
            return resource(try await accounts.updateAccount(environment, email: email, changes: body.changes))
        }
        group.delete(routes.one.routerPath) { _, context in
            try await accounts.deleteAccount(environment, email: try context.parameters.require("email"))
            return Response(status: .noContent)
        }
    }
}

/// A console body that creates or changes an account.
protocol AccountRequestBody: Codable, Sendable {
    var email: String? { get }
    var changes: AccountChanges { get }
}

extension TesterBody: AccountRequestBody {}
extension AccountBody: AccountRequestBody {}
