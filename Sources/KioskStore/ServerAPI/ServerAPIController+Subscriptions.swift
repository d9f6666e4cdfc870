import Foundation
import Hummingbird

extension ServerAPIController {
    /// All subscription statuses; renewal-date extensions (single, mass, mass status).
    func addSubscriptionRoutes(to group: RouterGroup<KioskRequestContext>) {
    }
}
