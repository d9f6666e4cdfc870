import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskProtocol

/// `/admin/v1/apps/{bundleId}/products`: products, their localizations, review, availability and prices.
struct ProductsController {
    let catalog: CatalogService
    let money: MoneyService

    func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.get(AdminRoutes.products.routerPath) { request, context in
            let bundleId = try context.parameters.require("bundleId")
            let query = request.uri.queryParameters
            let includeDeleted = query.get("includeDeleted").map { $0.lowercased() == "true" } ?? false
            if let page = try PageQuery(request) {
                guard !includeDeleted else {
                    throw KioskError(
                        .invalidValue, "Pages list the products that are not deleted.", field: "includeDeleted",
                        fix: "Leave out includeDeleted with limit, or leave out limit to list every product.")
                }
                let (products, total) = try await catalog.productPage(
                    bundleId: bundleId, offset: page.offset, limit: page.limit)
                return ProductList(
                    products: products.map { ProductResource($0) }, total: total,
                    nextOffset: page.nextOffset(shown: products.count, total: total))
            }
            return ProductList(
                products: try await catalog.products(bundleId: bundleId, includeDeleted: includeDeleted).map {
                    ProductResource($0)
                })
        }
        group.post(AdminRoutes.products.routerPath) { request, context in
            let bundleId = try context.parameters.require("bundleId")
            let body = try await request.decodeJSON(as: ProductBody.self, context: context)
            guard let productId = body.productId else { throw missing("productId") }
            guard let type = body.type else { throw missing("type") }
            guard let referenceName = body.changes.referenceName else { throw missing("referenceName") }
            let product = try await catalog.createProduct(
                bundleId: bundleId, productId: productId, type: type, referenceName: referenceName,
                changes: body.changes)
            return EditedResponse(
                status: .created, response: try await resource(product, bundleId: bundleId, storefront: "USA"))
        }
        group.get(AdminRoutes.product.routerPath) { request, context in
            let bundleId = try context.parameters.require("bundleId")
            let product = try await catalog.product(
                bundleId: bundleId, productId: try context.parameters.require("productId"))
            return try await resource(
                product, bundleId: bundleId, storefront: request.uri.queryParameters.get("storefront"))
        }
        group.patch(AdminRoutes.product.routerPath) { request, context in
            let bundleId = try context.parameters.require("bundleId")
            let body = try await request.decodeJSON(as: ProductBody.self, context: context)
            let productId = try context.parameters.require("productId")
            if let type = body.type {
                try CatalogRules.requireSameType(
                    type, as: try await catalog.product(bundleId: bundleId, productId: productId))
            }
            if let newId = body.productId, newId != productId {
                throw KioskError(
                    .productIdImmutable, "A product id cannot change.", field: "productId",
                    fix: "Create a new product; product ids are permanent.")
            }
            let product = try await catalog.updateProduct(
                bundleId: bundleId, productId: productId, changes: body.changes)
            return try await resource(product, bundleId: bundleId, storefront: nil)
        }
        group.delete(AdminRoutes.product.routerPath) { _, context in
            let bundleId = try context.parameters.require("bundleId")
            return ProductResource(
                try await catalog.deleteProduct(
                    bundleId: bundleId, productId: try context.parameters.require("productId")))
        }
        group.put(AdminRoutes.productLocalization.routerPath) { request, context in
            let bundleId = try context.parameters.require("bundleId")
            let body = try await request.decodeJSON(as: LocalizationBody.self, context: context)
            let product = try await catalog.setLocalization(
                bundleId: bundleId, productId: try context.parameters.require("productId"),
                localization: ProductLocalization(
                    locale: try context.parameters.require("locale"), displayName: body.displayName,
                    description: body.description))
            return try await resource(product, bundleId: bundleId, storefront: nil)
        }
        group.delete(AdminRoutes.productLocalization.routerPath) { _, context in
            let bundleId = try context.parameters.require("bundleId")
            let product = try await catalog.deleteLocalization(
                bundleId: bundleId, productId: try context.parameters.require("productId"),
                locale: try context.parameters.require("locale"))
            return try await resource(product, bundleId: bundleId, storefront: nil)
        }
        group.post(AdminRoutes.productReview.routerPath) { request, context in
            let bundleId = try context.parameters.require("bundleId")
            let body = try await request.decodeJSON(as: ReviewBody.self, context: context)
            let product = try await catalog.review(
                bundleId: bundleId, productId: try context.parameters.require("productId"), action: body.action)
            return try await resource(product, bundleId: bundleId, storefront: nil)
        }
        group.get(AdminRoutes.productAvailability.routerPath) { request, context in
            let bundleId = try context.parameters.require("bundleId")
            let storefront = request.uri.queryParameters.get("storefront") ?? "USA"
            let environment = try request.environment(request.uri.queryParameters.get("environment"))
            let availability = try await catalog.availability(
                bundleId: bundleId, productId: try context.parameters.require("productId"), environment: environment,
                storefront: storefront)
            return AvailabilityResource(availability, environment: environment, storefront: storefront.uppercased())
        }
        group.get(AdminRoutes.productPrices.routerPath) { _, context in
            let bundleId = try context.parameters.require("bundleId")
            let product = try await catalog.product(
                bundleId: bundleId, productId: try context.parameters.require("productId"))
            let proceeds = try await money.proceeds(of: product)
            var prices = Self.prices(of: product.pricing)
            for index in prices.indices {
                guard let split = proceeds[prices[index].storefront],
                    let storefront = Storefront.named(prices[index].storefront)
                else { continue }
                prices[index].taxMinorUnits = split.taxMinorUnits
                prices[index].commissionMinorUnits = split.commissionMinorUnits
                prices[index].proceedsMinorUnits = split.proceedsMinorUnits
                prices[index].proceeds = storefront.currency.decimalString(minorUnits: split.proceedsMinorUnits)
                prices[index].pricesIncludeTax = split.pricesIncludeTax
                prices[index].taxRateBasisPoints = split.taxRateBasisPoints
                prices[index].commissionBasisPoints = split.commissionBasisPoints
            }
            return PriceList(productId: product.productId, prices: prices)
        }
    }

    /// The product with its availability in both environments for `storefront` (default USA).
    private func resource(_ product: Product, bundleId: String, storefront: String?) async throws -> ProductResource {
        let storefront = (storefront ?? "USA").uppercased()
        var availability: [AvailabilityResource] = []
        for environment in StoreEnvironment.allCases {
            availability.append(
                AvailabilityResource(
                    try await catalog.availability(
                        bundleId: bundleId, productId: product.productId, environment: environment,
                        storefront: storefront),
                    environment: environment, storefront: storefront))
        }
        return ProductResource(product, availability: availability)
    }

    /// The price in every storefront where the pricing gives one.
    static func prices(of pricing: Pricing) -> [PriceResource] {
        Storefront.all.compactMap { storefront in
            guard let amount = pricing.price(in: storefront) else { return nil }
            return PriceResource(
                storefront: storefront.code, storefrontId: String(storefront.appleId),
                currency: storefront.currency.code, priceMinorUnits: amount,
                price: storefront.currency.decimalString(minorUnits: amount),
                source: pricing.customPrices[storefront.code] != nil ? "custom" : "tier")
        }
    }

    private func missing(_ field: String) -> KioskError {
        KioskError(.missingField, "The field '\(field)' is required.", field: field, fix: "Add '\(field)'.")
    }
}
