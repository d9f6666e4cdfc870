import Foundation
import Hummingbird
import KioskCore
import KioskProtocol

/// Apps and products: lists, detail pages with availability (reasons and fixes), prices and proceeds, and the
/// create, review and secret actions.
extension ConsoleController {
    func addCatalogRoutes(to pages: RouterGroup<KioskRequestContext>) {
        pages.get("apps") { _, context in try await appsPage(context) }
        pages.post("apps") { request, context in
            try await action(request, context, audit: "app.create") { form in
                let app = try await catalog.createApp(bundleId: form["bundleId"] ?? "", name: form["name"] ?? "")
                return ConsoleOutcome(
                    target: app.bundleId, redirect: "/console/apps/\(app.bundleId)",
                    notice: "Created the app \(app.name) (\(app.bundleId)). Next: add its products below.")
            }
        }
        pages.get("apps/:bundleId") { request, context in
            try await appPage(
                try context.parameters.require("bundleId"), context, page: ConsolePager.page(of: request))
        }
        pages.post("apps/:bundleId/shared-secret") { request, context in
            let bundleId = try context.parameters.require("bundleId")
            return try await action(request, context, audit: "app.regenerate-shared-secret") { _ in
                _ = try await catalog.regenerateSharedSecret(bundleId: bundleId)
                return ConsoleOutcome(
                    target: bundleId, redirect: "/console/apps/\(bundleId)",
                    notice: "Made a new shared secret for \(bundleId); the old one no longer verifies receipts.")
            }
        }
        pages.post("apps/:bundleId/notification-urls") { request, context in
            let bundleId = try context.parameters.require("bundleId")
            return try await action(request, context, audit: "app.notification-urls") { form in
                // One URL per line; an empty box clears the environment's list.
                func urls(_ name: String) -> [String] {
                    (form[name] ?? "").split(whereSeparator: \.isNewline).map {
                        $0.trimmingCharacters(in: .whitespaces)
                    }.filter { !$0.isEmpty }
                }
                let app = try await catalog.updateApp(
                    bundleId: bundleId, name: nil, productionNotificationURLs: urls("productionURLs"),
                    sandboxNotificationURLs: urls("sandboxURLs"))
                func count(_ urls: [String]) -> String { urls.isEmpty ? "none" : "\(urls.count)" }
                return ConsoleOutcome(
                    target: bundleId, redirect: "/console/apps/\(bundleId)",
                    notice:
                        "Saved the notification URLs of \(bundleId): production \(count(app.productionNotificationURLs)), "
                        + "sandbox \(count(app.sandboxNotificationURLs)).")
            }
        }
        pages.post("apps/:bundleId/products") { request, context in
            try await createProduct(try context.parameters.require("bundleId"), request, context)
        }
        pages.get("apps/:bundleId/products/:productId") { request, context in
            try await productPage(
                try context.parameters.require("bundleId"), try context.parameters.require("productId"),
                storefront: request.uri.queryParameters.get("storefront") ?? "USA", context)
        }
        pages.post("apps/:bundleId/products/:productId") { request, context in
            let bundleId = try context.parameters.require("bundleId")
            let productId = try context.parameters.require("productId")
            return try await action(request, context, audit: "product.update") { form in
                var changes = ProductChanges(
                    referenceName: form["referenceName"], clearedForSale: form["clearedForSale"] == "on")
                if let tierText = form["tier"] {
                    guard let tier = Int(tierText) else {
                        throw KioskError(.invalidTier, "A price tier is a whole number from 1 to 20.", field: "tier")
                    }
                    // A new tier keeps the custom prices, which win over it in their storefronts.
                    let current = try await catalog.product(bundleId: bundleId, productId: productId).pricing
                    if tier != current.tier {
                        changes.pricing = Pricing(tier: tier, customPrices: current.customPrices)
                    }
                }
                let product = try await catalog.updateProduct(
                    bundleId: bundleId, productId: productId, changes: changes)
                return ConsoleOutcome(
                    target: "\(bundleId)/\(productId)", redirect: Self.productPath(bundleId, productId),
                    notice: "Saved \(productId): \(product.clearedForSale ? "cleared" : "not cleared") for sale"
                        + (product.pricing.tier.map { ", price tier \($0)" } ?? "")
                        + "; review state \(product.reviewState.displayName).")
            }
        }
        pages.post("apps/:bundleId/products/:productId/localizations") { request, context in
            let bundleId = try context.parameters.require("bundleId")
            let productId = try context.parameters.require("productId")
            return try await action(request, context, audit: "product.localization") { form in
                _ = try await catalog.setLocalization(
                    bundleId: bundleId, productId: productId,
                    localization: ProductLocalization(
                        locale: form["locale"] ?? "", displayName: form["displayName"] ?? "",
                        description: form["description"] ?? ""))
                return ConsoleOutcome(
                    target: "\(bundleId)/\(productId) \(form["locale"] ?? "")",
                    redirect: Self.productPath(bundleId, productId),
                    notice: "Saved the \(form["locale"] ?? "") localization of \(productId).")
            }
        }
        pages.post("apps/:bundleId/products/:productId/introductory-offer") { request, context in
            let bundleId = try context.parameters.require("bundleId")
            let productId = try context.parameters.require("productId")
            return try await action(request, context, audit: "product.introductory-offer") { form in
                var offers: [IntroductoryOffer] = []
                if form["paymentMode"] != "none" {
                    let terms = try Self.offerTerms(form)
                    offers = [
                        IntroductoryOffer(
                            schedule: OfferSchedule(
                                paymentMode: terms.mode, period: terms.period, numberOfPeriods: terms.periods,
                                pricing: terms.pricing))
                    ]
                }
                _ = try await catalog.updateProduct(
                    bundleId: bundleId, productId: productId, changes: ProductChanges(introductoryOffers: offers))
                return ConsoleOutcome(
                    target: "\(bundleId)/\(productId)", redirect: Self.productPath(bundleId, productId),
                    notice: offers.isEmpty
                        ? "Removed the introductory offer of \(productId)."
                        : "Saved the introductory offer of \(productId): "
                            + Self.terms(
                                offers[0].paymentMode, offers[0].numberOfPeriods, offers[0].period, offers[0].pricing)
                            + ".")
            }
        }
        pages.post("apps/:bundleId/products/:productId/review") { request, context in
            let bundleId = try context.parameters.require("bundleId")
            let productId = try context.parameters.require("productId")
            return try await action(request, context, audit: "product.review") { form in
                guard let action = ReviewAction(rawValue: form["action"] ?? "") else {
                    throw KioskError(.invalidAction, "Choose a review action.", field: "action")
                }
                let product = try await catalog.review(bundleId: bundleId, productId: productId, action: action)
                return ConsoleOutcome(
                    target: "\(bundleId)/\(productId) \(action.rawValue)",
                    redirect: Self.productPath(bundleId, productId),
                    notice: "\(productId) was \(action.event.done); it is now \(product.reviewState.displayName).")
            }
        }
    }

