import Foundation
import KioskCore
import KioskStorage

/// What an import did, by id: `group:<reference name>` and `product:<product id>`.
package struct CatalogImportSummary: Codable, Sendable {
    package var created: [String] = []
    package var updated: [String] = []
    package var unchanged: [String] = []
    /// Parts of the file Kiosk read but does not import (e.g. a `.storekit` file's offer codes).
    package var warnings: [String] = []
}

extension CatalogService {
    /// The app's whole catalog as a Kiosk catalog document (deleted products left out).
    public func exportCatalog(bundleId: String) async throws -> CatalogDocument {
        try await database.transaction { tx in
            let app = try await Self.requireApp(bundleId, in: tx)
            return CatalogDocument(
                app: app, groups: try await tx.groups(appId: app.id), products: try await tx.products(appId: app.id))
        }
    }

    /// Creates or updates every group and product the document names, in one transaction: either all of it lands
    /// or none. Importing the same document again changes nothing. Products the document does not name stay.
    package func importCatalog(bundleId: String, document: CatalogDocument) async throws -> CatalogImportSummary {
        let now = clock.now()
        return try await database.transaction { tx in
            let app = try await Self.requireApp(bundleId, in: tx)
            var summary = CatalogImportSummary()
            var groups = try await tx.groups(appId: app.id)
            for (index, entry) in document.subscriptionGroups.enumerated() {
                let label = "group:\(entry.referenceName)"
                if let existing = groups.first(where: { $0.referenceName == entry.referenceName }) {
                    let wanted = entry.applied(to: existing, now: existing.updatedAt)
                    if wanted == existing {
                        summary.unchanged.append(label)
                        continue
                    }
                    let updated = entry.applied(to: existing, now: now)
                    try Self.validate(at: "subscriptionGroups[\(index)]") { try CatalogRules.validateGroup(updated) }
                    try await tx.updateGroup(updated)
                    groups = groups.map { $0.id == updated.id ? updated : $0 }
                    summary.updated.append(label)
                } else {
                    let group = entry.group(
                        id: try await tx.nextIdentifier(.subscriptionGroupId), appId: app.id, now: now)
                    try Self.validate(at: "subscriptionGroups[\(index)]") { try CatalogRules.validateGroup(group) }
                    try await tx.insertGroup(group)
                    groups.append(group)
                    summary.created.append(label)
                }
            }
            let groupId = { (name: String) in groups.first { $0.referenceName == name }?.id }
            let groupName = { (id: SubscriptionGroup.ID) in groups.first { $0.id == id }?.referenceName }
            for (index, entry) in document.products.enumerated() {
                let path = "products[\(index)]"
                let label = "product:\(entry.productId)"
                if let existing = try await tx.product(appId: app.id, productId: entry.productId) {
                    guard existing.deletedAt == nil else {
                        var error = Self.reusedProductId(existing, bundleId: bundleId)
                        error.field = "\(path).productId"
                        throw error
                    }
                    if entry.matches(CatalogDocument.ProductEntry(existing, groupName: groupName)) {
                        summary.unchanged.append(label)
                        continue
                    }
                    guard entry.type == existing.type else {
                        throw KioskError.invalid(
                            "type_immutable",
                            "Product '\(entry.productId)' is \(existing.type.rawValue); a product's type cannot change.",
                            field: "\(path).type", fix: "Keep the type, or give the product a new id.")
                    }
                    var product = try entry.applied(to: existing, groupId: groupId, now: now)
                    try Self.validate(at: path) {
                        try CatalogRules.validateProduct(product)
                        if entry.reviewState == nil {
                            product.reviewState = try CatalogRules.reviewState(of: product, after: .metadataChanged)
                        }
                    }
                    try await tx.updateProduct(product)
                    summary.updated.append(label)
                } else {
                    var product = try entry.product(
                        appId: app.id, groupId: groupId, defaultReviewState: .missingMetadata, now: now)
                    try Self.validate(at: path) {
                        try CatalogRules.validateProduct(product)
                        if entry.reviewState == nil {
                            product.reviewState = try CatalogRules.reviewState(of: product, after: .metadataChanged)
                        }
                    }
                    try await tx.insertProduct(product)
                    summary.created.append(label)
                }
            }
            return summary
        }
    }

    /// Runs `check`, prefixing the field of any `KioskError` with the document path it concerns.
    private static func validate(at path: String, _ check: () throws -> Void) throws {
        do {
            try check()
        } catch var error as KioskError {
            error.field = error.field.map { "\(path).\($0)" } ?? path
            throw error
        }
    }
}
