import Foundation
import KioskCore
import KioskProtocol
import KioskStorage

extension CatalogService {
    /// The app's catalog as an Xcode `.storekit` file with prices in `storefront` (see
    /// `StoreKitConfiguration.init(document:storefront:)`), carrying back what the last imported `.storekit` file
    /// held that the catalog does not model.
    public func exportStoreKit(bundleId: String, storefront: Storefront?) async throws -> StoreKitConfiguration {
        let (document, kept) = try await database.transaction { tx in
            let app = try await Self.requireApp(bundleId, in: tx)
            let document = CatalogDocument(
                app: app, groups: try await tx.groups(appId: app.id), products: try await tx.products(appId: app.id))
            return (document, try await tx.setting(Self.storeKitFileKey(app)))
        }
        let export = try StoreKitConfiguration(document: document, storefront: storefront)
        guard let kept, let original = try? StoreKitConfiguration.read(from: Data(kept.utf8)).configuration else {
            return export
        }
        return export.keeping(from: original)
    }

    /// Where the store keeps what the catalog does not model of an app's last imported `.storekit` file.
    private static func storeKitFileKey(_ app: App) -> String { "storekit-file:\(app.id)" }

    /// The app's whole catalog as a Kiosk catalog document (deleted products left out).
    public func exportCatalog(bundleId: String) async throws -> CatalogDocument {
        try await database.transaction { tx in
            let app = try await Self.requireApp(bundleId, in: tx)
            return CatalogDocument(
                app: app, groups: try await tx.groups(appId: app.id), products: try await tx.products(appId: app.id))
        }
    }

