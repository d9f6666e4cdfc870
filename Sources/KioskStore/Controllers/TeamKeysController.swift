import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskProtocol

/// `/admin/v1/api-keys`: team keys of the App Store Connect API (reports), apart from the In-App Purchase keys
/// of each app.
struct TeamKeysController {
    let team: TeamService

    func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.post(AdminRoutes.teamKeys.routerPath) { request, context in
            let body = try await request.decodeJSON(as: TeamKeyCreateBody.self, context: context)
            let created = try await team.createTeamKey(name: body.name, roles: body.roles)
            return EditedResponse(
                status: .created,
                response: TeamKeyResource(created.key, issuerId: created.issuerId, privateKey: created.privateKeyPEM))
        }
        group.get(AdminRoutes.teamKeys.routerPath) { _, _ in
            let listed = try await team.teamKeys()
            return TeamKeyList(
                issuerId: listed.issuerId, vendorNumber: listed.vendorNumber,
                keys: listed.keys.map { TeamKeyResource($0) })
        }
        group.post(AdminRoutes.revokeTeamKey.routerPath) { _, context in
            TeamKeyResource(try await team.revokeTeamKey(id: try context.parameters.require("keyId")))
        }
    }
}

extension TeamKeyResource: ResponseEncodable {}
extension TeamKeyList: ResponseEncodable {}