    func appsPage(_ context: KioskRequestContext) async throws -> Response {
        let apps = try await catalog.apps()
        return renderer.page(
            AppsPage(
                apps: apps.map { AppsPage.App(name: $0.name, bundleId: $0.bundleId, appId: String($0.id)) },
                empty: apps.isEmpty),
            title: "Apps", section: "Apps", session: context.consoleSession)
    }

    /// How many products the app page lists at once.
    static let productsPerPage = 100

    /// An app's page; after a refused new product, with what was typed in `form` and the refusal at its `field`.
    func appPage(
        _ bundleId: String, _ context: KioskRequestContext, page: Int = 1, form: ConsoleForm? = nil,
        error: (field: String, message: String)? = nil, status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let app = try await catalog.app(bundleId: bundleId)
        let (products, total) = try await catalog.productPage(
            bundleId: bundleId, offset: (page - 1) * Self.productsPerPage, limit: Self.productsPerPage)
        let usa = Storefront.named("USA")
        let keys = try await catalog.keys(bundleId: bundleId)
        let (agreement, _) = try await catalog.agreement()
        let productRows = products.map { product in
            let sandbox = usa.map {
                ProductAvailability.evaluate(
                    product: product, app: app, agreement: agreement, environment: .sandbox, storefront: $0)
            }
            return AppPage.Product(
                productId: product.productId, referenceName: product.referenceName, type: product.type.rawValue,
                state: product.reviewState.displayName,
                price: usa.flatMap { product.pricing.price(in: $0) }.map { Self.amount($0, "USD") } ?? "—",
                available: sandbox?.isAvailable ?? false)
        }
        // The shared secret validates receipts: only those who may change the catalog see it.
        let secret = context.consoleSession?.permissions.contains(.manageCatalog) == true ? app.sharedSecret : nil
        let chosenType = form?["type"] ?? ProductType.consumable.rawValue
        func message(_ field: String) -> String? { error?.field == field ? error?.message : nil }
        return renderer.page(
            AppPage(
                bundleId: app.bundleId, appId: String(app.id), sharedSecret: secret, hasSharedSecret: secret != nil,
                productionURLs: app.productionNotificationURLs.joined(separator: "\n").nonEmpty,
                sandboxURLs: app.sandboxNotificationURLs.joined(separator: "\n").nonEmpty,
                products: productRows, noProducts: total == 0,
                pager: ConsolePager(
                    "Products", page: page, size: Self.productsPerPage, shown: productRows.count, total: total
                ) { "/console/apps/\(app.bundleId)?page=\($0)#products" },
                keys: keys.map { AppPage.Key(id: $0.id, name: $0.name, revoked: $0.revokedAt != nil) },
                types: ProductType.allCases.map {
                    ConsoleOption(value: $0.rawValue, selected: $0.rawValue == chosenType)
                },
                formError: message("form"), form_productId: form?["productId"],
                form_referenceName: form?["referenceName"], form_tier: form?["tier"], form_locale: form?["locale"],
                form_displayName: form?["displayName"], form_description: form?["description"],
                error_productId: message("productId"), error_type: message("type"),
                error_referenceName: message("referenceName"), error_tier: message("tier"),
                error_locale: message("locale"), error_displayName: message("displayName"),
                error_description: message("description")),
            title: app.name, section: "Apps", session: context.consoleSession, status: status)
    }