    /// Creates or updates every group and product the file names, in one transaction: either all of it lands or
    /// none. Importing the same file again changes nothing. Products the file does not name stay.
    ///
    /// Every problem is reported at once, at its path in the user's file; what only App Store review would refuse
    /// (``CatalogValidator/reviewRuleCodes``) imports with a warning instead.
    ///
    /// A file naming more products than an app may hold is refused before the database is touched, so a huge file
    /// cannot hold the store's writer.
    package func importCatalog(bundleId: String, file: CatalogFileImport) async throws -> CatalogImportSummary {
        let named = Set(file.document.products.map(\.productId))
        if named.count > Self.maxProductsPerApp {
            throw KioskError(
                .tooManyProducts,
                "The file names \(named.count) products; an app holds at most \(Self.maxProductsPerApp) in-app "
                    + "purchases (App Store Connect's limit). Nothing was imported.",
                field: "products", fix: "Split the catalog across apps, or remove products from the file.")
        }
        let now = clock.now()
        return try await database.transaction { tx in
            let app = try await Self.requireApp(bundleId, in: tx)
            // Every product of the app in one read: a read per entry cost 10,000 queries for a full catalog.
            let stored = Dictionary(
                try await tx.products(appId: app.id).map { ($0.productId, $0) }, uniquingKeysWith: { first, _ in first }
            )
            try Self.requireRoom(
                for: named.subtracting(stored.keys).count, besides: stored.count, bundleId: bundleId)
            var run = ImportRun(file: file)
            var groups = try await tx.groups(appId: app.id)
            for (index, entry) in file.document.subscriptionGroups.enumerated() {
                let label = "group:\(entry.referenceName)"
                let fallback = "subscriptionGroups[\(index)]"
                let existing = groups.first { $0.referenceName == entry.referenceName }
                if let existing, entry.applied(to: existing, now: existing.updatedAt) == existing {
                    run.summary.unchanged.append(label)
                    continue
                }
                let group =
                    if let existing {
                        entry.applied(to: existing, now: now)
                    } else {
                        entry.group(id: try await tx.nextIdentifier(.subscriptionGroupId), appId: app.id, now: now)
                    }
                let problems = CatalogRules.groupProblems(group)
                let reviewCodes = group.hasControlCharacters ? [] : CatalogRules.groupReviewCodes
                guard run.check(problems, of: label, fallback: fallback, reviewCodes: reviewCodes)
                else { continue }
                if existing != nil {
                    try await tx.updateGroup(group)
                    groups = groups.map { $0.id == group.id ? group : $0 }
                    run.summary.updated.append(label)
                } else {
                    try await tx.insertGroup(group)
                    groups.append(group)
                    run.summary.created.append(label)
                }
            }
            let groupId = { (name: String) in groups.first { $0.referenceName == name }?.id }
            let groupName = { (id: SubscriptionGroup.ID) in groups.first { $0.id == id }?.referenceName }
            for (index, entry) in file.document.products.enumerated() {
                let label = "product:\(entry.productId)"
                let fallback = "products[\(index)]"
                let existing = stored[entry.productId]
                if let existing {
                    guard existing.deletedAt == nil else {
                        run.fail(
                            Self.reusedProductId(existing, bundleId: bundleId), of: label, field: "productId", fallback)
                        continue
                    }
                    if entry.matches(CatalogDocument.ProductEntry(existing, groupName: groupName)) {
                        run.summary.unchanged.append(label)
                        continue
                    }
                    do {
                        try CatalogRules.requireSameType(entry.type, as: existing)
                    } catch let error as KioskError {
                        run.fail(error, of: label, field: "type", fallback)
                        continue
                    }
                }
                var product: Product
                do {
                    product =
                        if let existing {
                            try entry.applied(to: existing, groupId: groupId, now: now)
                        } else {
                            try entry.product(
                                appId: app.id, groupId: groupId, defaultReviewState: .missingMetadata, now: now)
                        }
                } catch let error as KioskError {
                    run.fail(error, of: label, field: error.field, fallback)
                    continue
                }
                let problems = CatalogValidator.validate(product: product, field: "product").map { error in
                    var error = error
                    if let field = error.field, field.hasPrefix("product.") { error.field = String(field.dropFirst(8)) }
                    return error
                }
                // A control character is hostile input, never a matter for review: every rule then refuses.
                let reviewCodes = product.hasControlCharacters ? [] : CatalogValidator.reviewRuleCodes
                guard run.check(problems, of: label, fallback: fallback, reviewCodes: reviewCodes)
                else { continue }
                if entry.reviewState == nil {
                    do {
                        product.reviewState = try CatalogRules.reviewState(of: product, after: .metadataChanged)
                    } catch let error as KioskError {
                        run.fail(error, of: label, field: "reviewState", fallback)
                        continue
                    }
                }
                if existing != nil {
                    try await tx.updateProduct(product)
                    run.summary.updated.append(label)
                } else {
                    try await tx.insertProduct(product)
                    run.summary.created.append(label)
                }
            }
            if let combined = KioskError.combined(run.errors) { throw combined }
            if let original = file.storeKitFile {
                try await tx.setSetting(
                    Self.storeKitFileKey(app), to: String(decoding: original.unmodeledParts.encode(), as: UTF8.self))
            }
            run.summary.warnings = file.warnings + run.warnings
            return run.summary
        }
    }

    /// One import's progress: what it did, and every problem and warning, at its path in the user's file.
    private struct ImportRun {
        let file: CatalogFileImport
        var summary = CatalogImportSummary()
        var errors: [KioskError] = []
        var warnings: [CatalogFileWarning] = []

        /// Records `problems` of the entry `label`: review-only ones (`reviewCodes`) as warnings, the rest as errors.
        /// True when nothing stops the entry from being written.
        mutating func check(
            _ problems: [KioskError], of label: String, fallback: String, reviewCodes: Set<ErrorCode>
        ) -> Bool {
            var writable = true
            for problem in problems {
                if reviewCodes.contains(problem.code) {
                    warnings.append(
                        CatalogFileWarning(
                            code: problem.code.rawValue,
                            message: "App Store review would refuse this: \(problem.message) It imports and sells in "
                                + "the sandbox, not in production.",
                            path: file.path(of: label, field: problem.field, fallback: fallback),
                            productId: Self.productId(of: label), fix: problem.fix))
                } else {
                    fail(problem, of: label, field: problem.field, fallback)
                    writable = false
                }
            }
            return writable
        }

        mutating func fail(_ error: KioskError, of label: String, field: String?, _ fallback: String) {
            var error = error
            error.field = file.path(of: label, field: field, fallback: fallback)
            error.productId = error.productId ?? Self.productId(of: label)
            errors.append(error)
        }

        private static func productId(of label: String) -> String? {
            label.hasPrefix("product:") ? String(label.dropFirst(8)) : nil
        }
    }
}
