import Foundation
import KioskCore

/// The ids the App Store Connect API gives Kiosk's catalog. Apple's ids are opaque strings, so Kiosk's are the ones
/// its console and CLI already show: an app's and a group's number, a product's app number and product id
/// (`1400000001-com.example.pro_monthly`, never ambiguous since product ids have no `-`), and a localization's owner
/// and locale (`1400000001-com.example.pro_monthly~en-US`).
enum ConnectID {
    static func product(_ product: Product) -> String { "\(product.appId)-\(product.productId)" }

    /// The app number and product id `id` names; nil when it names none.
    static func product(_ id: String) -> (appId: App.ID, productId: String)? {
        guard let dash = id.firstIndex(of: "-"), let appId = App.ID(id[..<dash]), appId > 0 else { return nil }
        let productId = String(id[id.index(after: dash)...])
        return productId.isEmpty ? nil : (appId, productId)
    }

    static func localization(owner: String, locale: String) -> String { "\(owner)~\(locale)" }

    /// The owner's id and the locale `id` names.
    static func localization(_ id: String) -> (owner: String, locale: String)? {
        guard let tilde = id.lastIndex(of: "~") else { return nil }
        let owner = String(id[..<tilde])
        let locale = String(id[id.index(after: tilde)...])
        return owner.isEmpty || locale.isEmpty ? nil : (owner, locale)
    }
}

extension ConnectID {
    /// A price point: a price in one territory, for one product. Like Apple's, the id is base64url of a small JSON
    /// object (`{"s":product,"t":territory,"p":minor units}`), so it carries what it names.
    static func pricePoint(product: String, territory: String, minorUnits: Int) -> String {
        let object = ["s": product, "t": territory, "p": String(minorUnits)]
        let json = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return json.base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// The product, storefront and positive price a price point's id names; nil when it names none.
    static func pricePoint(_ id: String) -> (product: String, storefront: Storefront, minorUnits: Int)? {
        guard id.count <= 400 else { return nil }
        var base64 = id.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let product = object["s"] as? String, let code = object["t"] as? String,
            let storefront = Storefront.named(code), let text = object["p"] as? String, let minorUnits = Int(text),
            minorUnits > 0, minorUnits <= Pricing.maximumMinorUnits
        else { return nil }
        return (product, storefront, minorUnits)
    }
}

/// Apple's `date` attributes (`2026-12-01`): a day, read and written as its UTC midnight.
enum ConnectDay {
    private static var formatter: DateFormatter {
        let formatter = DateFormatter()
        formatter.calendar = Calendar(identifier: .iso8601)
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter
    }

    /// The UTC midnight `text` names; 409 pointing at `pointer` when it is not such a date.
    static func date(_ text: String, pointer: String) throws -> Date {
        guard text.count == 10, let date = formatter.date(from: text) else {
            throw ConnectAPIError.entity(
                "ENTITY_ERROR.ATTRIBUTE.INVALID", "'\(text.prefix(20))' is not a date such as 2026-12-01.",
                pointer: pointer)
        }
        return date
    }

    /// `2026-12-01`: the UTC day of `date`.
    static func text(_ date: Date) -> String { formatter.string(from: date) }
}

/// What proceeds depend on: each storefront's tax rule in force and the commission (15% in the Small Business
/// Program, else 30%).
struct ConnectMoney: Sendable {
    let taxRules: [String: TaxRule]
    let commissionBasisPoints: Int
}

/// Apple's two faces of a product: subscriptions (auto-renewables) and in-app purchases v2 (the other types), each
/// with its own resource names for the same things.
struct ProductFace: Sendable {
    /// `subscriptions`, `inAppPurchases`.
    let type: String
    /// Where its resources are: `/v1/subscriptions`, `/v2/inAppPurchases`.
    let path: String
    /// `subscriptionLocalizations`, `inAppPurchaseLocalizations`: the type, the relationship and the path's name.
    let localizationType: String
    let localizationsRelationship: String
    /// The relationship of a localization and a review submission to its product: `subscription`,
    /// `inAppPurchaseV2`.
    let ownerRelationship: String
    /// `subscriptionSubmissions`, `inAppPurchaseSubmissions`: the type, and its path under `/v1`.
    let submissionType: String
    /// `subscriptionPricePoints`, `inAppPurchasePricePoints`.
    let pricePointType: String
    /// How an offer's price names its price point: `subscriptionPricePoint`, `pricePoint`.
    let offerPricePointRelationship: String
    let sells: @Sendable (ProductType) -> Bool

