import Foundation
import KioskCore
import KioskProtocol

/// Where a subscription or an in-app purchase is offered, as App Store Connect sets it: a list of territories and
/// whether new territories are added. It is the product's own territory availability, the one catalog files carry
/// and the store's availability check reads: in a territory left out, the product is listed nowhere and not sold.
extension ConnectCatalogController {
    func addAvailabilityRoutes(to routes: ConnectRouter) {
        addAvailabilityRoutes(.subscriptions, type: "subscriptionAvailabilities", owner: "subscription", to: routes)
        addAvailabilityRoutes(.inAppPurchases, type: "inAppPurchaseAvailabilities", owner: "inAppPurchase", to: routes)
    }

    /// The availability resources of one face: `type` is their type, `owner` the relationship naming the product.
    private func addAvailabilityRoutes(
        _ face: ProductFace, type: String, owner: String, to routes: ConnectRouter
    ) {
        routes.add(.post, "/v1/\(type)") { call in
            let body = try await call.body()
            let (product, app) = try await product(body.relationship(owner) ?? "", face)
            let listed = body.data["relationships"]?["availableTerritories"]?["data"]?.arrayValue ?? []
            var codes: Set<String> = []
            for (index, item) in listed.enumerated() {
                let code = item["id"]?.stringValue ?? ""
                codes.insert(
                    try Self.territory(code, pointer: "availableTerritories/data/\(index)").code)
            }
            let availability = TerritoryAvailability(
                territories: codes,
                availableInNewTerritories: body.attribute("availableInNewTerritories")?.boolValue ?? false)
            let changed = try await catalog.modifyProduct(bundleId: app.bundleId, productId: product.productId) { _ in
                ProductChanges(territoryAvailability: availability)
            }
            return .created(
                call.writer.single(Self.availability(of: changed, type: type)),
                audit: ("product.availability", "\(app.bundleId)/\(product.productId) \(codes.count) territories"))
        }
        routes.add(.get, "/v1/\(type)/{id}") { call in
            .ok(call.writer.single(Self.availability(of: try await availableProduct(call.id, face, type), type: type)))
        }
        routes.addRelated("/v1/\(type)", "availableTerritories") { call in
            .many(Self.territories(of: try await availableProduct(call.id, face, type)))
        }
        let relationship = face.sells(.autoRenewable) ? "subscriptionAvailability" : "inAppPurchaseAvailability"
        routes.addRelated(face.path, relationship) { call in
            .one(Self.availability(of: try await product(call.id, face).0, type: type))
        }
    }

    /// The product's availability (id: the product's), with its territories.
    static func availability(of product: Product, type: String) -> ConnectResource {
        ConnectResource(
            type: type, id: ConnectID.product(product),
            attributes: [
                "availableInNewTerritories": .bool(product.territoryAvailability?.availableInNewTerritories ?? true)
            ],
            relationships: [ConnectRelationship(name: "availableTerritories", related: .many(territories(of: product)))]
        )
    }

    /// The territories the product is offered in: those its availability lists, or every one when it has none.
    private static func territories(of product: Product) -> [ConnectResource] {
        Storefront.all.filter { product.territoryAvailability?.includes($0) ?? true }.map(
            ConnectCatalogResources.territory)
    }

    /// The product whose availability `id` names (an availability's id is its product's).
    private func availableProduct(_ id: String, _ face: ProductFace, _ type: String) async throws -> Product {
        do {
            return try await product(id, face).0
        } catch is ConnectAPIError {
            throw ConnectAPIError.notFound(type, id)
        }
    }
}
