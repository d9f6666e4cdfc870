import Foundation
import KioskCore
import KioskProtocol
import KioskSQL
import KioskStorage

/// A purchase the account approved: the transaction its payment answers and the server notifications it
/// caused, inserted in the purchase's database transaction; the ledger's commit delivers them.
struct CompletedPurchase: Sendable {
    var transaction: StoreTransaction
    var notifications: [ServerNotification]
}

/// A purchase the store refuses for a reason the customer can see (already subscribed): the payment fails with
/// `error`, nothing is charged.
struct PurchaseRefusal: Error, Sendable {
    var error: KioskError
}

extension PurchaseService {
    /// Buys `product` for the payment's account, charging now unless it is a subscription change that waits for
    /// the next renewal. One-time purchases (consumables, non-consumables, non-renewing subscriptions) notify
    /// `ONE_TIME_CHARGE`; auto-renewables go through ``recordSubscription(_:product:client:now:offer:in:)``, and a
    /// redeemed offer code records the transaction the payment answers.
    func purchase(
        _ payment: Payment, product: Product, client: ClientSession, now: Date, offer: RequestedOffer = .none,
        in tx: any StorageTransaction
    ) async throws -> CompletedPurchase {
        if let field = offer.fields.first(where: { $0 != "offerCode" }), product.type != .autoRenewable {
            throw PurchaseRefusal(
                error: Self.offerRefusal(
                    .invalidOfferIdentifier, .offerNotApplicable,
                    "\(product.productId) is not an auto-renewable subscription; only those have introductory, "
                        + "promotional and win-back offers.", field: field))
        }
        if offer.count > 1 {
            throw PurchaseRefusal(
                error: Self.offerRefusal(
                    .invalidOfferIdentifier, .offerConflict,
                    "A payment carries one promotional offer, offer code or win-back offer, not several: it named "
                        + "\(offer.fields.joined(separator: ", ")).", field: offer.fields[1]))
        }
        if payment.billingPlan == .monthly {
            try Self.checkMonthlyPlan(of: product, offer: offer, storefront: client.storefront)
        }
        guard product.type == .autoRenewable else {
            var redeemed: OfferTerms?
            if let offerCode = offer.offerCode {
                guard payment.quantity == 1 else {
                    throw PurchaseRefusal(
                        error: Self.offerRefusal(
                            .invalidOfferIdentifier, .quantityNotAllowed,
                            "An offer code buys one item; this payment asks for \(payment.quantity).",
                            field: "quantity"))
                }
                redeemed = try await offerCodeTerms(offerCode, product: product, client: client, now: now, in: tx)
            }
            let transaction = try await ledger.charge(
                payment, product: product, client: client, now: now, offer: redeemed, in: tx)
            if let offerCode = offer.offerCode {
                try await tx.setOfferCodeTransaction(
                    Self.normalizedOfferCode(offerCode), appId: client.app.id, accountId: client.account.id,
                    transactionId: transaction.id)
            }
            let notification = try await notifications.create(
                NotificationContent(type: .oneTimeCharge, transaction: transaction), app: client.app,
                environment: client.environment, now: now, in: tx)
            return CompletedPurchase(transaction: transaction, notifications: [notification])
        }
        let purchase = try await recordSubscription(
            payment, product: product, client: client, now: now, offer: offer, in: tx)
        if let offerCode = offer.offerCode {
            try await tx.setOfferCodeTransaction(
                Self.normalizedOfferCode(offerCode), appId: client.app.id, accountId: client.account.id,
                transactionId: purchase.transaction.id)
        }
        return purchase
    }

