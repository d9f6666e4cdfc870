import Foundation

// Reading `.storekit` files with Xcode's own leniency: optional keys may be absent or `null`, texts may be empty,
// keys Kiosk does not know are kept (and written back on export) with a warning, and every problem of a file is
// reported at once with its path in the user's file and its product id.

extension StoreKitConfiguration {
    /// The newest format version whose structure Kiosk knows; newer files are read on a best-effort basis.
    public static let newestKnownVersion = Version(major: 5, minor: 0)

    /// A file as read: the configuration, and what the reader kept, defaulted or mapped.
    public struct Reading: Sendable {
        public var configuration: StoreKitConfiguration
        public var warnings: [CatalogFileWarning]
    }

    /// Reads a `.storekit` file as Xcode does.
    ///
    /// - Throws: `KioskError` `invalid_storekit_file` for the first problem, with every other one in `additional`;
    ///   each names its path in the file (`subscriptionGroups[0].subscriptions[2].recurringSubscriptionPeriod`), its
    ///   product id and a fix. Broken JSON is one error naming the line and column.
    public static func read(from data: Data) throws(KioskError) -> Reading {
        let log = CatalogFileLog(errorCode: errorCode)
        let configuration = try read(from: data, log: log)
        try log.throwErrors()
        return Reading(configuration: configuration, warnings: log.warnings)
    }

    /// Reads what can be read of a file, recording every problem in `log`; throws only for broken JSON.
    static func read(from data: Data, log: CatalogFileLog) throws(KioskError) -> StoreKitConfiguration {
        let root = FileNode(
            root: try CatalogFileLog.parse(data, errorCode: errorCode, fileKind: ".storekit file"), log: log)
        guard root.requireObject() else { return StoreKitConfiguration(identifier: "") }
        // The version first: it decides how the rest is read and explains what follows.
        let version = readVersion(root["version"])
        return StoreKitConfiguration(
            identifier: root["identifier"].string(required: false) ?? "",
            products: root["products"].elements().map { ProductEntry(reading: $0, list: .products) },
            nonRenewingSubscriptions: root["nonRenewingSubscriptions"].elements().map {
                ProductEntry(reading: $0, list: .nonRenewingSubscriptions)
            },
            subscriptionGroups: root["subscriptionGroups"].elements().map(Group.init(reading:)),
            settings: readSettings(root["settings"]),
            appPolicies: root["appPolicies"].value.flatMap { $0 == .null ? nil : $0 },
            subscriptionOffersKeyPair: root["subscriptionOffersKeyPair"].value.flatMap { $0 == .null ? nil : $0 },
            version: version,
            extras: root.unknownMembers(known: topLevelKeys, what: "the file"))
    }

    static let topLevelKeys: Set<String> = [
        "appPolicies", "identifier", "nonRenewingSubscriptions", "products", "settings", "subscriptionGroups",
        "subscriptionOffersKeyPair", "version",
    ]

    private static func readVersion(_ node: FileNode) -> Version {
        guard !node.isMissing else {
            node.warning(
                "version_assumed", "The file has no version; it is read as version 1.0, Xcode's first format.",
                fix: "Save the file again in Xcode to give it a version.")
            return Version(major: 1, minor: 0)
        }
        guard node.requireObject(), let major = node["major"].integer(),
            let minor = node["minor"].integer(required: false)
        else { return Version(major: 1, minor: 0) }
        let version = Version(major: major, minor: minor)
        if major < 1 {
            node["major"].error(
                "Format version \(major) does not exist; Xcode's formats start at 1.",
                fix: "Save the file again in Xcode.")
        } else if major > newestKnownVersion.major {
            node.warning(
                "newer_version",
                "Format version \(major).\(minor) is newer than Kiosk knows (\(newestKnownVersion.major).x); it is "
                    + "read on a best-effort basis, and keys Kiosk does not know are kept and reported.")
        }
        return version
    }

    private static func readSettings(_ node: FileNode) -> [String: JSONValue] {
        guard !node.isMissing, node.requireObject(), case .object(let members) = node.value else { return [:] }
        return members
    }
}

extension StoreKitConfiguration.ProductEntry {
    /// The list of the file a product is read from, which decides the types it may have.
    enum List: String {
        case products, nonRenewingSubscriptions, subscriptions

        var allowed: [StoreKitConfiguration.ProductKind] {
            switch self {
            case .products: [.consumable, .nonConsumable]
            case .nonRenewingSubscriptions: [.nonRenewingSubscription]
            case .subscriptions: [.recurringSubscription]
            }
        }
    }

    static let productKeys: Set<String> = [
        "displayPrice", "familyShareable", "internalID", "localizations", "productID", "referenceName", "type",
    ]
    static let subscriptionKeys: Set<String> = [
        "adHocOffers", "billingPlans", "codeOffers", "groupNumber", "introductoryOffer", "introductoryOffers",
        "recurringSubscriptionPeriod", "subscriptionGroupID", "winbackOffers",
    ]

