/// Whether clients can see and buy a product in one storefront and environment, with every reason they cannot.
///
/// This is the console's answer to "why does my products request return zero products?" (often: the Paid Apps
/// agreement was not complete). A product is available only when it is not deleted, belongs to the app, is cleared
/// for sale, has complete metadata, (in production) has nothing App Store review would refuse, is in a review state the environment accepts (production: Approved; sandbox:
/// Ready to Submit, Waiting for Review or Approved, as at Apple), is not removed from sale, the Paid Apps agreement
/// is active, and it has a price in the storefront. All failing conditions are listed, not just the first.
///
/// ```swift
/// let availability = ProductAvailability.evaluate(
///     product: product, app: app, agreement: agreement, environment: .sandbox, storefront: usa)
/// if !availability.isAvailable { print(availability.reasons.map(\.message)) }
/// ```
public struct ProductAvailability: Codable, Sendable, Hashable {
    /// Every reason the product is unavailable, in a fixed order; empty when it is available.
    public var reasons: [UnavailabilityReason]

    /// True when nothing keeps the product from clients.
    public var isAvailable: Bool { reasons.isEmpty }

    /// An availability with these reasons.
    public init(reasons: [UnavailabilityReason]) {
        self.reasons = reasons
    }

    /// The review states in which `environment` offers a product.
    public static func acceptedReviewStates(in environment: StoreEnvironment) -> Set<ReviewState> {
        switch environment {
        case .production: [.approved]
        case .sandbox: [.readyToSubmit, .waitingForReview, .approved]
        }
    }

    /// Evaluates every availability condition of `product` of `app` in `storefront` and `environment`.
    public static func evaluate(
        product: Product, app: App, agreement: PaidAppsAgreement, environment: StoreEnvironment,
        storefront: Storefront
    ) -> ProductAvailability {
        var reasons: [UnavailabilityReason] = []
        let id = product.productId
        if product.deletedAt != nil {
            reasons.append(
                UnavailabilityReason(
                    code: "product_deleted", message: "The product \(id) was deleted.",
                    fix: "Create a product with a new product id; a deleted id can never be used again."))
        }
        if product.appId != app.id {
            reasons.append(
                UnavailabilityReason(
                    code: "wrong_app", message: "The product \(id) belongs to another app than \(app.bundleId).",
                    fix: "Request the product from the app that owns it, or create it in \(app.bundleId)."))
        }
        if !product.clearedForSale {
            reasons.append(
                UnavailabilityReason(
                    code: "not_cleared_for_sale", message: "The product \(id) is not cleared for sale.",
                    fix: "Turn on \"Cleared for Sale\" for the product in the console."))
        }
        let missing = product.missingMetadata()
        if !missing.isEmpty {
            reasons.append(
                UnavailabilityReason(
                    code: "missing_metadata",
                    message: "The product \(id) is missing metadata: \(missing.joined(separator: "; ")).",
                    fix: "Add what is missing in the console or the catalog file."))
        }
        if product.reviewState == .developerRemovedFromSale {
            reasons.append(
                UnavailabilityReason(
                    code: "removed_from_sale", message: "The product \(id) was removed from sale by the developer.",
                    fix: "Restore the product to sale in the console."))
        } else if !acceptedReviewStates(in: environment).contains(product.reviewState) {
            reasons.append(
                UnavailabilityReason(
                    code: "not_approved",
                    message: "The product \(id) is \(product.reviewState.displayName); the production store needs "
                        + "Approved, while the sandbox accepts Ready to Submit, Waiting for Review or Approved.",
                    fix: environment == .production
                        ? "Submit the product for review and have it approved."
                        : "Complete the product's metadata so it becomes Ready to Submit."))
        }
        let findings = environment == .production ? CatalogValidator.reviewFindings(of: product) : []
        if !findings.isEmpty {
            reasons.append(
                UnavailabilityReason(
                    code: "review_findings",
                    message: "App Store review would refuse the product \(id): "
                        + findings.map(\.message).joined(separator: " ")
                        + " The sandbox sells it; production does not.",
                    fix: "Correct the product's texts and ids in the console or the catalog file."))
        }
        let agreementNeeds = agreement.missing
        if !agreementNeeds.isEmpty {
            reasons.append(
                UnavailabilityReason(
                    code: "agreement_not_active",
                    message: "The Paid Apps agreement is pending (it still needs "
                        + PaidAppsAgreement.Requirement.sentence(agreementNeeds)
                        + "), so the store offers no products at all: a products request returns zero products.",
                    fix: "Run `\(PaidAppsAgreement.Requirement.command(supplying: agreementNeeds))`."))
        }
        if let territories = product.territoryAvailability, !territories.includes(storefront) {
            reasons.append(
                UnavailabilityReason(
                    code: "not_available_in_territory",
                    message: "The product \(id) is not offered in \(storefront.name) (\(storefront.code)): its "
                        + "availability lists \(territories.territories.count) other territories.",
                    fix: "Add \(storefront.code) to the product's available territories."))
        }
        if product.pricing.price(in: storefront) == nil {
            reasons.append(
                UnavailabilityReason(
                    code: "no_price_in_storefront",
                    message: "The product \(id) has no price in \(storefront.name) (\(storefront.code), "
                        + "\(storefront.currency.code)).",
                    fix: "Give the product a price tier from 1 to 20 or a custom price for \(storefront.code)."))
        }
        return ProductAvailability(reasons: reasons)
    }
}
