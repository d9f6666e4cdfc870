import Foundation

/// An Xcode StoreKit configuration file (`.storekit`): the JSON Xcode's StoreKit testing reads.
///
/// The model follows the files Xcode writes (format versions 1 to 5 are read, newer ones on a best-effort basis;
/// `read(from:)`):
/// top-level `identifier`, `products` (consumables and non-consumables), `nonRenewingSubscriptions`,
/// `subscriptionGroups` (each with `subscriptions`), `settings` (`_storefront`, `_locale` and Xcode's test
/// switches, kept as read), `appPolicies`, `subscriptionOffersKeyPair` and `version`. Prices are decimal strings
/// (`displayPrice`) in the currency of the `_storefront` setting (USA when absent).
///
/// ```swift
/// let configuration = try StoreKitConfiguration.read(from: data).configuration
/// let document = try configuration.catalogDocument(bundleId: "com.example.app", appName: "Example")
/// let file = try StoreKitConfiguration(document: document).encode()
/// ```
public struct StoreKitConfiguration: Sendable, Equatable {
    /// The `code` of every error about a malformed `.storekit` file.
    public static let errorCode = ErrorCode.invalidStorekitFile
    /// The format version this build writes for a catalog without monthly plans: the newest whose structure real
    /// Xcode files show without billing plans (a catalog with monthly plans is written as version 5,
    /// ``billingPlansVersion``).
    public static let writtenVersion = Version(major: 4, minor: 0)

    /// The file format version, `{"major": 4, "minor": 0}`.
    public struct Version: Sendable, Hashable {
        /// The major version; 1 to 5 are read.
        public var major: Int
        /// The minor version.
        public var minor: Int

        /// A version.
        public init(major: Int, minor: Int) {
            self.major = major
            self.minor = minor
        }
    }

    /// The `type` of a product in the file.
    public enum ProductKind: String, Sendable, Hashable, CaseIterable {
        case consumable = "Consumable"
        case nonConsumable = "NonConsumable"
        case nonRenewingSubscription = "NonRenewingSubscription"
        case recurringSubscription = "RecurringSubscription"
    }

    /// An offer's `paymentMode` in the file.
    public enum PaymentMode: String, Sendable, Hashable, CaseIterable {
        case free
        case payAsYouGo
        case payUpFront

        /// The same mode in Kiosk's vocabulary.
        public var offerPaymentMode: OfferPaymentMode {
            switch self {
            case .free: .freeTrial
            case .payAsYouGo: .payAsYouGo
            case .payUpFront: .payUpFront
            }
        }

        /// The file's spelling of a Kiosk payment mode.
        public init(_ mode: OfferPaymentMode) {
            switch mode {
            case .freeTrial: self = .free
            case .payAsYouGo: self = .payAsYouGo
            case .payUpFront: self = .payUpFront
            }
        }
    }

    /// A product's name and description in one locale (`en_US`, `es_ES`, `ar`).
    public struct Localization: Sendable, Hashable {
        /// The locale as written in the file.
        public var locale: String
        /// The customer-facing name.
        public var displayName: String
        /// The customer-facing description.
        public var description: String
        /// Keys Kiosk does not know, kept as read and written back.
        public var extras: [String: JSONValue] = [:]

        /// A localization.
        public init(locale: String, displayName: String, description: String) {
            self.locale = locale
            self.displayName = displayName
            self.description = description
        }
    }

    /// A subscription group's name in one locale.
    public struct GroupLocalization: Sendable, Hashable {
        /// The locale as written in the file.
        public var locale: String
        /// The group name customers see.
        public var displayName: String
        /// A description; Kiosk has no place for it and reports a non-empty one as unsupported.
        public var description: String
        /// The app name shown with the group, when it differs from the app's.
        public var customAppName: String?
        /// Keys Kiosk does not know, kept as read and written back.
        public var extras: [String: JSONValue] = [:]

        /// A group localization.
        public init(locale: String, displayName: String, description: String = "", customAppName: String? = nil) {
            self.locale = locale
            self.displayName = displayName
            self.description = description
            self.customAppName = customAppName
        }
    }