    /// Buys an auto-renewable: the account holds at most one subscription per group, so the purchase starts
    /// one (`SUBSCRIBED`/`INITIAL_BUY`, with the introductory offer the account is eligible for), restarts an
    /// ended one with the same original transaction (`SUBSCRIBED`/`RESUBSCRIBE`), or changes the active one
    /// (`DID_CHANGE_RENEWAL_PREF`). The `offer` asked for, a promotional offer (checked by
    /// ``promotionalTerms(_:product:payment:client:now:in:)``), an offer code (redeemed by
    /// ``offerCodeTerms(_:product:client:now:in:)``) or a win-back offer (checked by
    /// ``winBackTerms(_:product:client:now:in:)``), prices the period charged now, or, when nothing is charged
    /// now, the next renewal; such purchases notify `OFFER_REDEEMED` with the same subtype instead.
    ///
    /// A change that waits for the next renewal (a downgrade, a crossgrade to another duration, or going back to
    /// the current product) charges nothing: the payment answers `purchased` with the current period's
    /// transaction. Buying the current product again throws a ``PurchaseRefusal`` (`already_subscribed`).
    ///
    /// The payment's billing plan (``Payment/billingPlan``) decides how what is charged now is billed: under the
    /// monthly plan it is the first payment of a 12-month commitment (no offer applies). Inside a commitment only an
    /// upgrade takes effect now (it ends the commitment); every other change waits for the commitment's end, and
    /// buying the current product under the other plan changes the plan the commitment renews under (Apple's
    /// "Supporting monthly subscriptions with a 12-month commitment").
    func recordSubscription(
        _ payment: Payment, product: Product, client: ClientSession, now: Date, offer: RequestedOffer = .none,
        in tx: any StorageTransaction
    ) async throws -> CompletedPurchase {
        guard let membership = product.subscription else {
            throw KioskError(
                .productWithoutGroup, "The auto-renewable \(product.productId) belongs to no subscription group.",
                fix: "Put the product in a subscription group.")
        }
        let existing = try await tx.subscriptions(
            accountId: client.account.id, appId: client.app.id, environment: client.environment
        ).first { $0.groupId == membership.groupId }
        var redeemed: OfferTerms?
        if let discount = offer.discount {
            redeemed = try await promotionalTerms(
                discount, product: product, payment: payment, client: client, now: now, in: tx)
        } else if let signed = offer.signedPromotion {
            redeemed = try await promotionalTerms(signed, product: product, client: client, now: now, in: tx)
        } else if let offerCode = offer.offerCode {
            redeemed = try await offerCodeTerms(offerCode, product: product, client: client, now: now, in: tx)
        } else if let identifier = offer.winBackOfferId {
            redeemed = try await winBackTerms(identifier, product: product, client: client, now: now, in: tx)
        }
        // The merchant's signed decision replaces the store's own, for a purchase that starts a subscription.
        let introductoryAllowed = try await offer.introductoryEligibilityJWS.asyncMap { jws in
            try await signedIntroductoryEligibility(jws, product: product, client: client, now: now, in: tx)
        }
        guard var subscription = existing else {
            let eligible =
                if let introductoryAllowed {
                    introductoryAllowed
                } else {
                    try await isEligibleForIntroOffer(group: membership.groupId, client: client, in: tx)
                }
            return try await subscribe(
                payment, product: product, group: membership.groupId, redeemed: redeemed,
                introductoryAllowed: eligible, client: client, now: now, in: tx)
        }
        let plan = payment.billingPlan ?? .billedUpFront
        switch subscription.state {
        case .expired, .revoked:
            let introductory =
                introductoryAllowed == true && plan == .billedUpFront
                ? Self.introductoryTerms(of: product, storefront: client.storefront) : nil
            let offer = redeemed ?? introductory
            let transaction = try await ledger.charge(
                payment, product: product, client: client, now: now,
                original: (
                    subscription.originalTransactionId, try await originalPurchaseDate(of: subscription, in: tx)
                ),
                offer: offer, plan: plan, in: tx)
            subscription.startPeriod(of: transaction, offer: offer, now: now)
            subscription.renewalCount = 0
            subscription.expirationIntent = nil
            subscription.autoRenewEnabled = true
            try await tx.updateSubscription(subscription)
            return CompletedPurchase(
                transaction: transaction,
                notifications: [
                    try await notify(
                        redeemed == nil ? .subscribed : .offerRedeemed, .resubscribe, transaction, subscription,
                        client: client, now: now, in: tx)
                ])
        case .active, .billingRetry, .gracePeriod:
            return try await change(
                subscription, to: product, payment, redeemed: redeemed, client: client, now: now, in: tx)
        }
    }