    /// Creates a product from the app page's form, or shows that page again with the API's message at the field.
    func createProduct(_ bundleId: String, _ request: Request, _ context: KioskRequestContext) async throws -> Response
    {
        let form = try await ConsoleForm.read(request, context: context)
        let fields = ["productId", "type", "referenceName", "tier", "locale", "displayName", "description"]
        do {
            guard let type = ProductType(rawValue: form["type"] ?? "") else {
                throw KioskError(.invalidType, "Choose the product's type.", field: "type")
            }
            guard let tier = Int(form["tier"] ?? "1") else {
                throw KioskError(.invalidTier, "A price tier is a whole number from 1 to 20.", field: "tier")
            }
            var changes = ProductChanges(pricing: Pricing(tier: tier))
            if let locale = form["locale"] {
                changes.localizations = [
                    ProductLocalization(
                        locale: locale, displayName: form["displayName"] ?? "", description: form["description"] ?? "")
                ]
            }
            let product = try await catalog.createProduct(
                bundleId: bundleId, productId: form["productId"] ?? "", type: type,
                referenceName: form["referenceName"] ?? "", changes: changes)
            try await audit(context.consoleSession, "product.create", "\(bundleId)/\(product.productId)")
            return Response.redirect(to: "/console/apps/\(bundleId)/products/\(product.productId)", type: .normal)
        } catch let error as KioskError {
            return try await appPage(
                bundleId, context, form: form,
                error: (Self.formField(of: error, among: fields), error.message + (error.fix.map { " " + $0 } ?? "")),
                status: error.status)
        }
    }

    /// The form field an API error names (`localizations[0].displayName` is the form's `displayName`), else the
    /// whole form.
    static func formField(of error: KioskError, among fields: [String]) -> String {
        guard let path = error.field else { return "form" }
        if path.hasPrefix("pricing") { return "tier" }
        return fields.first { path == $0 || path.hasSuffix("." + $0) } ?? "form"
    }

