import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskProtocol

/// `/admin/v1/apps/{bundleId}/retention…` (`AdminRoutes.retention`, …): an app's retention messaging as the
/// developer configured it through Apple's Retention Messaging API, App Review's decisions on its images and
/// messages, and its retention offers.
struct RetentionController {
    let retention: RetentionService

    func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.get(AdminRoutes.retention.routerPath) { request, context in
            try await retention.overview(
                bundleId: try context.parameters.require("bundleId"),
                environment: try request.environment(request.uri.queryParameters.get("environment")))
        }
        group.post(AdminRoutes.retentionReview.routerPath) { request, context in
            try await retention.review(
                bundleId: try context.parameters.require("bundleId"),
                try await request.decodeJSON(as: RetentionReviewRequest.self, context: context))
        }
        group.get(AdminRoutes.retentionOffers.routerPath) { _, context in
            RetentionOfferList(
                retentionOffers: try await retention.retentionOffers(
                    bundleId: try context.parameters.require("bundleId")))
        }
        group.post(AdminRoutes.retentionOffers.routerPath) { request, context in
            try await retention.putRetentionOffer(
                bundleId: try context.parameters.require("bundleId"),
                try await request.decodeJSON(as: RetentionOfferRequest.self, context: context))
        }
        group.delete(AdminRoutes.retentionOffer.routerPath) { _, context in
            try await retention.deleteRetentionOffer(
                bundleId: try context.parameters.require("bundleId"),
                productId: try context.parameters.require("productId"),
                identifier: try context.parameters.require("identifier"))
            return Response(status: .noContent)
        }
    }
}

extension RetentionOverview: ResponseEncodable {}
extension RetentionReviewResponse: ResponseEncodable {}
extension RetentionOfferList: ResponseEncodable {}
extension RetentionOfferResource: ResponseEncodable {}
