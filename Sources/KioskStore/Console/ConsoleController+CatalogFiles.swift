import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskProtocol
import NIOCore

/// An app's catalog as a file: export as Kiosk JSON or an Xcode `.storekit` file, and import one (pasted, or read
/// from disk by the browser), with the import report and its warnings; and its subscription groups, their
/// subscriptions and offer codes, listed and created.
extension ConsoleController {
    func addCatalogFileRoutes(to pages: RouterGroup<KioskRequestContext>) {
        pages.get("apps/:bundleId/catalog") { _, context in
            try await catalogPage(try context.parameters.require("bundleId"), report: nil, context)
        }
        pages.get("apps/:bundleId/catalog.json") { _, context in
            let bundleId = try context.parameters.require("bundleId")
            return Self.download(
                try await catalog.exportCatalog(bundleId: bundleId).encode(), filename: "\(bundleId).catalog.json")
        }
        pages.get("apps/:bundleId/catalog.storekit") { _, context in
            let bundleId = try context.parameters.require("bundleId")
            return Self.download(
                try await catalog.exportStoreKit(bundleId: bundleId, storefront: nil).encode(),
                filename: "\(bundleId).storekit")
        }
        pages.post("apps/:bundleId/subscription-groups") { request, context in
            let bundleId = try context.parameters.require("bundleId")
            return try await action(request, context, audit: "group.create") { form in
                let group = try await catalog.createGroup(
                    bundleId: bundleId, referenceName: form["referenceName"] ?? "",
                    localizations: form["name"].map {
                        [SubscriptionGroupLocalization(locale: form["locale"] ?? "en_US", name: $0)]
                    }
                        ?? [])
                return ConsoleOutcome(
                    target: "\(bundleId) \(group.referenceName)", redirect: "/console/apps/\(bundleId)/catalog",
                    notice: "Created the subscription group \(group.referenceName) (id \(group.id)). Next: add its "
                        + "subscriptions below.")
            }
        }
        pages.post("apps/:bundleId/subscriptions") { request, context in
            let bundleId = try context.parameters.require("bundleId")
            return try await action(request, context, audit: "product.create") { form in
                guard let groupId = Int64(form["groupId"] ?? ""), let level = Int(form["level"] ?? "1"),
                    let tier = Int(form["tier"] ?? "1")
                else {
                    throw KioskError(
                        .invalidSubscription, "Choose a group, and give the level and tier as whole numbers.",
                        field: "groupId")
                }
                var changes = ProductChanges(
                    pricing: Pricing(tier: tier), subscription: SubscriptionPlacement(groupId: groupId, level: level),
                    duration: SubscriptionDuration(rawValue: form["duration"] ?? ""))
                if let displayName = form["displayName"] {
                    changes.localizations = [
                        ProductLocalization(
                            locale: form["locale"] ?? "en_US", displayName: displayName,
                            description: form["description"] ?? "")
                    ]
                }
                let product = try await catalog.createProduct(
                    bundleId: bundleId, productId: form["productId"] ?? "", type: .autoRenewable,
                    referenceName: form["referenceName"] ?? "", changes: changes)
                return ConsoleOutcome(
                    target: "\(bundleId)/\(product.productId)", redirect: Self.productPath(bundleId, product.productId),
                    notice: "Created the subscription \(product.productId); review state "
                        + "\(product.reviewState.displayName).")
            }
        }
        pages.post("apps/:bundleId/offer-codes") { request, context in
            let bundleId = try context.parameters.require("bundleId")
            return try await action(request, context, audit: "offer-codes.create") { form in
                let codes = try await catalog.createOfferCodes(
                    bundleId: bundleId, productId: form["productId"] ?? "",
                    referenceName: form["referenceName"] ?? "Console codes", paymentMode: form["paymentMode"] ?? "",
                    period: form["period"] ?? "",
                    numberOfPeriods: try ConsoleForm.integer(form["numberOfPeriods"], field: "numberOfPeriods") ?? 1,
                    pricing: Pricing(tier: try ConsoleForm.integer(form["tier"], field: "tier")),
                    count: try ConsoleForm.integer(form["count"], field: "count") ?? 1)
                return ConsoleOutcome(
                    target: "\(codes.count) codes for \(bundleId)/\(form["productId"] ?? "")",
                    redirect: "/console/apps/\(bundleId)/catalog",
                    notice: "Made \(codes.count) one-time offer \(codes.count == 1 ? "code" : "codes") for "
                        + "\(form["productId"] ?? ""); they are listed under Offer codes.")
            }
        }
        // One limit for a catalog file wherever it comes in: the admin API's, plus room for the form around it.
        let imports = pages.add(middleware: BodyLimitMiddleware(StoreBodyLimits.catalogImport + 65_536))
        imports.post("apps/:bundleId/catalog") { request, context in
            let bundleId = try context.parameters.require("bundleId")
            let form = try await ConsoleForm.read(request, context: context)
            let app = try await catalog.app(bundleId: bundleId)
            // The chosen file wins; without one (or without a browser that uploads), the pasted text.
            let chosen = form.fields["upload"].flatMap { $0.isEmpty ? nil : $0 }
            let data = Data((chosen ?? form.fields["file"] ?? "").utf8)
            guard !data.isEmpty else {
                throw KioskError(.missingFile, "Choose or paste a catalog file first.", field: "file")
            }
            guard data.count <= StoreBodyLimits.catalogImport else {
                throw KioskError.bodyTooLarge(limit: StoreBodyLimits.catalogImport)
            }
            let summary = try await catalog.importCatalog(
                bundleId: bundleId, file: try CatalogController.file(data, format: nil, of: app))
            try await audit(
                context.consoleSession, "catalog.import",
                "\(bundleId): \(summary.created.count) created, \(summary.updated.count) updated")
            return try await catalogPage(bundleId, report: summary, context)
        }
    }

