import Foundation
import KioskCore

// The console API's answers (`/admin/v1`), as openapi.yaml documents them: the store encodes them, the CLI and
// scripts decode them.

public struct AppResource: Codable, Sendable {
    public var appAppleId: Int64
    public var bundleId: String
    public var name: String
    public var sharedSecret: String?
    public var productionNotificationURLs: [String]
    public var sandboxNotificationURLs: [String]
    /// Whether failed sandbox notifications are retried like production ones (off: one attempt, as Apple's sandbox).
    public var sandboxNotificationRetries: Bool
    public var createdAt: Date
    public var updatedAt: Date

    public init(_ app: App) {
        appAppleId = app.id
        bundleId = app.bundleId
        name = app.name
        sharedSecret = app.sharedSecret
        productionNotificationURLs = app.productionNotificationURLs
        sandboxNotificationURLs = app.sandboxNotificationURLs
        sandboxNotificationRetries = app.sandboxNotificationRetries
        createdAt = app.createdAt
        updatedAt = app.updatedAt
    }
}

public struct AppList: Codable, Sendable {
    public var apps: [AppResource]

    public init(apps: [AppResource]) {
        self.apps = apps
    }
}

public struct AvailabilityResource: Codable, Sendable {
    public struct Reason: Codable, Sendable {
        public var code: String
        public var message: String
        public var fix: String?
    }

    public var environment: StoreEnvironment
    public var storefront: String
    public var available: Bool
    public var reasons: [Reason]

    public init(_ availability: ProductAvailability, environment: StoreEnvironment, storefront: String) {
        self.environment = environment
        self.storefront = storefront
        available = availability.isAvailable
        reasons = availability.reasons.map { Reason(code: $0.code, message: $0.message, fix: $0.fix) }
    }
}

/// A product as the console API answers it: the catalog's ``Product`` (its fields read as the resource's own,
/// `resource.productId`) and, when asked for, whether clients get it.
@dynamicMemberLookup
public struct ProductResource: Codable, Sendable {
    public var product: Product
    /// Whether clients get the product, per environment, in the storefront named in `storefront`.
    public var availability: [AvailabilityResource]?

    public init(_ product: Product, availability: [AvailabilityResource]? = nil) {
        self.product = product
        self.availability = availability
    }

    public subscript<T>(dynamicMember field: WritableKeyPath<Product, T>) -> T {
        get { product[keyPath: field] }
        set { product[keyPath: field] = newValue }
    }

    private enum CodingKeys: String, CodingKey { case availability }

    /// The product's fields and `availability`, side by side.
    public init(from decoder: any Decoder) throws {
        product = try Product(from: decoder)
        availability = try decoder.container(keyedBy: CodingKeys.self)
            .decodeIfPresent([AvailabilityResource].self, forKey: .availability)
    }

    public func encode(to encoder: any Encoder) throws {
        try product.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(availability, forKey: .availability)
    }
}

public struct ProductList: Codable, Sendable {
    public var products: [ProductResource]
    /// With `limit`: how many products are not deleted, and the offset of the next page (none after the last).
    public var total: Int?
    public var nextOffset: Int?

    public init(products: [ProductResource], total: Int? = nil, nextOffset: Int? = nil) {
        self.products = products
        self.total = total
        self.nextOffset = nextOffset
    }
}

public struct PriceResource: Codable, Sendable {
    public var storefront: String
    public var storefrontId: String
    public var currency: String
    public var priceMinorUnits: Int
    /// The price as a plain decimal in the currency, e.g. "0.99"; for display only.
    public var price: String
    /// `tier` or `custom`.
    public var source: String
    /// What a first sale at this price is worth today: the storefront's tax (in the price, or added at checkout),
    /// the commission and the developer's proceeds, in minor units; `proceeds` as a decimal for display.
    public var taxMinorUnits: Int?
    public var commissionMinorUnits: Int?
    public var proceedsMinorUnits: Int?
    public var proceeds: String?
    public var pricesIncludeTax: Bool?
    public var taxRateBasisPoints: Int?
    public var commissionBasisPoints: Int?