    /// An introductory, promotional (`adHocOffers`) or offer-code (`codeOffers`) subscription offer.
    public struct Offer: Sendable, Hashable {
        /// Xcode's id of the offer within the file.
        public var internalID: String
        /// The promotional offer identifier apps pass (promotional offers only).
        public var offerID: String?
        /// The offer's reference name (promotional and code offers).
        public var referenceName: String?
        /// How the customer pays.
        public var paymentMode: PaymentMode
        /// The length of one offer period.
        public var subscriptionPeriod: OfferPeriod
        /// How many periods the offer lasts; absent in the file means 1.
        public var numberOfPeriods: Int?
        /// The offer price (per period for pay-as-you-go, total for pay-up-front); absent for free offers.
        public var displayPrice: String?
        /// Version 5: the billing plan the offer belongs to (`BILLED_UPFRONT` or a commitment plan).
        public var billingPlanType: String?
        /// Offer codes: who may redeem them.
        public var eligibility: [String]?
        /// Offer codes: whether they stack with other offers.
        public var isStackable: Bool?
        /// Keys Kiosk does not know, kept as read and written back.
        public var extras: [String: JSONValue] = [:]

        /// An offer.
        public init(
            internalID: String, offerID: String? = nil, referenceName: String? = nil, paymentMode: PaymentMode,
            subscriptionPeriod: OfferPeriod, numberOfPeriods: Int? = nil, displayPrice: String? = nil,
            billingPlanType: String? = nil, eligibility: [String]? = nil, isStackable: Bool? = nil
        ) {
            self.internalID = internalID
            self.offerID = offerID
            self.referenceName = referenceName
            self.paymentMode = paymentMode
            self.subscriptionPeriod = subscriptionPeriod
            self.numberOfPeriods = numberOfPeriods
            self.displayPrice = displayPrice
            self.billingPlanType = billingPlanType
            self.eligibility = eligibility
            self.isStackable = isStackable
        }
    }

    /// A win-back offer (`winbackOffers`): the terms of an offer, Xcode's `isEligible` test switch, and the
    /// eligibility rules under App Store Connect's names, each absent when the file has none (Xcode writes none).
    public struct WinBackEntry: Sendable, Hashable {
        /// The terms, with the keys Kiosk does not know kept in its `extras`.
        public var offer: Offer
        /// Xcode's switch for whether the tester is eligible; kept and written back, not applied (Kiosk decides by
        /// the rules below).
        public var isEligible: Bool?
        /// `customerEligibilityPaidSubscriptionDurationInMonths`.
        public var paidSubscriptionDurationInMonths: Int?
        /// `customerEligibilityTimeSinceLastSubscribedInMonths`: `{"minimum", "maximum"?}`.
        public var timeSinceLastSubscribedInMonths: KioskCore.WinBackOffer.MonthRange?
        /// `customerEligibilityWaitBetweenOffersInMonths`.
        public var waitBetweenOffersInMonths: Int?
        /// `startDate` and `endDate`: an ISO 8601 date (`2026-01-31`, midnight UTC) or date-time.
        public var startDate: Date?
        public var endDate: Date?
        /// `priority`: `HIGH` or `NORMAL`.
        public var priority: KioskCore.WinBackOffer.Priority?

        /// A win-back offer with the terms of `offer`.
        public init(
            offer: Offer, isEligible: Bool? = nil, paidSubscriptionDurationInMonths: Int? = nil,
            timeSinceLastSubscribedInMonths: KioskCore.WinBackOffer.MonthRange? = nil,
            waitBetweenOffersInMonths: Int? = nil, startDate: Date? = nil, endDate: Date? = nil,
            priority: KioskCore.WinBackOffer.Priority? = nil
        ) {
            self.offer = offer
            self.isEligible = isEligible
            self.paidSubscriptionDurationInMonths = paidSubscriptionDurationInMonths
            self.timeSinceLastSubscribedInMonths = timeSinceLastSubscribedInMonths
            self.waitBetweenOffersInMonths = waitBetweenOffersInMonths
            self.startDate = startDate
            self.endDate = endDate
            self.priority = priority
        }
    }

    /// A product: in `products`, `nonRenewingSubscriptions`, or a group's `subscriptions` (then with the
    /// subscription fields set).
    public struct ProductEntry: Sendable, Hashable {
        /// The price as a decimal string in the file's storefront currency, e.g. `"0.99"`.
        public var displayPrice: String
        /// Whether family members share the purchase.
        public var familyShareable: Bool
        /// Xcode's id of the product within the file.
        public var internalID: String
        /// Names and descriptions.
        public var localizations: [Localization]
        /// The product id.
        public var productID: String
        /// The developer-facing name.
        public var referenceName: String
        /// The product type.
        public var type: ProductKind
        /// The renewal period (subscriptions only).
        public var recurringSubscriptionPeriod: SubscriptionDuration?
        /// The level in the group, 1 = highest service (subscriptions only).
        public var groupNumber: Int?
        /// The id of the group (subscriptions only; some files leave it out).
        public var subscriptionGroupID: String?
        /// The introductory offer (subscriptions; `null` when none).
        public var introductoryOffer: Offer?
        /// Version 5: introductory offers per billing plan.
        public var introductoryOffers: [Offer]?
        /// Promotional offers (subscriptions).
        public var adHocOffers: [Offer]
        /// Offer codes (subscriptions); Kiosk does not import them.
        public var codeOffers: [Offer]
        /// Win-back offers (subscriptions).
        public var winbackOffers: [WinBackEntry]?
        /// Version 5 billing plans: `BILLED_UPFRONT` (the product's price) and `MONTHLY` (the monthly plan with a
        /// 12-month commitment); other keys and plans are kept as read.
        public var billingPlans: [JSONValue]?
        /// Keys Kiosk does not know, kept as read and written back.
        public var extras: [String: JSONValue] = [:]

