import Foundation
import KioskCore
import KioskProtocol
import KioskStorage

extension CatalogService {
    public func createProduct(
        bundleId: String, productId: String, type: ProductType, referenceName: String, changes: ProductChanges
    ) async throws -> Product {
        try CatalogRules.validateProductId(productId, field: "productId")
        let now = clock.now()
        return try await database.transaction { tx in
            let app = try await Self.requireApp(bundleId, in: tx)
            if let existing = try await tx.product(appId: app.id, productId: productId) {
                throw Self.reusedProductId(existing, bundleId: bundleId)
            }
            try Self.requireRoom(for: 1, besides: try await tx.productCount(appId: app.id), bundleId: bundleId)
            var product = Product(
                appId: app.id, productId: productId, referenceName: referenceName, type: type, createdAt: now,
                updatedAt: now)
            try await Self.apply(changes, to: &product, app: app, in: tx)
            product.reviewState = try CatalogRules.reviewState(of: product, after: .metadataChanged)
            try await tx.insertProduct(product)
            return product
        }
    }

    public func products(bundleId: String, includeDeleted: Bool = false) async throws -> [Product] {
        try await database.transaction { tx in
            let app = try await Self.requireApp(bundleId, in: tx)
            return try await tx.products(appId: app.id).filter { includeDeleted || $0.deletedAt == nil }
        }
    }

    /// Up to `limit` of the app's products that are not deleted, from `offset` in product id order, and how many
    /// there are.
    public func productPage(bundleId: String, offset: Int, limit: Int) async throws -> (
        products: [Product], total: Int
    ) {
        try await database.transaction { tx in
            let app = try await Self.requireApp(bundleId, in: tx)
            let products = try await tx.liveProducts(appId: app.id, limit: limit, offset: offset)
            return (products, try await tx.liveProductCount(appId: app.id))
        }
    }

    /// How many products each app has that are not deleted, by bundle id.
    public func liveProductCounts() async throws -> [String: Int] {
        try await database.transaction { tx in
            var counts: [String: Int] = [:]
            for app in try await tx.apps() { counts[app.bundleId] = try await tx.liveProductCount(appId: app.id) }
            return counts
        }
    }

    public func product(bundleId: String, productId: String) async throws -> Product {
        try await database.transaction { tx in
            let app = try await Self.requireApp(bundleId, in: tx)
            return try await Self.requireLiveProduct(productId, app: app, in: tx)
        }
    }

    public func updateProduct(bundleId: String, productId: String, changes: ProductChanges) async throws -> Product {
        let now = clock.now()
        return try await database.transaction { tx in
            let app = try await Self.requireApp(bundleId, in: tx)
            var product = try await Self.requireLiveProduct(productId, app: app, in: tx)
            try await Self.apply(changes, to: &product, app: app, in: tx)
            product.reviewState = try CatalogRules.reviewState(of: product, after: .metadataChanged)
            product.updatedAt = now
            try await tx.updateProduct(product)
            return product
        }
    }

    /// Adds or replaces the product's texts in one locale.
    public func setLocalization(
        bundleId: String, productId: String, localization: ProductLocalization
    ) async throws -> Product {
        try await modifyProduct(bundleId: bundleId, productId: productId) { product in
            var localizations = product.localizations.filter {
                CatalogRules.normalizedLocale($0.locale) != CatalogRules.normalizedLocale(localization.locale)
            }
            localizations.append(localization)
            return ProductChanges(localizations: localizations)
        }
    }

    public func deleteLocalization(bundleId: String, productId: String, locale: String) async throws -> Product {
        try await modifyProduct(bundleId: bundleId, productId: productId) { product in
            let wanted = CatalogRules.normalizedLocale(locale)
            guard product.localizations.contains(where: { CatalogRules.normalizedLocale($0.locale) == wanted }) else {
                throw KioskError(
                    .localizationNotFound, "Product '\(productId)' has no localization '\(locale)'.",
                    field: "locale",
                    fix: "Its locales are: \(product.localizations.map(\.locale).joined(separator: ", ")).")
            }
            return ProductChanges(
                localizations: product.localizations.filter { CatalogRules.normalizedLocale($0.locale) != wanted })
        }
    }