    /// The first subscription of the account in the group, priced by a `redeemed` offer, else by the introductory
    /// offer when the customer may have it.
    private func subscribe(
        _ payment: Payment, product: Product, group: SubscriptionGroup.ID, redeemed: OfferTerms?,
        introductoryAllowed: Bool, client: ClientSession, now: Date, in tx: any StorageTransaction
    ) async throws -> CompletedPurchase {
        // The introductory offer is the up-front plan's (Apple: offers belong to one billing plan).
        let plan = payment.billingPlan ?? .billedUpFront
        let offer =
            redeemed
            ?? (introductoryAllowed && plan == .billedUpFront
                ? Self.introductoryTerms(of: product, storefront: client.storefront) : nil)
        let transaction = try await ledger.charge(
            payment, product: product, client: client, now: now, offer: offer, plan: plan, in: tx)
        let expiresAt = transaction.expiresDate ?? now
        let subscription = StoreSubscription(
            environment: client.environment, originalTransactionId: transaction.id, appId: client.app.id,
            accountId: client.account.id, groupId: group, productId: product.productId,
            latestTransactionId: transaction.id, autoRenewProductId: product.productId, expiresAt: expiresAt,
            nextEventAt: expiresAt, offer: offer.flatMap { $0.periodsRemaining > 0 ? $0.applied : nil },
            offerPeriodsRemaining: offer?.periodsRemaining ?? 0, commitment: transaction.commitment,
            renewalBillingPlan: plan, createdAt: now, updatedAt: now)
        try await tx.insertSubscription(subscription)
        return CompletedPurchase(
            transaction: transaction,
            notifications: [
                try await notify(
                    redeemed == nil ? .subscribed : .offerRedeemed, .initialBuy, transaction, subscription,
                    client: client, now: now, in: tx)
            ])
    }

