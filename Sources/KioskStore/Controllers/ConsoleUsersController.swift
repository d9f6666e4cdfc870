import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskProtocol

/// `/admin/v1/console-users`: the people who sign in to the console with a password, and their roles.
struct ConsoleUsersController {
    let team: TeamService

    func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.post(AdminRoutes.consoleUsers.routerPath) { request, context in
            let body = try await request.decodeJSON(as: ConsoleUserCreateBody.self, context: context)
            let created = try await team.createConsoleUser(
                email: body.email, name: body.name, roles: body.roles, password: body.password)
            return EditedResponse(
                status: .created,
                response: ConsoleUserResource(created.user, temporaryPassword: created.temporaryPassword))
        }
        group.get(AdminRoutes.consoleUsers.routerPath) { _, _ in
            ConsoleUserList(users: try await team.consoleUsers().map { ConsoleUserResource($0) })
        }
        group.patch(AdminRoutes.consoleUser.routerPath) { request, context in
            let body = try await request.decodeJSON(as: ConsoleUserUpdateBody.self, context: context)
            return ConsoleUserResource(
                try await team.updateConsoleUser(
                    email: try context.parameters.require("email"), name: body.name, roles: body.roles,
                    disabled: body.disabled))
        }
        group.post(AdminRoutes.resetConsolePassword.routerPath) { _, context in
            let reset = try await team.resetConsoleUserPassword(email: try context.parameters.require("email"))
            return ConsoleUserResource(reset.user, temporaryPassword: reset.temporaryPassword)
        }
    }
}

extension ConsoleUserResource: ResponseEncodable {}
extension ConsoleUserList: ResponseEncodable {}
