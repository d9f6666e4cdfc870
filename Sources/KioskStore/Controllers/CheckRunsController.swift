import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskProtocol

/// `/admin/v1/…check-runs` (`AdminRoutes.recordCheckRun`, …): the verdicts `kiosk check` sends, for the console's Checks page.
struct CheckRunsController {
    let team: TeamService

    func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.post(AdminRoutes.recordCheckRun.routerPath) { request, context in
            let report = try await request.decodeJSON(as: CheckReport.self, context: context)
            return EditedResponse(
                status: .created,
                response: try await team.recordCheckRun(
                    bundleId: try context.parameters.require("bundleId"), report))
        }
        group.get(AdminRoutes.checkRuns.routerPath) { _, _ in CheckRunList(checkRuns: try await team.checkRuns()) }
        group.get(AdminRoutes.checkRun.routerPath) { _, context in
            try await team.checkRun(id: try context.parameters.require("id")).1
        }
    }
}

extension CheckRunSummary: ResponseEncodable {}
extension CheckRunList: ResponseEncodable {}
extension CheckReport: ResponseEncodable {}