    func productPage(_ bundleId: String, _ productId: String, storefront: String, _ context: KioskRequestContext)
        async throws -> Response
    {
        let product = try await catalog.product(bundleId: bundleId, productId: productId)
        let storefrontCode = Storefront.named(storefront.uppercased())?.code ?? "USA"
        var availability: [ProductPage.Availability] = []
        for environment in StoreEnvironment.allCases {
            let result = try await catalog.availability(
                bundleId: bundleId, productId: productId, environment: environment, storefront: storefrontCode)
            availability.append(
                ProductPage.Availability(
                    environment: environment.rawValue, available: result.isAvailable,
                    reasons: result.reasons.map { reason in
                        let form = Self.consoleFix(reason.code)
                        return ProductPage.Reason(
                            message: reason.message, fix: form == nil ? reason.fix : nil, code: reason.code,
                            page: form?.path, pageText: form?.text)
                    }))
        }
        let proceeds = try await money.proceeds(of: product)
        let prices = Storefront.all.compactMap { storefront -> ProductPage.Price? in
            guard let price = product.pricing.price(in: storefront), let split = proceeds[storefront.code] else {
                return nil
            }
            let currency = storefront.currency.code
            return ProductPage.Price(
                storefront: storefront.code, name: storefront.name, price: Self.amount(price, currency),
                tax: Self.amount(split.taxMinorUnits, currency),
                proceeds: Self.amount(split.proceedsMinorUnits, currency),
                monthly: product.monthlyPlanPrice(in: storefront).map {
                    "\(Self.amount($0, currency)) × \(MonthlyPlan.billingPeriods)"
                }, selected: storefront.code == storefrontCode)
        }
        return renderer.page(
            ProductPage(
                bundleId: bundleId, productId: product.productId, referenceName: product.referenceName,
                type: product.type.rawValue, state: product.reviewState.displayName,
                clearedForSale: product.clearedForSale, tier: product.pricing.tier.map(String.init),
                subscription: product.type == .autoRenewable, monthlyPlan: product.monthlyPlan != nil,
                introductoryOffers: product.introductoryOffers.map {
                    Self.terms($0.paymentMode, $0.numberOfPeriods, $0.period, $0.pricing)
                        + ($0.storefront.map { " in \($0)" } ?? "")
                },
                promotionalOffers: product.promotionalOffers.map { offer in
                    ProductPage.Offer(
                        identifier: offer.identifier, referenceName: offer.referenceName,
                        terms: Self.terms(offer.paymentMode, offer.numberOfPeriods, offer.period, offer.pricing))
                },
                winBackOffers: product.winBackOffers.map { offer in
                    ProductPage.Offer(
                        identifier: offer.identifier, referenceName: offer.referenceName,
                        terms: Self.terms(offer.paymentMode, offer.numberOfPeriods, offer.period, offer.pricing),
                        eligibility: Self.eligibility(offer))
                },
                modes: OfferPaymentMode.allCases.map { ConsoleOption(value: $0.rawValue) },
                storefront: storefrontCode, availability: availability, prices: prices,
                localizations: product.localizations.map {
                    ProductPage.Localization(
                        locale: $0.locale, displayName: $0.displayName, description: $0.description)
                },
                reviewActions: Self.reviewChoices(product), reviewable: !Self.reviewChoices(product).isEmpty,
                submitNeeds: Self.submitNeeds(product),
                storefronts: ConsoleStorefrontOption.all(selected: storefrontCode)),
            title: product.referenceName, section: "Apps", session: context.consoleSession)
    }

    /// An offer's terms as a line: "pay_as_you_go, 3 × P1M at tier 2".
    static func terms(_ mode: OfferPaymentMode, _ periods: Int, _ period: OfferPeriod, _ pricing: Pricing) -> String {
        "\(mode.rawValue), \(periods) × \(period)"
            + (mode == .freeTrial ? "" : pricing.tier.map { " at tier \($0)" } ?? "")
    }

    /// Who a win-back offer is for: "paid ≥ 1 month, lapsed 1–6 months, 12 months between offers, high priority".
    static func eligibility(_ offer: WinBackOffer) -> String {
        let lapsed = offer.timeSinceLastSubscribedInMonths
        return [
            "paid ≥ \(offer.paidSubscriptionDurationInMonths) months",
            "lapsed \(lapsed.minimum)" + (lapsed.maximum.map { "–\($0)" } ?? "+") + " months",
            offer.waitBetweenOffersInMonths.map { "\($0) months between offers" },
            offer.priority == .high ? "high priority" : nil,
        ].compactMap { $0 }.joined(separator: ", ")
    }

    /// The console's own form that fixes an availability reason, in place of the CLI's or the API's fix.
    static func consoleFix(_ code: String) -> ConsoleNotice.Link? {
        switch code {
        case "agreement_not_active":
            ConsoleNotice.Link(path: "/console/agreements", text: "Complete it on the Agreements page.")
        case "not_cleared_for_sale": ConsoleNotice.Link(path: "#edit-product", text: "Tick “Cleared for sale” above.")
        case "missing_metadata":
            ConsoleNotice.Link(path: "#localization", text: "Add what is missing above: a localization, a price tier.")
        case "review_findings": ConsoleNotice.Link(path: "#localization", text: "Correct its texts above.")
        case "not_approved":
            ConsoleNotice.Link(path: "#review-actions", text: "Submit it for review below, and approve it.")
        case "removed_from_sale": ConsoleNotice.Link(path: "#review-actions", text: "Restore it to sale below.")
        default: nil
        }
    }

    /// The review actions the product's state allows now, as buttons.
    static func reviewChoices(_ product: Product) -> [ProductPage.ReviewChoice] {
        let allowed = product.reviewState.allowedEvents(metadataComplete: product.hasCompleteMetadata())
        return ReviewAction.allCases.filter { allowed.contains($0.event) }.map {
            ProductPage.ReviewChoice(value: $0.rawValue, name: Self.label($0))
        }
    }