    /// Deletes a product. Its id stays reserved forever: App Store Connect never lets a deleted id be used again.
    public func deleteProduct(bundleId: String, productId: String) async throws -> Product {
        let now = clock.now()
        return try await database.transaction { tx in
            let app = try await Self.requireApp(bundleId, in: tx)
            var product = try await Self.requireLiveProduct(productId, app: app, in: tx)
            product.deletedAt = now
            product.updatedAt = now
            try await tx.updateProduct(product)
            return product
        }
    }

    /// Moves the product through App Store review.
    public func review(bundleId: String, productId: String, action: ReviewAction) async throws -> Product {
        let now = clock.now()
        return try await database.transaction { tx in
            let app = try await Self.requireApp(bundleId, in: tx)
            var product = try await Self.requireLiveProduct(productId, app: app, in: tx)
            product.reviewState = try CatalogRules.reviewState(of: product, after: action.event)
            product.updatedAt = now
            try await tx.updateProduct(product)
            return product
        }
    }

    /// Whether clients of `environment` in `storefront` get the product, and every reason why not.
    public func availability(
        bundleId: String, productId: String, environment: StoreEnvironment, storefront: String
    ) async throws -> ProductAvailability {
        let storefront = try CatalogRules.requireStorefront(storefront, field: "storefront")
        return try await database.transaction { tx in
            let app = try await Self.requireApp(bundleId, in: tx)
            guard let product = try await tx.product(appId: app.id, productId: productId) else {
                throw Self.productNotFound(productId, bundleId: bundleId)
            }
            return ProductAvailability.evaluate(
                product: product, app: app, agreement: try await Self.agreement(in: tx), environment: environment,
                storefront: storefront)
        }
    }

    // MARK: Helpers

    /// Changes a product from what it holds now, in one transaction: `makeChanges` reads the product as stored and
    /// returns the changes, so two people editing one list (offers, localizations) never lose each other's change.
    func modifyProduct(
        bundleId: String, productId: String, _ makeChanges: @Sendable (Product) throws -> ProductChanges
    ) async throws -> Product {
        let now = clock.now()
        return try await database.transaction { tx in
            let app = try await Self.requireApp(bundleId, in: tx)
            var product = try await Self.requireLiveProduct(productId, app: app, in: tx)
            try await Self.apply(try makeChanges(product), to: &product, app: app, in: tx)
            product.reviewState = try CatalogRules.reviewState(of: product, after: .metadataChanged)
            product.updatedAt = now
            try await tx.updateProduct(product)
            return product
        }
    }

    /// Applies `changes`, resolves the subscription group, and checks every catalog rule on the result.
    static func apply(
        _ changes: ProductChanges, to product: inout Product, app: App, in tx: any StorageTransaction
    ) async throws {
        if let value = changes.referenceName { product.referenceName = value }
        if let value = changes.pricing { product.pricing = value }
        if let value = changes.localizations {
            product.localizations = value.map {
                ProductLocalization(
                    locale: CatalogRules.normalizedLocale($0.locale), displayName: $0.displayName,
                    description: $0.description)
            }.sorted { $0.locale < $1.locale }
        }
        if let value = changes.clearedForSale { product.clearedForSale = value }
        if let value = changes.familyShareable { product.familyShareable = value }
        if let value = changes.duration { product.duration = value }
        if let value = changes.introductoryOffers { product.introductoryOffers = value }
        if let value = changes.promotionalOffers { product.promotionalOffers = value }
        if let value = changes.winBackOffers { product.winBackOffers = value }
        if let value = changes.monthlyPlan { product.monthlyPlan = value.pricing.isEmpty ? nil : value }
        if let value = changes.territoryAvailability { product.territoryAvailability = value }
        if let placement = changes.subscription {
            let group = try await resolveGroup(placement, app: app, in: tx)
            product.subscription = SubscriptionMembership(groupId: group.id, level: placement.level)
        }
        try CatalogRules.validateProduct(product)
    }

