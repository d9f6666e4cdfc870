import Foundation

extension CatalogDocument {
    /// A product as the catalog file writes it: everything but store-assigned ids and timestamps, with the
    /// subscription group named by reference name.
    ///
    /// An idempotent import compares each entry with `ProductEntry(currentProduct, groupName:)` through
    /// ``matches(_:)`` and writes only products that differ, so importing the same file twice changes nothing.
    public struct ProductEntry: Sendable, Hashable {
        /// An auto-renewable product's group (by reference name) and level in it (1 = highest service).
        public struct Membership: Sendable, Hashable {
            /// The group's reference name.
            public var group: String
            /// The level in the group; 1 is the highest level of service.
            public var level: Int

            /// A membership.
            public init(group: String, level: Int) {
                self.group = group
                self.level = level
            }
        }

        /// The permanent product id.
        public var productId: String
        /// The name only the developer sees.
        public var referenceName: String
        /// The product type.
        public var type: ProductType
        /// The price tier and/or custom prices per storefront.
        public var pricing: Pricing
        /// Names and descriptions, ordered by locale.
        public var localizations: [ProductLocalization]
        /// Whether the product is for sale.
        public var clearedForSale: Bool
        /// Whether family members share the purchase.
        public var familyShareable: Bool
        /// The review state, or nil to let the importer decide (new products) or keep the current one.
        public var reviewState: ReviewState?
        /// The group membership of an auto-renewable product.
        public var subscription: Membership?
        /// The subscription period (auto-renewable: required; non-renewing: optional).
        public var duration: SubscriptionDuration?
        /// Introductory offers, the one for all storefronts first, then by storefront.
        public var introductoryOffers: [IntroductoryOffer]
        /// Promotional offers, ordered by identifier.
        public var promotionalOffers: [PromotionalOffer]
        /// Win-back offers, ordered by identifier.
        public var winBackOffers: [WinBackOffer]
        /// The monthly plan with a 12-month commitment of a one-year auto-renewable.
        public var monthlyPlan: MonthlyPlan?
        /// The territories the product is offered in; nil for every territory where it has a price.
        public var territoryAvailability: TerritoryAvailability?

        /// A product entry; localizations and offers are put in the file's deterministic order.
        public init(
            productId: String, referenceName: String, type: ProductType, pricing: Pricing = Pricing(),
            localizations: [ProductLocalization] = [], clearedForSale: Bool = true, familyShareable: Bool = false,
            reviewState: ReviewState? = nil, subscription: Membership? = nil, duration: SubscriptionDuration? = nil,
            introductoryOffers: [IntroductoryOffer] = [], promotionalOffers: [PromotionalOffer] = [],
            winBackOffers: [WinBackOffer] = [], monthlyPlan: MonthlyPlan? = nil,
            territoryAvailability: TerritoryAvailability? = nil
        ) {
            self.productId = productId
            self.referenceName = referenceName
            self.type = type
            self.pricing = pricing
            self.localizations = localizations.sorted { $0.locale < $1.locale }
            self.clearedForSale = clearedForSale
            self.familyShareable = familyShareable
            self.reviewState = reviewState
            self.subscription = subscription
            self.duration = duration
            self.introductoryOffers = introductoryOffers.sorted { ($0.storefront ?? "") < ($1.storefront ?? "") }
            self.promotionalOffers = promotionalOffers.sorted { $0.identifier < $1.identifier }
            self.winBackOffers = winBackOffers.sorted { $0.identifier < $1.identifier }
            self.monthlyPlan = monthlyPlan
            self.territoryAvailability = territoryAvailability
        }

        /// The entry that describes an existing product.
        ///
        /// - Parameters:
        ///   - product: The product.
        ///   - groupName: The reference name of a group id; a membership whose group it does not know is left out.
        public init(_ product: Product, groupName: (SubscriptionGroup.ID) -> String?) {
            let membership = product.subscription.flatMap { membership in
                groupName(membership.groupId).map { Membership(group: $0, level: membership.level) }
            }
            self.init(
                productId: product.productId, referenceName: product.referenceName, type: product.type,
                pricing: product.pricing, localizations: product.localizations,
                clearedForSale: product.clearedForSale, familyShareable: product.familyShareable,
                reviewState: product.reviewState, subscription: membership, duration: product.duration,
                introductoryOffers: product.introductoryOffers, promotionalOffers: product.promotionalOffers,
                winBackOffers: product.winBackOffers, monthlyPlan: product.monthlyPlan,
                territoryAvailability: product.territoryAvailability)
        }

        /// Whether importing this entry over `current` (the entry of the stored product) would change nothing.
        /// A nil `reviewState` here means "keep the current one" and so matches any state.
        public func matches(_ current: ProductEntry) -> Bool {
            var wanted = self
            if wanted.reviewState == nil { wanted.reviewState = current.reviewState }
            return wanted == current
        }

        /// A new product made from this entry.
        ///
        /// - Parameters:
        ///   - appId: The app the product belongs to.
        ///   - groupId: The id of the group with a reference name (groups are imported first).
        ///   - defaultReviewState: The state when the entry names none (a `.storekit` import uses Ready to Submit).
        ///   - now: The creation time.
        /// - Throws: `KioskError` `unknown_subscription_group` when `groupId` does not know the entry's group.
        public func product(
            appId: App.ID, groupId: (String) -> SubscriptionGroup.ID?, defaultReviewState: ReviewState, now: Date
        ) throws(KioskError) -> Product {
            Product(
                appId: appId, productId: productId, referenceName: referenceName, type: type, pricing: pricing,
                localizations: localizations, clearedForSale: clearedForSale,
                reviewState: reviewState ?? defaultReviewState, familyShareable: familyShareable,
                subscription: try membership(groupId: groupId), duration: duration,
                introductoryOffers: introductoryOffers, promotionalOffers: promotionalOffers,
                winBackOffers: winBackOffers, monthlyPlan: monthlyPlan, territoryAvailability: territoryAvailability,
                createdAt: now, updatedAt: now)
        }

        /// `existing` updated to what this entry says; app, creation time and (when the entry names none) review
        /// state stay.
        ///
        /// - Throws: `KioskError` `unknown_subscription_group` when `groupId` does not know the entry's group.
        public func applied(
            to existing: Product, groupId: (String) -> SubscriptionGroup.ID?, now: Date
        ) throws(KioskError) -> Product {
            var product = existing
            product.referenceName = referenceName
            product.type = type
            product.pricing = pricing
            product.localizations = localizations
            product.clearedForSale = clearedForSale
            product.reviewState = reviewState ?? existing.reviewState
            product.familyShareable = familyShareable
            product.subscription = try membership(groupId: groupId)
            product.duration = duration
            product.introductoryOffers = introductoryOffers
            product.promotionalOffers = promotionalOffers
            product.winBackOffers = winBackOffers
            product.monthlyPlan = monthlyPlan
            product.territoryAvailability = territoryAvailability
            product.updatedAt = now
            return product
        }

        private func membership(
            groupId: (String) -> SubscriptionGroup.ID?
        ) throws(KioskError) -> SubscriptionMembership? {
            guard let subscription else { return nil }
            guard let id = groupId(subscription.group) else {
                throw KioskError(
                    .unknownSubscriptionGroup,
                    "Product '\(productId)' names subscription group '\(subscription.group)', which does not exist.",
                    field: "subscription.group", fix: "Create the group first or correct its reference name.")
            }
            return SubscriptionMembership(groupId: id, level: subscription.level)
        }
    }
}