    static let subscriptions = ProductFace(
        type: "subscriptions", path: "/v1/subscriptions", localizationType: "subscriptionLocalizations",
        localizationsRelationship: "subscriptionLocalizations", ownerRelationship: "subscription",
        submissionType: "subscriptionSubmissions", pricePointType: "subscriptionPricePoints",
        offerPricePointRelationship: "subscriptionPricePoint", sells: { $0 == .autoRenewable })
    static let inAppPurchases = ProductFace(
        type: "inAppPurchases", path: "/v2/inAppPurchases", localizationType: "inAppPurchaseLocalizations",
        localizationsRelationship: "inAppPurchaseLocalizations", ownerRelationship: "inAppPurchaseV2",
        submissionType: "inAppPurchaseSubmissions", pricePointType: "inAppPurchasePricePoints",
        offerPricePointRelationship: "pricePoint", sells: { $0 != .autoRenewable })

    /// The product as this face's resource.
    func resource(_ product: Product, group: SubscriptionGroup?) -> ConnectResource {
        type == Self.subscriptions.type
            ? ConnectCatalogResources.subscription(product, group: group)
            : ConnectCatalogResources.inAppPurchase(product)
    }
}

/// Kiosk's catalog as App Store Connect API resources.
enum ConnectCatalogResources {
    static func app(_ app: App) -> ConnectResource {
        ConnectResource(
            type: "apps", id: String(app.id),
            attributes: [
                "name": .string(app.name), "bundleId": .string(app.bundleId),
                "subscriptionStatusUrl": app.productionNotificationURLs.first.map(JSONValue.string),
                "subscriptionStatusUrlVersion": app.productionNotificationURLs.isEmpty ? nil : .string("V2"),
                "subscriptionStatusUrlForSandbox": app.sandboxNotificationURLs.first.map(JSONValue.string),
                "subscriptionStatusUrlVersionForSandbox": app.sandboxNotificationURLs.isEmpty ? nil : .string("V2"),
            ])
    }

    /// The app's billing grace period; Kiosk has one for both environments, over every renewal.
    static func gracePeriod(_ app: App) -> ConnectResource {
        let on = app.billingGracePeriodDays != nil
        return ConnectResource(
            type: "subscriptionGracePeriods", id: String(app.id),
            attributes: [
                "optIn": .bool(on), "sandboxOptIn": .bool(on), "renewalType": .string("ALL_RENEWALS"),
                "duration": app.billingGracePeriodDays.flatMap { days in
                    gracePeriodDurations.first { $0.0 == days }.map { .string($0.1) }
                },
            ])
    }

    /// Apple's grace period `duration` names, by days.
    static let gracePeriodDurations: [(Int, String)] = [
        (3, "THREE_DAYS"), (16, "SIXTEEN_DAYS"), (28, "TWENTY_EIGHT_DAYS"),
    ]

    static func territory(_ storefront: Storefront) -> ConnectResource {
        ConnectResource(
            type: "territories", id: storefront.code, attributes: ["currency": .string(storefront.currency.code)])
    }

    /// A group with its localizations and (when given) its subscriptions.
    static func group(_ group: SubscriptionGroup, subscriptions: [Product]) -> ConnectResource {
        let id = String(group.id)
        return ConnectResource(
            type: "subscriptionGroups", id: id, attributes: ["referenceName": .string(group.referenceName)],
            relationships: [
                ConnectRelationship(
                    name: "subscriptions", related: .many(subscriptions.map { subscription($0, group: nil) })),
                ConnectRelationship(
                    name: "subscriptionGroupLocalizations",
                    related: .many(group.localizations.map { groupLocalization($0, groupId: id) })),
            ])
    }

    static func groupLocalization(_ localization: SubscriptionGroupLocalization, groupId: String) -> ConnectResource {
        ConnectResource(
            type: "subscriptionGroupLocalizations",
            id: ConnectID.localization(owner: groupId, locale: localization.locale),
            attributes: [
                "name": .string(localization.name), "customAppName": localization.customAppName.map(JSONValue.string),
                "locale": .string(localization.locale), "state": .string("APPROVED"),
            ])
    }

    /// An auto-renewable product, with its localizations and (when given) its group.
    static func subscription(_ product: Product, group: SubscriptionGroup?) -> ConnectResource {
        var resource = ConnectResource(
            type: ProductFace.subscriptions.type, id: ConnectID.product(product),
            attributes: [
                "name": .string(product.referenceName), "productId": .string(product.productId),
                "familySharable": .bool(product.familyShareable), "state": .string(state(of: product.reviewState)),
                "subscriptionPeriod": product.duration.flatMap(period).map(JSONValue.string),
                "groupLevel": product.subscription.map { .integer($0.level) },
            ],
            relationships: [localizationsRelationship(of: product, .subscriptions)])
        if let group {
            resource.relationships.append(
                ConnectRelationship(name: "group", related: .one(Self.group(group, subscriptions: []))))
        }
        return resource
    }