    /// Reads a product of `list`; problems are recorded in the node's log.
    init(reading raw: FileNode, list: List) {
        let productID = raw["productID"].string() ?? ""
        let node = raw.about(productID.isEmpty ? nil : productID)
        if productID.isEmpty, raw["productID"].value != nil {
            node["productID"].error("The product id is empty.", fix: "Give the product its product id.")
        }
        _ = node.requireObject()
        let typeNode = node["type"]
        var type = list.allowed[0]
        if let text = typeNode.string() {
            if let kind = StoreKitConfiguration.ProductKind(rawValue: text) {
                if list.allowed.contains(kind) {
                    type = kind
                } else {
                    let allowed = list.allowed.map { "'\($0.rawValue)'" }.joined(separator: " or ")
                    typeNode.error(
                        "A '\(text)' product cannot be in '\(list.rawValue)' (expected \(allowed)).",
                        fix: "Move the product to the list of its type, or correct its type.")
                }
            } else {
                let known = StoreKitConfiguration.ProductKind.allCases.map { "'\($0.rawValue)'" }
                typeNode.error(
                    "'\(text)' is not a product type.", fix: "Use one of \(known.joined(separator: ", ")).")
            }
        }
        var referenceName = node["referenceName"].string(required: false) ?? ""
        if referenceName.isEmpty {
            referenceName = productID
            node["referenceName"].warning(
                "reference_name_defaulted", "The product has no reference name; its product id is used.",
                fix: "Give it a reference name in Xcode.")
        }
        self.init(
            displayPrice: node["displayPrice"].string() ?? "",
            familyShareable: node["familyShareable"].bool(required: false) ?? false,
            internalID: node["internalID"].string(required: false) ?? "",
            localizations: node["localizations"].elements().map(StoreKitConfiguration.Localization.init(reading:)),
            productID: productID, referenceName: referenceName, type: type)
        let isSubscription = type == .recurringSubscription
        extras = node.unknownMembers(
            known: isSubscription ? Self.productKeys.union(Self.subscriptionKeys) : Self.productKeys,
            what: isSubscription ? "a subscription" : "a product of this type")
        guard isSubscription else { return }
        let periodNode = node["recurringSubscriptionPeriod"]
        if let period = periodNode.string() {
            recurringSubscriptionPeriod = SubscriptionDuration(rawValue: period)
            if recurringSubscriptionPeriod == nil {
                let allowed = SubscriptionDuration.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
                periodNode.error("'\(period)' is not a renewal period.", fix: "Use one of \(allowed).")
            }
        }
        if let level = node["groupNumber"].integer(required: false) {
            groupNumber = level
        } else {
            groupNumber = 1
            node["groupNumber"].warning(
                "level_defaulted", "The subscription has no level in its group (groupNumber); level 1 is used.",
                fix: "Set its level in Xcode's subscription group editor.")
        }
        subscriptionGroupID = node["subscriptionGroupID"].string(required: false)
        let introductory = node["introductoryOffer"]
        introductoryOffer = introductory.isMissing ? nil : StoreKitConfiguration.Offer(reading: introductory)
        let offers = node["introductoryOffers"]
        introductoryOffers = offers.isMissing ? nil : offers.elements().map { StoreKitConfiguration.Offer(reading: $0) }
        adHocOffers = node["adHocOffers"].elements().map { StoreKitConfiguration.Offer(reading: $0) }
        codeOffers = node["codeOffers"].elements().map { StoreKitConfiguration.Offer(reading: $0) }
        let winBack = node["winbackOffers"]
        winbackOffers =
            winBack.isMissing ? nil : winBack.elements().map(StoreKitConfiguration.WinBackEntry.init(reading:))
        billingPlans = node["billingPlans"].isMissing ? nil : node["billingPlans"].elements().compactMap(\.value)
    }
}

extension StoreKitConfiguration.Offer {
    static let keys: Set<String> = [
        "billingPlanType", "displayPrice", "eligibility", "internalID", "isStackable", "numberOfPeriods", "offerID",
        "paymentMode", "referenceName", "subscriptionPeriod",
    ]