        /// A product entry.
        public init(
            displayPrice: String, familyShareable: Bool, internalID: String, localizations: [Localization],
            productID: String, referenceName: String, type: ProductKind,
            recurringSubscriptionPeriod: SubscriptionDuration? = nil, groupNumber: Int? = nil,
            subscriptionGroupID: String? = nil, introductoryOffer: Offer? = nil, introductoryOffers: [Offer]? = nil,
            adHocOffers: [Offer] = [], codeOffers: [Offer] = [], winbackOffers: [WinBackEntry]? = nil,
            billingPlans: [JSONValue]? = nil
        ) {
            self.displayPrice = displayPrice
            self.familyShareable = familyShareable
            self.internalID = internalID
            self.localizations = localizations
            self.productID = productID
            self.referenceName = referenceName
            self.type = type
            self.recurringSubscriptionPeriod = recurringSubscriptionPeriod
            self.groupNumber = groupNumber
            self.subscriptionGroupID = subscriptionGroupID
            self.introductoryOffer = introductoryOffer
            self.introductoryOffers = introductoryOffers
            self.adHocOffers = adHocOffers
            self.codeOffers = codeOffers
            self.winbackOffers = winbackOffers
            self.billingPlans = billingPlans
        }
    }

    /// A subscription group.
    public struct Group: Sendable, Hashable {
        /// Xcode's id of the group within the file.
        public var id: String
        /// Customer-facing names.
        public var localizations: [GroupLocalization]
        /// The group's reference name.
        public var name: String
        /// The auto-renewable subscriptions of the group.
        public var subscriptions: [ProductEntry]
        /// Keys Kiosk does not know, kept as read and written back.
        public var extras: [String: JSONValue] = [:]

        /// A group.
        public init(id: String, localizations: [GroupLocalization], name: String, subscriptions: [ProductEntry]) {
            self.id = id
            self.localizations = localizations
            self.name = name
            self.subscriptions = subscriptions
        }
    }

    /// The file's identifier (Xcode writes 8 hex digits).
    public var identifier: String
    /// Consumable and non-consumable products.
    public var products: [ProductEntry]
    /// Non-renewing subscriptions.
    public var nonRenewingSubscriptions: [ProductEntry]
    /// Subscription groups with their auto-renewable subscriptions.
    public var subscriptionGroups: [Group]
    /// Xcode's settings, kept as read: `_storefront`, `_locale`, test switches.
    public var settings: [String: JSONValue]
    /// The app's policies (EULA, privacy), kept as read.
    public var appPolicies: JSONValue?
    /// Xcode's key pair for signing promotional offers in tests, kept as read.
    public var subscriptionOffersKeyPair: JSONValue?
    /// The format version.
    public var version: Version
    /// Top-level keys Kiosk does not know, kept as read and written back.
    public var extras: [String: JSONValue]

    /// A configuration.
    public init(
        identifier: String, products: [ProductEntry] = [], nonRenewingSubscriptions: [ProductEntry] = [],
        subscriptionGroups: [Group] = [], settings: [String: JSONValue] = [:], appPolicies: JSONValue? = nil,
        subscriptionOffersKeyPair: JSONValue? = nil, version: Version = Self.writtenVersion,
        extras: [String: JSONValue] = [:]
    ) {
        self.identifier = identifier
        self.products = products
        self.nonRenewingSubscriptions = nonRenewingSubscriptions
        self.subscriptionGroups = subscriptionGroups
        self.settings = settings
        self.appPolicies = appPolicies
        self.subscriptionOffersKeyPair = subscriptionOffersKeyPair
        self.version = version
        self.extras = extras
    }

    /// The alpha-3 code of the storefront whose currency the prices are in (`settings._storefront`, else USA).
    public var storefrontCode: String {
        settings["_storefront"]?.stringValue ?? "USA"
    }

    /// The file's bytes: pretty-printed JSON with sorted keys, as Xcode writes it.
    public func encode() -> Data {
        CatalogFileCoding.encode(self)
    }
}
