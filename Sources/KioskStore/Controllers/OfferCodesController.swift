import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskProtocol

/// `/admin/v1/apps/{bundleId}/offer-codes`: create one-time offer codes (`POST`, 201) and list them with their
/// state (`GET ?productId=`).
struct OfferCodesController {
    let catalog: CatalogService

    func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.post(AdminRoutes.offerCodes.routerPath) { request, context in
            let body = try await request.decodeJSON(as: OfferCodesCreateBody.self, context: context)
            let codes = try await catalog.createOfferCodes(
                bundleId: try context.parameters.require("bundleId"),
                productId: try Self.require(body.productId, "productId"),
                referenceName: try Self.require(body.referenceName, "referenceName"),
                paymentMode: try Self.require(body.paymentMode, "paymentMode"),
                period: try Self.require(body.period, "period"), numberOfPeriods: body.numberOfPeriods ?? 1,
                pricing: body.pricing ?? Pricing(), count: try Self.require(body.count, "count"))
            return EditedResponse(
                status: .created, response: OfferCodeList(offerCodes: codes.map(OfferCodeResource.init)))
        }
        group.get(AdminRoutes.offerCodes.routerPath) { request, context in
            OfferCodeList(
                offerCodes: try await catalog.offerCodes(
                    bundleId: try context.parameters.require("bundleId"),
                    productId: request.uri.queryParameters["productId"].map(String.init)
                ).map(OfferCodeResource.init))
        }
    }

    private static func require<T>(_ value: T?, _ field: String) throws -> T {
        guard let value else {
            throw KioskError(.missingField, "The field '\(field)' is required.", field: field, fix: "Add '\(field)'.")
        }
        return value
    }
}

package struct OfferCodesCreateBody: Codable {
    package var productId: String?
    package var referenceName: String?
    package var paymentMode: String?
    package var period: String?
    package var numberOfPeriods: Int?
    package var pricing: Pricing?
    package var count: Int?
}