    /// Reads an offer; problems are recorded in the node's log. Keys outside ``keys`` and `alsoKnown` are kept
    /// as extras.
    init(reading node: FileNode, alsoKnown: Set<String> = []) {
        _ = node.requireObject()
        var mode = StoreKitConfiguration.PaymentMode.free
        if let text = node["paymentMode"].string() {
            if let known = StoreKitConfiguration.PaymentMode(rawValue: text) {
                mode = known
            } else {
                let allowed = StoreKitConfiguration.PaymentMode.allCases.map { "'\($0.rawValue)'" }
                node["paymentMode"].error(
                    "'\(text)' is not a payment mode.", fix: "Use one of \(allowed.joined(separator: ", ")).")
            }
        }
        var period = OfferPeriod(count: 1, unit: .month)
        if let text = node["subscriptionPeriod"].string() {
            if let parsed = OfferPeriod(iso8601: text) {
                period = parsed
            } else {
                node["subscriptionPeriod"].error(
                    "'\(text)' is not an offer period.", fix: "Use a period such as P3D, P1W, P1M or P1Y.")
            }
        }
        let eligibility = node["eligibility"]
        self.init(
            internalID: node["internalID"].string(required: false) ?? "",
            offerID: node["offerID"].string(required: false),
            referenceName: node["referenceName"].string(required: false),
            paymentMode: mode, subscriptionPeriod: period,
            numberOfPeriods: node["numberOfPeriods"].integer(required: false),
            displayPrice: node["displayPrice"].string(required: false),
            billingPlanType: node["billingPlanType"].string(required: false),
            eligibility: eligibility.isMissing ? nil : eligibility.elements().compactMap { $0.string() },
            isStackable: node["isStackable"].bool(required: false))
        extras = node.unknownMembers(known: Self.keys.union(alsoKnown), what: "an offer")
    }
}

extension StoreKitConfiguration.WinBackEntry {
    /// The keys of a win-back offer beyond an offer's.
    static let keys: Set<String> = [
        "isEligible", "customerEligibilityPaidSubscriptionDurationInMonths",
        "customerEligibilityTimeSinceLastSubscribedInMonths", "customerEligibilityWaitBetweenOffersInMonths",
        "startDate", "endDate", "priority",
    ]

    /// Reads a win-back offer; problems are recorded in the node's log.
    init(reading node: FileNode) {
        self.init(offer: StoreKitConfiguration.Offer(reading: node, alsoKnown: Self.keys))
        isEligible = node["isEligible"].bool(required: false)
        paidSubscriptionDurationInMonths = node["customerEligibilityPaidSubscriptionDurationInMonths"].integer(
            required: false)
        let range = node["customerEligibilityTimeSinceLastSubscribedInMonths"]
        if !range.isMissing, range.requireObject(), let minimum = range["minimum"].integer() {
            timeSinceLastSubscribedInMonths = KioskCore.WinBackOffer.MonthRange(
                minimum: minimum, maximum: range["maximum"].integer(required: false))
        }
        waitBetweenOffersInMonths = node["customerEligibilityWaitBetweenOffersInMonths"].integer(required: false)
        startDate = Self.date(node["startDate"])
        endDate = Self.date(node["endDate"])
        if let text = node["priority"].string(required: false) {
            priority = KioskCore.WinBackOffer.Priority(rawValue: text.lowercased())
            if priority == nil {
                node["priority"].error("'\(text)' is not a win-back offer priority.", fix: "Use HIGH or NORMAL.")
            }
        }
    }

    /// An ISO 8601 date or date-time (``Foundation/Date/init(iso8601DateOrDateTime:)``); nil when absent, nil and an
    /// error for anything else.
    private static func date(_ node: FileNode) -> Date? {
        guard let text = node.string(required: false) else { return nil }
        guard let date = Date(iso8601DateOrDateTime: text) else {
            node.error(
                "'\(text.prefix(40))' is not a date.",
                fix: "Write an ISO 8601 date such as 2026-01-31 or date-time such as 2026-01-31T12:00:00Z.")
            return nil
        }
        return date
    }
}

extension StoreKitConfiguration.Localization {
    /// Reads a product's localization; absent or `null` texts read as empty, as Xcode writes a new product's.
    init(reading node: FileNode) {
        _ = node.requireObject()
        self.init(
            locale: node["locale"].string() ?? "",
            displayName: node["displayName"].string(required: false) ?? "",
            description: node["description"].string(required: false) ?? "")
        extras = node.unknownMembers(known: ["description", "displayName", "locale"], what: "a localization")
    }
}

extension StoreKitConfiguration.GroupLocalization {
    /// Reads a group's localization.
    init(reading node: FileNode) {
        _ = node.requireObject()
        self.init(
            locale: node["locale"].string() ?? "",
            displayName: node["displayName"].string(required: false) ?? "",
            description: node["description"].string(required: false) ?? "",
            customAppName: node["customAppName"].string(required: false))
        extras = node.unknownMembers(
            known: ["customAppName", "description", "displayName", "locale"], what: "a group localization")
    }
}

extension StoreKitConfiguration.Group {
    /// Reads a subscription group and its subscriptions.
    init(reading node: FileNode) {
        _ = node.requireObject()
        self.init(
            id: node["id"].string(required: false) ?? "",
            localizations: node["localizations"].elements().map(StoreKitConfiguration.GroupLocalization.init(reading:)),
            name: node["name"].string() ?? "",
            subscriptions: node["subscriptions"].elements().map {
                StoreKitConfiguration.ProductEntry(reading: $0, list: .subscriptions)
            })
        extras = node.unknownMembers(
            known: ["id", "localizations", "name", "subscriptions"], what: "a subscription group")
    }
}
