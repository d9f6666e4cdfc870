import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskProtocol

/// `/admin/v1/apps/{bundleId}/subscription-groups`.
struct GroupsController {
    let catalog: CatalogService

    func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.get(AdminRoutes.subscriptionGroups.routerPath) { _, context in
            GroupList(
                subscriptionGroups: try await catalog.groups(bundleId: try context.parameters.require("bundleId")).map(
                    GroupResource.init))
        }
        group.post(AdminRoutes.subscriptionGroups.routerPath) { request, context in
            let body = try await request.decodeJSON(as: GroupBody.self, context: context)
            guard let referenceName = body.referenceName else {
                throw KioskError(
                    .missingField, "The field 'referenceName' is required.", field: "referenceName",
                    fix: "Add 'referenceName'.")
            }
            let created = try await catalog.createGroup(
                bundleId: try context.parameters.require("bundleId"), referenceName: referenceName,
                localizations: body.localizations ?? [])
            return EditedResponse(status: .created, response: GroupResource(created))
        }
        group.get(AdminRoutes.subscriptionGroup.routerPath) { _, context in
            GroupResource(
                try await catalog.group(
                    bundleId: try context.parameters.require("bundleId"),
                    id: try context.parameters.require("groupId", as: Int64.self)))
        }
        group.patch(AdminRoutes.subscriptionGroup.routerPath) { request, context in
            let body = try await request.decodeJSON(as: GroupBody.self, context: context)
            return GroupResource(
                try await catalog.updateGroup(
                    bundleId: try context.parameters.require("bundleId"),
                    id: try context.parameters.require("groupId", as: Int64.self), referenceName: body.referenceName,
                    localizations: body.localizations))
        }
        group.delete(AdminRoutes.subscriptionGroup.routerPath) { _, context in
            try await catalog.deleteGroup(
                bundleId: try context.parameters.require("bundleId"),
                id: try context.parameters.require("groupId", as: Int64.self))
            return Response(status: .noContent)
        }
    }
}