    /// A consumable, non-consumable or non-renewing product (Apple's in-app purchase v2), with its localizations.
    static func inAppPurchase(_ product: Product) -> ConnectResource {
        ConnectResource(
            type: ProductFace.inAppPurchases.type, id: ConnectID.product(product),
            attributes: [
                "name": .string(product.referenceName), "productId": .string(product.productId),
                "inAppPurchaseType": inAppPurchaseTypes.first { $0.0 == product.type }.map { .string($0.1) },
                "state": .string(state(of: product.reviewState)), "familySharable": .bool(product.familyShareable),
                "contentHosting": .bool(false),
            ],
            relationships: [localizationsRelationship(of: product, .inAppPurchases)])
    }

    /// Apple's `inAppPurchaseType` names, by Kiosk's product type.
    static let inAppPurchaseTypes: [(ProductType, String)] = [
        (.consumable, "CONSUMABLE"), (.nonConsumable, "NON_CONSUMABLE"), (.nonRenewing, "NON_RENEWING_SUBSCRIPTION"),
    ]

    static func localizationsRelationship(of product: Product, _ face: ProductFace) -> ConnectRelationship {
        ConnectRelationship(
            name: face.localizationsRelationship,
            related: .many(product.localizations.map { productLocalization($0, of: product, face) }))
    }

    static func productLocalization(
        _ localization: ProductLocalization, of product: Product, _ face: ProductFace
    ) -> ConnectResource {
        ConnectResource(
            type: face.localizationType,
            id: ConnectID.localization(owner: ConnectID.product(product), locale: localization.locale),
            attributes: [
                "name": .string(localization.displayName), "locale": .string(localization.locale),
                "description": .string(localization.description),
                "state": .string(localizationState(of: product.reviewState)),
            ])
    }

    /// A price point of `product` (its resource id) in `storefront`, with Apple's proceeds: the first year's at
    /// the commission now in force, the second year's (`proceedsYear2`) at 15%.
    static func pricePoint(
        type: String, product: String, storefront: Storefront, minorUnits: Int, money: ConnectMoney
    ) -> ConnectResource {
        let tax = money.taxRules[storefront.code] ?? TaxRule.defaultRule(for: storefront.code)
        func proceeds(_ commission: Int) -> JSONValue {
            let split = Proceeds.of(priceMinorUnits: minorUnits, tax: tax, commissionBasisPoints: commission)
            return .string(storefront.currency.decimalString(minorUnits: split.proceedsMinorUnits))
        }
        return ConnectResource(
            type: type, id: ConnectID.pricePoint(product: product, territory: storefront.code, minorUnits: minorUnits),
            attributes: [
                "customerPrice": .string(storefront.currency.decimalString(minorUnits: minorUnits)),
                "proceeds": proceeds(money.commissionBasisPoints),
                "proceedsYear2": type == "subscriptionPricePoints" ? proceeds(Proceeds.reducedCommission) : nil,
            ],
            relationships: [ConnectRelationship(name: "territory", related: .one(territory(storefront)))])
    }

    /// Apple's `state` of an in-app purchase or subscription.
    static func state(of review: ReviewState) -> String {
        switch review {
        case .missingMetadata: "MISSING_METADATA"
        case .readyToSubmit: "READY_TO_SUBMIT"
        case .waitingForReview: "WAITING_FOR_REVIEW"
        case .approved: "APPROVED"
        case .rejected: "REJECTED"
        case .developerRemovedFromSale: "DEVELOPER_REMOVED_FROM_SALE"
        }
    }

    /// A localization's `state`, which follows its product's review.
    static func localizationState(of review: ReviewState) -> String {
        switch review {
        case .waitingForReview: "WAITING_FOR_REVIEW"
        case .approved, .developerRemovedFromSale: "APPROVED"
        case .rejected: "REJECTED"
        case .missingMetadata, .readyToSubmit: "PREPARE_FOR_SUBMISSION"
        }
    }

    /// Apple's `subscriptionPeriod` names, by Kiosk's duration.
    static let periods: [(SubscriptionDuration, String)] = [
        (.oneWeek, "ONE_WEEK"), (.oneMonth, "ONE_MONTH"), (.twoMonths, "TWO_MONTHS"), (.threeMonths, "THREE_MONTHS"),
        (.sixMonths, "SIX_MONTHS"), (.oneYear, "ONE_YEAR"),
    ]

    static func period(_ duration: SubscriptionDuration) -> String? {
        periods.first { $0.0 == duration }?.1
    }

    static func duration(_ period: String) -> SubscriptionDuration? {
        periods.first { $0.1 == period }?.0
    }
}