    public init(
        storefront: String, storefrontId: String, currency: String, priceMinorUnits: Int, price: String, source: String
    ) {
        self.storefront = storefront
        self.storefrontId = storefrontId
        self.currency = currency
        self.priceMinorUnits = priceMinorUnits
        self.price = price
        self.source = source
    }
}

public struct PriceList: Codable, Sendable {
    public var productId: String
    public var prices: [PriceResource]

    public init(productId: String, prices: [PriceResource]) {
        self.productId = productId
        self.prices = prices
    }
}

public struct GroupResource: Codable, Sendable {
    public var groupId: Int64
    /// Apple's `subscriptionGroupIdentifier`, the same number as a string.
    public var subscriptionGroupIdentifier: String
    public var referenceName: String
    public var localizations: [SubscriptionGroupLocalization]
    public var createdAt: Date
    public var updatedAt: Date

    public init(_ group: SubscriptionGroup) {
        groupId = group.id
        subscriptionGroupIdentifier = String(group.id)
        referenceName = group.referenceName
        localizations = group.localizations
        createdAt = group.createdAt
        updatedAt = group.updatedAt
    }
}

public struct GroupList: Codable, Sendable {
    public var subscriptionGroups: [GroupResource]

    public init(subscriptionGroups: [GroupResource]) {
        self.subscriptionGroups = subscriptionGroups
    }
}

public struct TesterResource: Codable, Sendable {
    public var id: UUID
    public var email: String
    public var firstName: String
    public var lastName: String
    public var storefront: String
    public var interruptPurchases: Bool
    public var askToBuy: Bool
    public var renewalRate: RenewalRate
    public var paymentOutcome: PaymentOutcome
    public var purchaseHistoryClearedAt: Date?
    public var createdAt: Date
    public var updatedAt: Date

    public init(_ tester: Account) {
        let settings = tester.sandbox ?? SandboxSettings()
        id = tester.id
        email = tester.email
        firstName = tester.firstName
        lastName = tester.lastName
        storefront = tester.storefront
        interruptPurchases = settings.interruptPurchases
        askToBuy = settings.askToBuy
        renewalRate = settings.renewalRate
        paymentOutcome = tester.paymentOutcome
        purchaseHistoryClearedAt = settings.purchaseHistoryClearedAt
        createdAt = tester.createdAt
        updatedAt = tester.updatedAt
    }
}

public struct TesterList: Codable, Sendable {
    public var testers: [TesterResource]
    /// With `limit`: how many there are, and the offset of the next page (none after the last).
    public var total: Int?
    public var nextOffset: Int?

    public init(testers: [TesterResource], total: Int? = nil, nextOffset: Int? = nil) {
        self.testers = testers
        self.total = total
        self.nextOffset = nextOffset
    }
}

public struct KeyResource: Codable, Sendable {
    public var keyId: String
    public var name: String
    public var bundleId: String
    public var status: String
    public var createdAt: Date
    public var revokedAt: Date?
    /// Only in the answer that created the key.
    public var issuerId: String?
    /// Only in the answer that created the key: PKCS#8 PEM, never shown again.
    public var privateKey: String?

    public init(_ key: InAppPurchaseKey, bundleId: String, issuerId: String? = nil, privateKey: String? = nil) {
        keyId = key.id
        name = key.name
        self.bundleId = bundleId
        status = key.revokedAt == nil ? "active" : "revoked"
        createdAt = key.createdAt
        revokedAt = key.revokedAt
        self.issuerId = issuerId
        self.privateKey = privateKey
    }
}

public struct KeyList: Codable, Sendable {
    public var issuerId: String
    public var keys: [KeyResource]

    public init(issuerId: String, keys: [KeyResource]) {
        self.issuerId = issuerId
        self.keys = keys
    }
}

/// The Paid Apps agreement as answered: its status, what it still needs, and the business details on file with
/// numbers masked (only their last four characters exist).
public struct AgreementResource: Codable, Sendable {
    public struct BankAccountResource: Codable, Sendable {
        public var holderName: String
        /// "•••• 6819".
        public var accountNumber: String
        public var currency: String
    }