    /// What the product lacks before it can be submitted for review; nil when nothing, or when its state is past
    /// submitting.
    static func submitNeeds(_ product: Product) -> String? {
        guard [.missingMetadata, .rejected].contains(product.reviewState), !product.hasCompleteMetadata() else {
            return nil
        }
        return "To submit it for review, complete its metadata: a localization and a price in every storefront it is "
            + "sold in (the availability above names what is missing)."
    }

    static func label(_ action: ReviewAction) -> String {
        switch action {
        case .submit: "Submit for review"
        case .approve: "Approve"
        case .reject: "Reject"
        case .removeFromSale: "Remove from sale"
        case .restoreToSale: "Restore to sale"
        }
    }
}

/// The apps, each with its bundle id and Apple id.
struct AppsPage: ConsoleView {
    static let template = "apps"

    struct App: Decodable {
        var name: String
        var bundleId: String
        var appId: String
    }

    var apps: [App]
    var empty: Bool
}

/// An app: its ids, shared secret, notification URLs, keys and products, and the new-product form (which, when the
/// store refused it, shows what was typed, `form_…`, and the refusal at its field, `error_…`).
struct AppPage: ConsoleView {
    static let template = "app"

    struct Product: Decodable {
        var productId: String
        var referenceName: String
        var type: String
        var state: String
        /// The price in the USA storefront.
        var price: String
        /// Whether the sandbox sells it in the USA storefront.
        var available: Bool
    }

    struct Key: Decodable {
        var id: String
        var name: String
        var revoked: Bool
    }

    var bundleId: String
    var appId: String
    /// Shown only to those who may change the catalog.
    var sharedSecret: String?
    var hasSharedSecret: Bool
    /// One URL a line.
    var productionURLs: String?
    var sandboxURLs: String?
    var products: [Product]
    var noProducts: Bool
    /// Where this page of products is in the whole list; nil when one page holds them all.
    var pager: ConsolePager?
    var keys: [Key]
    var types: [ConsoleOption]
    /// A refusal of the new product that names no field.
    var formError: String?
    var form_productId: String?
    var form_referenceName: String?
    var form_tier: String?
    var form_locale: String?
    var form_displayName: String?
    var form_description: String?
    var error_productId: String?
    var error_type: String?
    var error_referenceName: String?
    var error_tier: String?
    var error_locale: String?
    var error_displayName: String?
    var error_description: String?
}

/// A product: its facts, localizations and offers, its availability in a storefront (with the reasons and fixes
/// when it is not for sale), the review actions, and its prices and proceeds in every storefront.
struct ProductPage: ConsoleView {
    static let template = "product"

    /// A promotional or win-back offer.
    struct Offer: Decodable {
        var identifier: String
        var referenceName: String
        var terms: String
        /// Who a win-back offer is for; nil for a promotional offer.
        var eligibility: String?
    }

    struct Availability: Decodable {
        var environment: String
        var available: Bool
        var reasons: [Reason]
    }

    /// Why the product is not for sale, and what to do about it.
    struct Reason: Decodable {
        var message: String
        /// The CLI's or the API's fix, when the console has no form of its own for it.
        var fix: String?
        var code: String
        /// The console page or form where it is fixed, when there is one, and what to do there.
        var page: String?
        var pageText: String?
    }

    struct Price: Decodable {
        var storefront: String
        /// The storefront's name.
        var name: String
        var price: String
        var tax: String
        var proceeds: String
        /// The monthly plan's payment, "5.99 USD × 12", when the product has one priced in the storefront.
        var monthly: String?
        /// The storefront the page shows availability in.
        var selected: Bool
    }

    struct Localization: Decodable {
        var locale: String
        var displayName: String
        var description: String
    }

    struct ReviewChoice: Decodable {
        var value: String
        var name: String
    }

    var bundleId: String
    var productId: String
    var referenceName: String
    var type: String
    var state: String
    var clearedForSale: Bool
    var tier: String?
    /// Whether the product is an auto-renewable subscription, which has offers.
    var subscription: Bool
    /// Whether the product has a monthly plan with a 12-month commitment (a column of the prices).
    var monthlyPlan: Bool
    var introductoryOffers: [String]
    var promotionalOffers: [Offer]
    var winBackOffers: [Offer]
    var modes: [ConsoleOption]
    /// The storefront whose availability is shown.
    var storefront: String
    var availability: [Availability]
    var prices: [Price]
    var localizations: [Localization]
    /// The review actions the product's state allows.
    var reviewActions: [ReviewChoice]
    /// Whether any review action is allowed.
    var reviewable: Bool
    /// What the product lacks before it can be submitted, when that is what stops it.
    var submitNeeds: String?
    var storefronts: [ConsoleStorefrontOption]
}