    static func download(_ data: Data, filename: String) -> Response {
        var response = Response(status: .ok, body: .init(byteBuffer: ByteBuffer(bytes: data)))
        response.headers[.contentType] = "application/json"
        response.headers[.contentDisposition] = "attachment; filename=\"\(filename)\""
        return response
    }

    func catalogPage(_ bundleId: String, report: CatalogImportSummary?, _ context: KioskRequestContext) async throws
        -> Response
    {
        let app = try await catalog.app(bundleId: bundleId)
        let groups = try await catalog.groups(bundleId: bundleId)
        let products = try await catalog.products(bundleId: bundleId)
        let codes = try await catalog.offerCodes(bundleId: bundleId, productId: nil)
        let subscriptions = products.filter { $0.type == .autoRenewable }
        return renderer.page(
            CatalogPage(
                name: app.name, bundleId: bundleId,
                groupChoices: groups.map { CatalogPage.GroupChoice(id: String($0.id), name: $0.referenceName) },
                durations: SubscriptionDuration.allCases.map { ConsoleOption(value: $0.rawValue) },
                modes: OfferPaymentMode.allCases.map { ConsoleOption(value: $0.rawValue) },
                subscriptionProducts: subscriptions.map { CatalogPage.ProductChoice(productId: $0.productId) },
                hasGroups: !groups.isEmpty, hasSubscriptions: !subscriptions.isEmpty,
                groups: groups.map { group in
                    CatalogPage.Group(
                        name: group.referenceName, id: String(group.id),
                        localizations: group.localizations.map {
                            CatalogPage.GroupLocalization(
                                locale: $0.locale, lang: $0.locale.replacingOccurrences(of: "_", with: "-"),
                                localizedName: $0.name, customAppName: $0.customAppName?.nonEmpty)
                        },
                        levels: products.filter { $0.subscription?.groupId == group.id }
                            .sorted { ($0.subscription?.level ?? 0) < ($1.subscription?.level ?? 0) }
                            .map { product in
                                CatalogPage.Level(
                                    productId: product.productId, level: product.subscription?.level ?? 0,
                                    duration: product.duration?.rawValue,
                                    offers: (product.introductoryOffers.map {
                                        "introductory \($0.paymentMode.rawValue)"
                                    }
                                        + product.promotionalOffers.map { "promotional \($0.identifier)" }
                                        + product.winBackOffers.map { "win-back \($0.identifier)" })
                                        .joined(separator: ", "))
                            })
                },
                codes: codes.map { code in
                    CatalogPage.Code(
                        code: code.code, productId: code.productId,
                        state: code.redemption == nil ? "available" : "redeemed")
                },
                report: report.map { report in
                    CatalogPage.Report(
                        created: report.created.joined(separator: ", ").nonEmpty,
                        updated: report.updated.joined(separator: ", ").nonEmpty,
                        unchanged: report.unchanged.joined(separator: ", ").nonEmpty,
                        warnings: report.warnings.map {
                            CatalogPage.Warning(code: $0.code, message: $0.message, path: $0.path?.nonEmpty)
                        })
                }),
            title: "\(app.name): catalog", section: "Apps", session: context.consoleSession)
    }
}

/// An app's catalog: its subscription groups (names, levels, offers), offer codes, the forms that create them, the
/// export links, and the import form with the last import's report.
struct CatalogPage: ConsoleView {
    static let template = "catalog"

    struct GroupChoice: Decodable {
        var id: String
        var name: String
    }

    struct ProductChoice: Decodable {
        var productId: String
    }

    struct Group: Decodable {
        var name: String
        var id: String
        var localizations: [GroupLocalization]
        /// The group's subscriptions, highest service first.
        var levels: [Level]
    }

    struct GroupLocalization: Decodable {
        var locale: String
        /// The locale as a BCP 47 language tag, for `lang`.
        var lang: String
        var localizedName: String
        var customAppName: String?
    }

    struct Level: Decodable {
        var productId: String
        var level: Int
        var duration: String?
        /// The subscription's offers, in a line.
        var offers: String
    }

    struct Code: Decodable {
        var code: String
        var productId: String
        var state: String
    }

    /// What an import created, updated and left as it was (each product id list in a line), and its warnings.
    struct Report: Decodable {
        var created: String?
        var updated: String?
        var unchanged: String?
        var warnings: [Warning]
    }

    struct Warning: Decodable {
        var code: String
        var message: String
        /// Where in the file.
        var path: String?
    }

    /// The app's name.
    var name: String
    var bundleId: String
    var groupChoices: [GroupChoice]
    var durations: [ConsoleOption]
    var modes: [ConsoleOption]
    var subscriptionProducts: [ProductChoice]
    var hasGroups: Bool
    var hasSubscriptions: Bool
    var groups: [Group]
    var codes: [Code]
    /// The import's report, on the page an import answers with.
    var report: Report?
}