    /// Another product of the group while subscribed: an upgrade (or same-duration crossgrade) now, a
    /// downgrade (or other-duration crossgrade) at the next renewal, or a pending change taken back. A redeemed
    /// offer prices what is charged now, or else the next renewal.
    private func change(
        _ subscription: StoreSubscription, to product: Product, _ payment: Payment, redeemed: OfferTerms?,
        client: ClientSession, now: Date, in tx: any StorageTransaction
    ) async throws -> CompletedPurchase {
        var subscription = subscription
        let changedType: NotificationType = redeemed == nil ? .didChangeRenewalPref : .offerRedeemed
        guard
            let current = try await tx.transaction(
                id: subscription.latestTransactionId, environment: client.environment)
        else {
            throw StorageError.engine(
                message: "subscription \(subscription.originalTransactionId) has no latest transaction")
        }
        let plan = payment.billingPlan ?? .billedUpFront
        if product.productId == subscription.productId {
            guard
                subscription.autoRenewProductId != product.productId || subscription.renewalBillingPlan != plan
                    || redeemed != nil
            else {
                throw PurchaseRefusal(
                    error: KioskError(
                        .alreadySubscribed,
                        "The account is already subscribed to \(product.productId) until "
                            + "\(AppleDateText.gmt(subscription.expiresAt)).", field: "productId",
                        fix: "Nothing was charged; offer another product of the group to change the subscription.",
                        storeKitCode: StoreKitErrorCode.paymentInvalid.rawValue))
            }
            // Back to the current product: the pending downgrade or crossgrade is off; an offer waits for the renewal.
            // Another plan of it applies from the renewal (after the commitment, inside one).
            subscription.autoRenewProductId = product.productId
            subscription.renewalBillingPlan = plan
            subscription.deferOffer(redeemed)
            subscription.updatedAt = now
            try await tx.updateSubscription(subscription)
            return CompletedPurchase(
                transaction: current,
                notifications: [
                    try await notify(changedType, nil, current, subscription, client: client, now: now, in: tx)
                ])
        }
        guard let currentProduct = try await tx.product(appId: client.app.id, productId: subscription.productId),
            let from = currentProduct.subscription, let to = product.subscription
        else { throw StorageError.engine(message: "product \(subscription.productId) is not in a subscription group") }
        var move = SubscriptionMove.from(from, duration: currentProduct.duration, to: to, duration: product.duration)
        if subscription.commitment != nil, case .immediate(isUpgrade: false) = move {
            // Inside a commitment only an upgrade takes effect now; a crossgrade waits for the commitment's end.
            move = .atNextRenewal(isDowngrade: false)
        }
        guard case .immediate = move else {
            if subscription.autoRenewProductId == product.productId, subscription.renewalBillingPlan == plan,
                redeemed == nil
            {
                // Already renews into it: nothing changes, nothing to tell.
                return CompletedPurchase(transaction: current, notifications: [])
            }
            subscription.autoRenewProductId = product.productId
            subscription.renewalBillingPlan = plan
            subscription.deferOffer(redeemed)
            subscription.updatedAt = now
            try await tx.updateSubscription(subscription)
            return CompletedPurchase(
                transaction: current,
                notifications: [
                    try await notify(
                        changedType, move.notificationSubtype, current, subscription, client: client, now: now,
                        in: tx)
                ])
        }
        var upgraded = current
        upgraded.isUpgraded = true
        upgraded.refundedMinorUnits = SubscriptionProration.unusedMinorUnits(
            price: current.priceMinorUnits, periodStart: current.purchaseDate, periodEnd: current.expiresDate ?? now,
            now: now)
        upgraded.modifiedAt = now
        try ledger.sign(&upgraded, bundleId: client.app.bundleId, now: now)
        try await tx.updateTransaction(upgraded)
        let transaction = try await ledger.charge(
            payment, product: product, client: client, now: now,
            original: (subscription.originalTransactionId, current.originalPurchaseDate), offer: redeemed, plan: plan,
            in: tx)
        subscription.startPeriod(of: transaction, offer: redeemed, now: now)
        try await tx.updateSubscription(subscription)
        return CompletedPurchase(
            transaction: transaction,
            notifications: [
                try await notify(
                    changedType, move.notificationSubtype, transaction, subscription, client: client, now: now,
                    in: tx)
            ])
    }

    /// Refuses a purchase under the monthly plan of a product that has none priced in `storefront`, or with an
    /// offer: Kiosk sells the monthly plan at its price (offers belong to one billing plan, and the monthly plan's
    /// are not modelled).
    static func checkMonthlyPlan(of product: Product, offer: RequestedOffer, storefront: Storefront) throws {
        guard product.monthlyPlanPrice(in: storefront) != nil else {
            throw PurchaseRefusal(error: billingPlanNotOffered(product, storefront: storefront))
        }
        if offer.count > 0, let field = offer.fields.first(where: { $0 != "introductoryOfferEligibilityJWS" }) {
            throw PurchaseRefusal(
                error: KioskError(
                    .offerNotApplicable,
                    "The monthly plan of \(product.productId) is sold at its price: Kiosk applies no offer to it, and "
                        + "the payment names one (\(field)).",
                    field: field, fix: "Buy the monthly plan without an offer, or the offer billed up front.",
                    storeKitCode: StoreKitErrorCode.invalidOfferIdentifier.rawValue))
        }
    }

    /// Why `product` cannot be bought under the monthly plan in `storefront` (`billing_plan_not_offered`): it is no
    /// auto-renewable, has no monthly plan, or its plan has no price there.
    static func billingPlanNotOffered(_ product: Product, storefront: Storefront) -> KioskError {
        let why =
            product.type != .autoRenewable
            ? "\(product.productId) is \(product.type.appleName); only a one-year auto-renewable subscription has a "
                + "monthly plan."
            : product.monthlyPlan == nil
                ? "\(product.productId) has no monthly plan with a 12-month commitment; it is billed up front only."
                : "\(product.productId)'s monthly plan has no price in \(storefront.code)."
        return KioskError(
            .billingPlanNotOffered, why, field: "billingPlanType",
            fix: "Buy it billed up front (no billingPlanType, or BILLED_UPFRONT); nothing was charged.",
            storeKitCode: StoreKitErrorCode.paymentInvalid.rawValue)
    }

