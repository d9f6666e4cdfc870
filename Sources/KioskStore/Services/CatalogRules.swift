import KioskCore

/// The catalog rules of KioskCore, as the console's operations apply them: each check throws the first problem
/// as a `KioskError` whose `field` names the request field.
enum CatalogRules {
    static func validateBundleId(_ bundleId: String, field: String) throws {
        try CatalogValidator.require(CatalogValidator.validateBundleId(bundleId, field: field))
    }

    static func validateAppName(_ name: String, field: String) throws {
        try CatalogValidator.require(CatalogValidator.validateAppName(name, field: field))
    }

    /// A person's first or last name, or a key's name (`what`: "first name", "key name").
    static func validateName(_ name: String, what: String, field: String) throws {
        try CatalogValidator.require(CatalogValidator.validateName(name, what: what, field: field))
    }

    /// A product's type is fixed when it is created: every entry point that changes a product refuses another.
    static func requireSameType(_ requested: ProductType, as existing: Product) throws {
        guard requested == existing.type else {
            throw KioskError(
                .typeImmutable,
                "Product '\(existing.productId)' is \(existing.type.rawValue); a product's type cannot change.",
                field: "type", fix: "Keep the type, or create a product with a new id and the other type.")
        }
    }

    static func validateProductId(_ productId: String, field: String) throws {
        try CatalogValidator.require(CatalogValidator.validateProductId(productId, field: field))
    }

    static func validateEmail(_ email: String, field: String) throws {
        try CatalogValidator.require(CatalogValidator.validateEmail(email, field: field))
    }

    static func validatePassword(_ password: String, field: String) throws {
        try CatalogValidator.require(CatalogValidator.validatePassword(password, field: field))
    }

    /// Each URL is an absolute http(s) URL, and one the operator's `policy` lets the store send to.
    static func validateNotificationURLs(_ urls: [String], field: String, policy: OutboundURLPolicy) throws {
        for (index, url) in urls.enumerated() {
            try CatalogValidator.require(CatalogValidator.validateNotificationURL(url, field: "\(field)[\(index)]"))
            if let refusal = policy.refusal(toSet: url) {
                throw KioskError(
                    .invalidNotificationUrl, "'\(url)' is not allowed: \(refusal).", field: "\(field)[\(index)]",
                    fix: "Give the https URL of a server on the public Internet; the operator allows no other.")
            }
        }
    }

    static func requireStorefront(_ code: String, field: String) throws -> Storefront {
        guard let storefront = Storefront.named(code) else {
            throw KioskError(
                .unknownStorefront, "'\(code)' is not a storefront Kiosk knows.", field: field,
                fix: "Use an alpha-3 storefront code such as USA, CHN or JPN.")
        }
        return storefront
    }

    /// Every rule about one product. The validator prefixes fields with `product.`; requests name them bare.
    static func validateProduct(_ product: Product) throws {
        let errors = CatalogValidator.validate(product: product, field: "product").map { error in
            var error = error
            if let field = error.field, field.hasPrefix("product.") { error.field = String(field.dropFirst(8)) }
            return error
        }
        try CatalogValidator.require(errors)
    }

    static func validateGroup(_ group: SubscriptionGroup) throws {
        try CatalogValidator.require(groupProblems(group))
    }

    /// The codes of group rules only App Store review applies (the customer-facing name and its locale): an
    /// imported file keeps them as warnings.
    static let groupReviewCodes: Set<ErrorCode> = [.unknownLocale, .missingGroupName, .invalidName]

    /// Every problem of a group: its reference name, and each localization's locale and name.
    static func groupProblems(_ group: SubscriptionGroup) -> [KioskError] {
        var problems = CatalogValidator.validateReferenceName(group.referenceName, field: "referenceName")
        for (index, localization) in group.localizations.enumerated() {
            let field = "localizations[\(index)]"
            if AppStoreLocale.normalized(localization.locale) == nil {
                problems.append(
                    KioskError(
                        .unknownLocale, "'\(localization.locale)' is not an App Store Connect locale.",
                        field: "\(field).locale", fix: "Use a locale such as en_US, zh_CN or ja_JP."))
            }
            if localization.name.allSatisfy(\.isWhitespace) {
                problems.append(
                    KioskError(
                        .missingGroupName, "The group's customer-facing name is empty.", field: "\(field).name",
                        fix: "Give the group a name customers see, e.g. 'Pro'."))
            } else {
                problems += CatalogValidator.validateName(localization.name, what: "group name", field: "\(field).name")
            }
        }
        return problems
    }

    /// `en-US`, `en_us` → `en_US`; unknown locales stay as given (validation reports them).
    static func normalizedLocale(_ locale: String) -> String {
        AppStoreLocale.normalized(locale) ?? locale
    }

    /// The review state after `event`, given whether the product's metadata is complete.
    static func reviewState(of product: Product, after event: ReviewEvent) throws -> ReviewState {
        try product.reviewState.apply(event, metadataComplete: product.hasCompleteMetadata()).get()
    }
}