    public struct TaxInformationResource: Codable, Sendable {
        public var form: String
        /// "•••• 6789".
        public var taxId: String
    }

    public var status: PaidAppsAgreement.Status
    /// What is missing before the agreement is active: `terms`, `legalEntity`, `bankAccount`, `taxInformation`.
    public var missing: [PaidAppsAgreement.Requirement]
    /// When the terms were accepted.
    public var acceptedAt: Date?
    public var legalEntity: LegalEntity?
    public var bankAccount: BankAccountResource?
    public var taxInformation: TaxInformationResource?
    /// When the Small Business Program enrolment took effect; absent when not enrolled.
    public var smallBusinessProgramSince: Date?
    /// The developer's vendor number, as in reports.
    public var vendorNumber: String?

    public init(_ agreement: PaidAppsAgreement, vendorNumber: String? = nil) {
        status = agreement.status
        missing = agreement.missing
        acceptedAt = agreement.acceptedAt
        legalEntity = agreement.legalEntity
        bankAccount = agreement.bankAccount.map {
            BankAccountResource(holderName: $0.holderName, accountNumber: $0.maskedNumber, currency: $0.currency)
        }
        taxInformation = agreement.taxInformation.map {
            TaxInformationResource(form: $0.form.rawValue, taxId: $0.maskedTaxId)
        }
        smallBusinessProgramSince = agreement.smallBusinessProgramSince
        self.vendorNumber = vendorNumber
    }
}

public struct AccountResource: Codable, Sendable {
    public var id: UUID
    public var email: String
    public var firstName: String
    public var lastName: String
    public var storefront: String
    public var paymentOutcome: PaymentOutcome
    public var createdAt: Date
    public var updatedAt: Date

    public init(_ account: Account) {
        id = account.id
        email = account.email
        firstName = account.firstName
        lastName = account.lastName
        storefront = account.storefront
        paymentOutcome = account.paymentOutcome
        createdAt = account.createdAt
        updatedAt = account.updatedAt
    }
}

public struct AccountList: Codable, Sendable {
    public var accounts: [AccountResource]
    /// With `limit`: how many there are, and the offset of the next page (none after the last).
    public var total: Int?
    public var nextOffset: Int?

    public init(accounts: [AccountResource], total: Int? = nil, nextOffset: Int? = nil) {
        self.accounts = accounts
        self.total = total
        self.nextOffset = nextOffset
    }
}

/// What an import did, by id: `group:<reference name>` and `product:<product id>`.
public struct CatalogImportSummary: Codable, Sendable {
    public var created: [String] = []
    public var updated: [String] = []
    public var unchanged: [String] = []
    /// What the file holds that Kiosk kept, changed or will not sell in production, each with its path in the file.
    public var warnings: [CatalogFileWarning] = []

    public init() {}
}

/// One offer code and its state: `available`, or `redeemed` with who, when and the transaction.
public struct OfferCodeResource: Codable, Sendable {
    public var code: String
    public var productId: String
    public var referenceName: String
    public var paymentMode: OfferPaymentMode
    public var period: String
    public var numberOfPeriods: Int
    public var pricing: Pricing
    public var createdAt: Date
    public var state: String
    public var redeemedAt: Date?
    public var redeemedByAccountId: UUID?
    public var transactionId: Int64?

    public init(_ code: OfferCode) {
        self.code = code.code
        productId = code.productId
        referenceName = code.referenceName
        paymentMode = code.paymentMode
        period = code.period.iso8601
        numberOfPeriods = code.numberOfPeriods
        pricing = code.pricing
        createdAt = code.createdAt
        state = code.redemption == nil ? "available" : "redeemed"
        redeemedAt = code.redemption?.redeemedAt
        redeemedByAccountId = code.redemption?.accountId
        transactionId = code.redemption?.transactionId
    }
}

public struct OfferCodeList: Codable, Sendable {
    public var offerCodes: [OfferCodeResource]

    public init(offerCodes: [OfferCodeResource]) {
        self.offerCodes = offerCodes
    }
}