    /// Apple's rule: an account may have an introductory offer in a group only if it never subscribed in it.
    func isEligibleForIntroOffer(group: SubscriptionGroup.ID, client: ClientSession, in tx: any StorageTransaction)
        async throws -> Bool
    {
        let subscriptions = try await tx.subscriptions(
            accountId: client.account.id, appId: client.app.id, environment: client.environment)
        if subscriptions.contains(where: { $0.groupId == group }) { return false }
        let transactions = try await tx.transactions(
            accountId: client.account.id, appId: client.app.id, environment: client.environment)
        return !transactions.contains { $0.subscriptionGroupId == group }
    }

    /// What the product's introductory offer in the storefront charges, if it has one with a price there.
    static func introductoryTerms(of product: Product, storefront: Storefront) -> OfferTerms? {
        IntroductoryOffer.applicable(to: product, in: storefront.code)?.schedule
            .terms(.introductory, identifier: nil, in: storefront)
    }

    /// When the subscription first started: its original transaction's date (the row's creation if that
    /// transaction was deleted by a test control).
    private func originalPurchaseDate(of subscription: StoreSubscription, in tx: any StorageTransaction) async throws
        -> Date
    {
        try await tx.transaction(id: subscription.originalTransactionId, environment: subscription.environment)?
            .originalPurchaseDate ?? subscription.createdAt
    }

    /// A subscription notification about `transaction` with the renewal info and status it now has.
    private func notify(
        _ type: NotificationType, _ subtype: NotificationSubtype?, _ transaction: StoreTransaction,
        _ subscription: StoreSubscription,
        client: ClientSession, now: Date, in tx: any StorageTransaction
    ) async throws -> ServerNotification {
        let chain = try await tx.transactions(
            originalTransactionId: transaction.originalTransactionId, appId: client.app.id,
            environment: client.environment)
        let renewalInfo = try await SubscriptionService(context: context)
            .signedRenewalInfo(for: transaction, chain: chain, now: now, in: tx)
        return try await notifications.create(
            NotificationContent(
                type: type, subtype: subtype, transaction: transaction, signedRenewalInfo: renewalInfo,
                status: subscription.state.appleStatus),
            app: client.app, environment: client.environment, now: now, in: tx)
    }
}

extension StoreSubscription {
    /// A new paid period starts with `transaction` (a resubscription or an upgrade): active in its product
    /// until it expires, renewing into the same product at the catalog price, or at the offer's while periods of
    /// it remain; billed monthly, it starts a commitment that renews into another.
    mutating func startPeriod(of transaction: StoreTransaction, offer terms: OfferTerms?, now: Date) {
        productId = transaction.productId
        latestTransactionId = transaction.id
        autoRenewProductId = transaction.productId
        state = .active
        expiresAt = transaction.expiresDate ?? now
        nextEventAt = expiresAt
        billingRetryStartedAt = nil
        gracePeriodExpiresAt = nil
        priceIncreaseStatus = nil
        renewalPriceMinorUnits = nil
        offer = terms.flatMap { $0.periodsRemaining > 0 ? $0.applied : nil }
        offerPeriodsRemaining = terms?.periodsRemaining ?? 0
        commitment = transaction.commitment
        renewalBillingPlan = transaction.billingPlanType ?? .billedUpFront
        updatedAt = now
    }

    /// An offer redeemed while nothing is charged now prices the next renewal: all its periods remain.
    mutating func deferOffer(_ terms: OfferTerms?) {
        guard let terms else { return }
        offer = terms.applied
        offerPeriodsRemaining = terms.periodsCovered + terms.periodsRemaining
    }
}
