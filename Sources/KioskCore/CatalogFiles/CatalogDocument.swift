import Foundation

/// Kiosk's own JSON catalog file: one app's subscription groups and products, for bulk export and import.
///
/// The file is versioned (`"format": "kiosk-catalog"`, `"version": 1`) and refers to subscription groups by
/// reference name, because numeric ids differ between stores. Encoding is pretty-printed with sorted keys and
/// normalized order, so exporting the same catalog twice gives identical bytes. Decoding is strict: unknown keys,
/// unknown enum values, wrong types and missing keys are errors that name their JSON path.
///
/// ```swift
/// let document = CatalogDocument(app: app, groups: groups, products: products)
/// let data = document.encode()
/// let again = try CatalogDocument.decode(from: data)  // again == document
/// ```
public struct CatalogDocument: Codable, Sendable, Equatable {
    /// The value of the `format` key.
    public static let format = "kiosk-catalog"
    /// The only version this build reads and writes.
    public static let currentVersion = 1
    /// The `code` of every error about a malformed catalog file.
    public static let errorCode = "invalid_catalog_file"

    /// The app the catalog belongs to.
    public var app: AppEntry
    /// Subscription groups, ordered by reference name.
    public var subscriptionGroups: [GroupEntry]
    /// Products, ordered by product id.
    public var products: [ProductEntry]

    /// A document with these entries, put in the file's deterministic order.
    public init(app: AppEntry, subscriptionGroups: [GroupEntry], products: [ProductEntry]) {
        self.app = app
        self.subscriptionGroups = subscriptionGroups.sorted { $0.referenceName < $1.referenceName }
        self.products = products.sorted { $0.productId < $1.productId }
    }

    /// Exports an app's catalog: every group, every product not deleted, groups named by reference name.
    ///
    /// - Parameters:
    ///   - app: The app.
    ///   - groups: The app's subscription groups.
    ///   - products: The app's products, deleted ones included (they are skipped).
    public init(app: App, groups: [SubscriptionGroup], products: [Product]) {
        let names = Dictionary(groups.map { ($0.id, $0.referenceName) }, uniquingKeysWith: { first, _ in first })
        self.init(
            app: AppEntry(bundleId: app.bundleId, name: app.name),
            subscriptionGroups: groups.map(GroupEntry.init),
            products: products.filter { $0.deletedAt == nil }.map { ProductEntry($0, groupName: { names[$0] }) })
    }

    /// The group entry with this reference name, if the document has one.
    public func group(named referenceName: String) -> GroupEntry? {
        subscriptionGroups.first { $0.referenceName == referenceName }
    }

    /// The file's bytes: pretty-printed JSON with sorted keys; the same document always gives the same bytes.
    public func encode() -> Data {
        CatalogFileCoding.encode(self)
    }

    /// Reads a catalog file.
    ///
    /// - Parameter data: The file's bytes.
    /// - Returns: The document, with its entries in the deterministic order.
    /// - Throws: `KioskError` `invalid_catalog_file` whose `field` is the JSON path of the problem (for example
    ///   `products[2].localizations[0].locale`) or, for broken JSON, `line L, column C`.
    public static func decode(from data: Data) throws(KioskError) -> CatalogDocument {
        let document = try CatalogFileCoding.decode(
            CatalogDocument.self, from: data, code: errorCode, fileKind: "catalog file",
            fix: "Correct the catalog file (see the format in `kiosk catalog export`) and import it again.")
        try document.validateReferences()
        return document
    }

    /// Reads a catalog file for import: entries keep the file's order, so `sourcePaths` name them as the file has
    /// them.
    ///
    /// - Throws: As ``decode(from:)``.
    public static func importing(_ data: Data) throws(KioskError) -> CatalogFileImport {
        let document = try decode(from: data)
        var paths: [String: String] = [:]
        for (index, group) in document.subscriptionGroups.enumerated() {
            paths["group:\(group.referenceName)"] = "subscriptionGroups[\(index)]"
        }
        for (index, product) in document.products.enumerated() {
            paths["product:\(product.productId)"] = "products[\(index)]"
        }
        return CatalogFileImport(document: document, warnings: [], sourcePaths: paths)
    }

    /// Checks what a single entry cannot, reporting every problem at once: ids and names are unique and every
    /// subscription names a group in the file.
    private func validateReferences() throws(KioskError) {
        var errors: [KioskError] = []
        var groupNames = Set<String>()
        for (index, group) in subscriptionGroups.enumerated() where !groupNames.insert(group.referenceName).inserted {
            errors.append(
                KioskError.invalid(
                    Self.errorCode, "Subscription group '\(group.referenceName)' appears more than once.",
                    field: "subscriptionGroups[\(index)].referenceName",
                    fix: "Give each group a distinct reference name."))
        }
        var productIds = Set<String>()
        for (index, product) in products.enumerated() {
            var error: KioskError?
            if !productIds.insert(product.productId).inserted {
                error = KioskError.invalid(
                    Self.errorCode, "Product '\(product.productId)' appears more than once.",
                    field: "products[\(index)].productId", fix: "Keep one entry per product id.")
            } else if let membership = product.subscription, !groupNames.contains(membership.group) {
                error = KioskError.invalid(
                    Self.errorCode,
                    "Product '\(product.productId)' names subscription group '\(membership.group)', "
                        + "which is not in the file.",
                    field: "products[\(index)].subscription.group",
                    fix: "Add the group to `subscriptionGroups` or correct its name.")
            }
            if var error {
                error.productId = product.productId
                errors.append(error)
            }
        }
        if let combined = KioskError.combined(errors) { throw combined }
    }
}
