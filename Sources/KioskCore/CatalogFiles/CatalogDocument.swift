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
    public static let errorCode = ErrorCode.invalidCatalogFile

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

    /// Reads a catalog file. Each product and group is read on its own, so a file reports a problem of every
    /// broken entry at once (the first of each entry), with the other problems of the file.
    ///
    /// - Parameter data: The file's bytes.
    /// - Returns: The document, with its entries in the file's order.
    /// - Throws: `KioskError` `invalid_catalog_file` whose `field` is the JSON path of the problem (for example
    ///   `products[2].localizations[0].locale`), with every other problem in `additional`; for broken JSON, one
    ///   error naming `line L, column C`.
    public static func decode(from data: Data) throws(KioskError) -> CatalogDocument {
        let fix = "Correct the catalog file (see the format in `kiosk catalog export`) and import it again."
        var errors: [KioskError] = []
        var entries = EntryLists()
        var skeleton = data
        if case .object(var members) = try CatalogFileLog.parse(data, errorCode: errorCode, fileKind: "catalog file") {
            if case .array(let groups)? = members["subscriptionGroups"] {
                entries.groups = decodeEach(GroupEntry.self, groups, list: "subscriptionGroups", fix: fix, &errors)
                members["subscriptionGroups"] = .array([])
            }
            if case .array(let products)? = members["products"] {
                entries.products = decodeEach(ProductEntry.self, products, list: "products", fix: fix, &errors)
                members["products"] = .array([])
            }
            skeleton = CatalogFileCoding.encode(JSONValue.object(members))
        }
        var document: CatalogDocument
        do {
            document = try CatalogFileCoding.decode(
                CatalogDocument.self, from: skeleton, code: errorCode, fileKind: "catalog file", fix: fix)
        } catch {
            throw KioskError.combined([error] + errors) ?? error
        }
        if let combined = KioskError.combined(errors) { throw combined }
        document.subscriptionGroups = entries.groups
        document.products = entries.products
        try document.validateReferences()
        return document
    }

    /// The entries read one by one.
    private struct EntryLists {
        var groups: [GroupEntry] = []
        var products: [ProductEntry] = []
    }

    /// Decodes each element of `list` on its own; an element that fails adds its first problem to `errors`, at its
    /// path in the file and with its product id.
    private static func decodeEach<Entry: Decodable>(
        _ type: Entry.Type, _ elements: [JSONValue], list: String, fix: String, _ errors: inout [KioskError]
    ) -> [Entry] {
        var decoded: [Entry] = []
        for (index, element) in elements.enumerated() {
            do {
                let data = CatalogFileCoding.encode(element)
                decoded.append(
                    try CatalogFileCoding.decode(
                        Entry.self, from: data, code: errorCode, fileKind: "catalog file", fix: fix))
            } catch {
                var error = error
                let inner = error.field.map { $0.hasPrefix("[") || $0.isEmpty ? $0 : ".\($0)" } ?? ""
                error.field = "\(list)[\(index)]\(inner)"
                if case .object(let members) = element, case .string(let id)? = members["productId"] {
                    error.productId = id
                }
                errors.append(error)
            }
        }
        return decoded
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
                KioskError(
                    Self.errorCode, "Subscription group '\(group.referenceName)' appears more than once.",
                    field: "subscriptionGroups[\(index)].referenceName",
                    fix: "Give each group a distinct reference name."))
        }
        var productIds = Set<String>()
        for (index, product) in products.enumerated() {
            var error: KioskError?
            if !productIds.insert(product.productId).inserted {
                error = KioskError(
                    Self.errorCode, "Product '\(product.productId)' appears more than once.",
                    field: "products[\(index)].productId", fix: "Keep one entry per product id.")
            } else if let membership = product.subscription, !groupNames.contains(membership.group) {
                error = KioskError(
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