/// `GET /tax-rules`: the rule in force in every storefront now, and the operator's rules with their dates.
public struct TaxRuleList: Codable, Sendable {
    public var inForce: [TaxRule]
    public var configured: [TaxRule]

    public init(inForce: [TaxRule], configured: [TaxRule]) {
        self.inForce = inForce
        self.configured = configured
    }
}

/// `GET /money/events`: what each purchase, renewal, refund and reversal in a span of time was worth.
public struct MoneyEventList: Codable, Sendable {
    public var environment: StoreEnvironment
    public var from: Date
    public var to: Date
    public var events: [MoneyEvent]

    public init(environment: StoreEnvironment, from: Date, to: Date, events: [MoneyEvent]) {
        self.environment = environment
        self.from = from
        self.to = to
        self.events = events
    }
}

/// A team key of the App Store Connect API; `issuerId` and `privateKey` only in the answer that created it.
public struct TeamKeyResource: Codable, Sendable {
    public var keyId: String
    public var name: String
    public var roles: [TeamRole]
    public var status: String
    public var createdAt: Date
    public var revokedAt: Date?
    public var issuerId: String?
    /// PKCS#8 PEM, as the `.p8` App Store Connect lets you download once; never shown again.
    public var privateKey: String?

    public init(_ key: TeamAPIKey, issuerId: String? = nil, privateKey: String? = nil) {
        keyId = key.id
        name = key.name
        roles = key.roles
        status = key.revokedAt == nil ? "active" : "revoked"
        createdAt = key.createdAt
        revokedAt = key.revokedAt
        self.issuerId = issuerId
        self.privateKey = privateKey
    }
}

/// `GET /api-keys`: the team keys, with the issuer id their tokens name and the vendor number reports need.
public struct TeamKeyList: Codable, Sendable {
    public var issuerId: String
    public var vendorNumber: String
    public var keys: [TeamKeyResource]

    public init(issuerId: String, vendorNumber: String, keys: [TeamKeyResource]) {
        self.issuerId = issuerId
        self.vendorNumber = vendorNumber
        self.keys = keys
    }
}

/// An exchange rate as the console shows it: `usdPerUnit` as a decimal.
public struct ExchangeRateResource: Codable, Sendable {
    public var currency: String
    public var effectiveFrom: Date
    public var usdPerUnit: String

    public init(_ rate: ExchangeRate) {
        currency = rate.currency
        effectiveFrom = rate.effectiveFrom
        usdPerUnit = ExchangeRate.decimal(micros: rate.usdMicros)
    }
}

/// `GET /exchange-rates`: the configured rates, and the currency charts are converted to.
public struct ExchangeRateList: Codable, Sendable {
    public var reportingCurrency: String
    public var rates: [ExchangeRateResource]

    public init(reportingCurrency: String, rates: [ExchangeRateResource]) {
        self.reportingCurrency = reportingCurrency
        self.rates = rates
    }
}

/// A console user, never with their password hash; `temporaryPassword` only in the answer that made it.
public struct ConsoleUserResource: Codable, Sendable {
    public var email: String
    public var name: String
    public var roles: [TeamRole]
    /// "active", "disabled", or "invited" (a temporary password not yet replaced).
    public var status: String
    public var createdAt: Date
    /// When the temporary password stops signing in; only while the status is "invited".
    public var temporaryPasswordExpiresAt: Date?
    public var temporaryPassword: String?

    public init(_ user: ConsoleUser, temporaryPassword: String? = nil) {
        email = user.email
        name = user.name
        roles = user.roles
        status = user.disabledAt != nil ? "disabled" : user.passwordIsTemporary ? "invited" : "active"
        createdAt = user.createdAt
        temporaryPasswordExpiresAt = user.disabledAt == nil ? user.temporaryPasswordExpiresAt : nil
        self.temporaryPassword = temporaryPassword
    }
}

/// `GET /console-users`.
public struct ConsoleUserList: Codable, Sendable {
    public var users: [ConsoleUserResource]

    public init(users: [ConsoleUserResource]) { self.users = users }
}
