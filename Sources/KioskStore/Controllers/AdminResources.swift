import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskProtocol

// The console API's request bodies (`/admin/v1`), as documented in openapi.yaml; its answers are in KioskProtocol.

extension AppResource: ResponseEncodable {}
extension AppList: ResponseEncodable {}
extension AvailabilityResource: ResponseEncodable {}
extension ProductResource: ResponseEncodable {}
extension ProductList: ResponseEncodable {}
extension PriceList: ResponseEncodable {}
extension GroupResource: ResponseEncodable {}
extension GroupList: ResponseEncodable {}
extension TesterResource: ResponseEncodable {}
extension TesterList: ResponseEncodable {}
extension KeyResource: ResponseEncodable {}
extension KeyList: ResponseEncodable {}
extension AgreementResource: ResponseEncodable {}
extension AccountResource: ResponseEncodable {}
extension AccountList: ResponseEncodable {}
extension OfferCodeList: ResponseEncodable {}

// MARK: Request bodies, as the console applies them

extension TesterBody {
    var changes: AccountChanges {
        AccountChanges(
            password: password, firstName: firstName, lastName: lastName, storefront: storefront,
            paymentOutcome: paymentOutcome, interruptPurchases: interruptPurchases, askToBuy: askToBuy,
            renewalRate: renewalRate)
    }
}

extension AccountBody {
    var changes: AccountChanges {
        AccountChanges(
            password: password, firstName: firstName, lastName: lastName, storefront: storefront,
            paymentOutcome: paymentOutcome)
    }
}

/// Marks a value that is both decoded from and encoded into Kiosk's JSON.
package typealias ResponseCodable = Codable & ResponseEncodable & Sendable

extension Request {
    /// A query or path parameter parsed as `StoreEnvironment`; absent means the sandbox.
    func environment(_ text: String?, field: String = "environment") throws -> StoreEnvironment {
        try StoreEnvironment(requested: text, field: field)
    }
}

extension KioskRoute {
    /// The route as the router registers it, under its API's group (``KioskRoute/API/routerGroup``).
    var routerPath: RouterPath { RouterPath(pattern) }
}

extension KioskRoute.API {
    /// The API's base as a router group's path: `admin/v1`.
    var routerGroup: RouterPath { RouterPath(String(rawValue.dropFirst())) }
}
