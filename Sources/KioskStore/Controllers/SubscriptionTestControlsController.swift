import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskProtocol

/// `/sandbox/test/v1/clock` and `/sandbox/test/v1/apps/{bundleId}/subscriptions…`: the sandbox clock and the
/// subscription test controls (`TestControlRoutes`), admin token only.
struct SubscriptionTestControlsController {
    let clock: SandboxClockService
    let subscriptions: SubscriptionTestControls

    func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.get(TestControlRoutes.clock.routerPath) { _, _ in
            try JSONAnswer.response(clock.current())
        }
        group.post(TestControlRoutes.clock.routerPath) { request, context in
            let body = try await request.decodeJSON(as: TestClockRequest.self, context: context)
            return try JSONAnswer.response(try await clock.change(body))
        }
        group.get(TestControlRoutes.gracePeriod.routerPath) { _, context in
            try JSONAnswer.response(
                try await subscriptions.gracePeriod(bundleId: try context.parameters.require("bundleId")))
        }
        group.put(TestControlRoutes.gracePeriod.routerPath) { request, context in
            let body = try await request.decodeJSON(as: TestGracePeriod.self, context: context)
            return try JSONAnswer.response(
                try await subscriptions.setGracePeriod(bundleId: try context.parameters.require("bundleId"), body))
        }
        group.get(TestControlRoutes.subscriptions.routerPath) { request, context in
            try JSONAnswer.response(
                try await subscriptions.list(
                    bundleId: try context.parameters.require("bundleId"),
                    tester: try TestControlsController.tester(of: request)))
        }
        group.post(TestControlRoutes.subscription.routerPath) { request, context in
            let body = try await request.decodeJSON(as: TestSubscriptionRequest.self, context: context)
            return try JSONAnswer.response(
                try await subscriptions.act(
                    bundleId: try context.parameters.require("bundleId"),
                    originalTransactionId: try context.parameters.require("originalTransactionId", as: Int64.self),
                    body))
        }
    }
}