    static func resolveGroup(
        _ placement: SubscriptionPlacement, app: App, in tx: any StorageTransaction
    ) async throws -> SubscriptionGroup {
        let groups = try await tx.groups(appId: app.id)
        let found: SubscriptionGroup?
        switch (placement.groupId, placement.group) {
        case (let id?, _): found = groups.first { $0.id == id }
        case (nil, let name?): found = groups.first { $0.referenceName == name }
        case (nil, nil):
            throw KioskError(
                .missingField, "A subscription placement needs 'groupId' or 'group' (the group's reference name).",
                field: "subscription.groupId", fix: "Add 'groupId' or 'group'.")
        }
        guard let found else {
            let label = placement.groupId.map(String.init) ?? placement.group ?? ""
            throw KioskError(
                .groupNotFound, "App '\(app.bundleId)' has no subscription group '\(label)'.",
                field: "subscription.group",
                fix: "Create it first with `kiosk groups create --app \(app.bundleId) --name …`; existing groups: "
                    + (groups.isEmpty
                        ? "none" : groups.map { "\($0.referenceName) (\($0.id))" }.joined(separator: ", ")))
        }
        return found
    }

    static func requireLiveProduct(_ productId: String, app: App, in tx: any StorageTransaction) async throws -> Product
    {
        guard let product = try await tx.product(appId: app.id, productId: productId) else {
            throw productNotFound(productId, bundleId: app.bundleId)
        }
        if let deletedAt = product.deletedAt {
            throw KioskError(
                .productDeleted, "Product '\(productId)' was deleted on \(deletedAt.formatted(.iso8601)).",
                field: "productId",
                fix: "Deleted products cannot be changed or restored; create a product with a new id.")
        }
        return product
    }

    static func productNotFound(_ productId: String, bundleId: String) -> KioskError {
        KioskError(
            .productNotFound, "App '\(bundleId)' has no product '\(productId)'.", field: "productId",
            fix: "List the app's products with `kiosk products list --app \(bundleId)`.")
    }

    static func reusedProductId(_ existing: Product, bundleId: String) -> KioskError {
        if let deletedAt = existing.deletedAt {
            return KioskError(
                .productIdDeleted,
                "Product id '\(existing.productId)' belonged to a product deleted on \(deletedAt.formatted(.iso8601)); "
                    + "a product id can never be used again, even after deletion.",
                field: "productId", fix: "Choose a new product id, e.g. '\(existing.productId).v2'.")
        }
        return KioskError(
            .duplicateProductId, "App '\(bundleId)' already has a product '\(existing.productId)'.",
            field: "productId", fix: "Update it instead, or choose another product id.")
    }
}

extension ReviewAction {
    var event: ReviewEvent {
        switch self {
        case .submit: .submit
        case .approve: .approve
        case .reject: .reject
        case .removeFromSale: .removeFromSale
        case .restoreToSale: .restoreToSale
        }
    }
}

extension CatalogService {
    /// App Store Connect's limit: 10,000 in-app purchases per app, subscriptions included (removed ones count too:
    /// their ids stay taken).
    public static let maxProductsPerApp = 10_000

    /// Throws `too_many_products` unless `adding` more products fit beside the app's `existing` ones.
    static func requireRoom(for adding: Int, besides existing: Int, bundleId: String) throws {
        guard adding > 0, existing + adding > maxProductsPerApp else { return }
        throw KioskError(
            .tooManyProducts,
            "\(bundleId) has \(existing) products; \(adding) more would pass App Store Connect's limit of "
                + "\(maxProductsPerApp) in-app purchases per app. Nothing was created.",
            field: "products",
            fix: "Remove products from the file, or use another app: deleted products count too, as their ids stay "
                + "taken.")
    }
}
