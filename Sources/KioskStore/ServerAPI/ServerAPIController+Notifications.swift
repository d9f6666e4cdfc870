import Foundation
import Hummingbird

extension ServerAPIController {
    /// Test notification and its status; notification history.
    func addNotificationRoutes(to group: RouterGroup<KioskRequestContext>) {
    }
}
