import AsyncHTTPClient
import Foundation
import KioskCore
import KioskProtocol
import KioskSigning
import KioskStorage
import NIOCore

/// How the store asks a Get Retention Message endpoint (Apple's "Setting up your Get Retention Message endpoint"):
/// `POST` of `{"signedPayload": "<JWS>"}`, the JWS a `DecodedRealtimeRequestBody` signed with the environment's chain
/// like every App Store JWS; the answer counts only if it is `200` with a `RealtimeResponseBody` inside the budget.
extension RetentionService {
    /// How one call to an endpoint went.
    struct EndpointCall: Sendable {
        enum Result: Sendable {
            case answered(RealtimeResponseBody)
            /// No usable answer: Apple's `sendAttemptResult`, the HTTP status if one came, and why.
            case failed(NotificationAttempt.Result, httpStatus: Int?, reason: String)
        }

        var result: Result
        /// How long the answer took (or how long the store waited).
        var milliseconds: Int

        var succeeded: Bool {
            if case .answered = result { return true }
            return false
        }
    }

    /// The largest answer the store reads from an endpoint.
    static let answerMaxBytes = 64 * 1024

    /// Signs the real-time request for the subscription `originalTransactionId` of `app`.
    func signedRealtimeRequest(
        app: App, environment: StoreEnvironment, originalTransactionId: Int64, productId: String, locale: String,
        requestIdentifier: String, now: Date
    ) throws -> String {
        try context.signing.sign(
            DecodedRealtimeRequestBody(
                originalTransactionId: String(originalTransactionId), appAppleId: app.id, productId: productId,
                userLocale: locale, requestIdentifier: requestIdentifier, signedDate: now.millisecondsSince1970,
                environment: environment.appleName),
            environment: environment)
    }

    /// POSTs `signedPayload` to `url` and waits at most `budget` for the whole answer. An endpoint that answers
    /// late counts as timed out however it answers; one that never answers costs the budget, not more.
    func call(_ url: String, signedPayload: String, budget: Duration) async -> EndpointCall {
        let start = ContinuousClock.now
        let result = await withTaskGroup(of: EndpointCall.Result?.self) { group in
            group.addTask { await post(signedPayload, to: url, budget: budget) }
            group.addTask {
                // Nil: the budget ran out first (or the caller was cancelled, which waits no longer either).
                try? await Task.sleep(for: budget)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        let elapsed = ContinuousClock.now - start
        let milliseconds = Int(
            elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
        guard let result else {
            return EndpointCall(
                result: .failed(
                    .timedOut, httpStatus: nil,
                    reason: "no answer within the budget of \(Self.milliseconds(budget)) ms"),
                milliseconds: max(milliseconds, Self.milliseconds(budget)))
        }
        return EndpointCall(result: result, milliseconds: milliseconds)
    }

    private func post(_ signedPayload: String, to url: String, budget: Duration) async -> EndpointCall.Result {
        // The race in `call` keeps to the budget; the deadline only makes sure the request ends soon after.
        let deadline = NIODeadline.now() + .milliseconds(Int64(Self.milliseconds(budget)) + 1000)
        switch await SignedPayloadPost.send(
            signedPayload, to: url, with: http, policy: policy, deadline: deadline, keepingUpTo: Self.answerMaxBytes)
        {
        case .refused(let reason):
            return .failed(.other, httpStatus: nil, reason: "not sent: \(reason)")
        case .failed(let result):
            return .failed(result, httpStatus: nil, reason: "the request failed: \(result.rawValue)")
        case .tooLarge(let status):
            return .failed(
                .invalidResponse, httpStatus: status,
                reason: "the answer is larger than \(Self.answerMaxBytes / 1024) KiB")
        case .answered(let status, _) where status != 200:
            return .failed(.unsuccessfulHTTPResponseCode, httpStatus: status, reason: "it answered HTTP \(status)")
        case .answered(let status, let body):
            do {
                return .answered(
                    try JSONDecoder().decode(RealtimeResponseBody.self, from: Data(buffer: body ?? ByteBuffer())))
            } catch {
                return .failed(
                    .invalidResponse, httpStatus: status, reason: "the answer is not a RealtimeResponseBody (\(error))")
            }
        }
    }

    static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }

    // MARK: - What the subscriber is shown

    /// What the App Store shows a subscriber who tapped Cancel.
    enum Presentation: Sendable {
        /// A text message (with or without its image and bullet points).
        case message(RetentionMessage)
        /// A switch-plan message: the message, and the product of the group to switch to, under the billing plan.
        case alternateProduct(RetentionMessage, productId: String, plan: BillingPlanType)
        /// A promotional-offer message: the message, and the offer with the developer's signature.
        case promotionalOffer(RetentionMessage, SignedPromotion)
        /// The app's retention offer (`offerType` 5), with the default message when there is one.
        case retentionOffer(RetentionOffer, RetentionMessage?)
        case nothing

        var shown: RetentionEvent.Shown {
            switch self {
            case .message(let message):
                RetentionEvent.Shown(
                    kind: "message", messageIdentifier: message.identifier, header: message.header, body: message.body)
            case .alternateProduct(let message, let productId, _):
                RetentionEvent.Shown(
                    kind: "alternate-product", messageIdentifier: message.identifier, header: message.header,
                    body: message.body, productId: productId)
            case .promotionalOffer(let message, let offer):
                RetentionEvent.Shown(
                    kind: "promotional-offer", messageIdentifier: message.identifier, header: message.header,
                    body: message.body, productId: offer.productId, offerIdentifier: offer.offerIdentifier)
            case .retentionOffer(let offer, let message):
                RetentionEvent.Shown(
                    kind: "retention-offer", messageIdentifier: message?.identifier, header: message?.header,
                    body: message?.body, productId: offer.productId, offerIdentifier: offer.identifier)
            case .nothing:
                RetentionEvent.Shown(kind: "none")
            }
        }
    }

    /// A promotional offer from an endpoint's answer, in either of Apple's signature schemes; checked in full (the
    /// signature, the nonce) only when the subscriber takes it, by the purchase that redeems it.
    struct SignedPromotion: Sendable {
        var productId: String
        var offerIdentifier: String
        var offer: RequestedOffer
        var appAccountToken: UUID?
    }

    /// Why an endpoint's answer cannot be shown.
    struct UnusableAnswer: Error, Sendable {
        var reason: String
    }

    /// What the endpoint's `answer` shows the subscriber of `subscription` in `storefront`, checked as Apple checks
    /// it: exactly one option; an approved message (and approved images) that exists in the environment; for a plan
    /// switch or a promotional offer a message without images and a product of the subscription's group (another
    /// one to switch to, under a billing plan it offers in the storefront); an offer the product has.
    func presentation(
        of answer: RealtimeResponseBody, for subscription: StoreSubscription, storefront: Storefront,
        in tx: any StorageTransaction
    ) async throws -> Presentation {
        let options = [
            answer.message != nil, answer.alternateProduct != nil, answer.promotionalOffer != nil,
            answer.advancedCommerceInfo != nil,
        ].filter { $0 }.count
        guard options == 1 else {
            throw UnusableAnswer(
                reason: options == 0
                    ? "it names none of message, alternateProduct and promotionalOffer"
                    : "it names more than one of message, alternateProduct, promotionalOffer and advancedCommerceInfo")
        }
        if answer.advancedCommerceInfo != nil {
            throw UnusableAnswer(
                reason: "advancedCommerceInfo needs the Advanced Commerce API, which Kiosk does not model")
        }
        if let message = answer.message {
            return .message(try await approvedMessage(message.messageIdentifier, for: subscription, in: tx))
        }
        if let alternate = answer.alternateProduct {
            let message = try await approvedMessage(
                alternate.messageIdentifier, for: subscription, textOnly: true, in: tx)
            guard let productId = alternate.productId else {
                throw UnusableAnswer(reason: "alternateProduct has no productId")
            }
            try await requireGroupProduct(productId, of: subscription, in: tx)
            guard productId != subscription.productId else {
                throw UnusableAnswer(reason: "alternateProduct names the product already subscribed to, \(productId)")
            }
            var plan = BillingPlanType.billedUpFront
            if let name = alternate.billingPlanType {
                guard let named = BillingPlanType(rawValue: name) else {
                    throw UnusableAnswer(
                        reason: "billingPlanType \(name.prefix(32)) is neither BILLED_UPFRONT nor MONTHLY")
                }
                plan = named
            }
            if plan == .monthly,
                try await tx.product(appId: subscription.appId, productId: productId)?.monthlyPlan?
                    .monthlyPrice(in: storefront) == nil
            {
                throw UnusableAnswer(reason: "\(productId) has no monthly plan offered in \(storefront.code)")
            }
            return .alternateProduct(message, productId: productId, plan: plan)
        }
        guard let promotional = answer.promotionalOffer else { return .nothing }
        let message = try await approvedMessage(
            promotional.messageIdentifier, for: subscription, textOnly: true, in: tx)
        let offer = try promotion(promotional)
        try await requireGroupProduct(offer.productId, of: subscription, in: tx)
        guard
            let product = try await tx.product(appId: subscription.appId, productId: offer.productId),
            product.promotionalOffers.contains(where: { $0.identifier == offer.offerIdentifier })
        else {
            throw UnusableAnswer(
                reason: "\(offer.productId) has no promotional offer '\(offer.offerIdentifier.prefix(64))'")
        }
        return .promotionalOffer(message, offer)
    }

    /// The offer and its signature, in the payment's terms.
    private func promotion(_ answer: RealtimeResponseBody.PromotionalOffer) throws -> SignedPromotion {
        switch (answer.promotionalOfferSignatureV1, answer.promotionalOfferSignatureV2) {
        case (let v1?, nil):
            guard let signature = v1.encodedSignature, let productId = v1.productId,
                let nonce = v1.nonce.flatMap(UUID.init(uuidString:)), let timestamp = v1.timestamp,
                let keyId = v1.keyId, let offerIdentifier = v1.offerIdentifier
            else {
                throw UnusableAnswer(
                    reason: "promotionalOfferSignatureV1 needs encodedSignature, productId, nonce (a UUID), timestamp, "
                        + "keyId and offerIdentifier")
            }
            var token: UUID?
            if let text = v1.appAccountToken {
                guard let parsed = UUID(uuidString: text) else {
                    throw UnusableAnswer(reason: "promotionalOfferSignatureV1's appAccountToken is not a UUID")
                }
                token = parsed
            }
            return SignedPromotion(
                productId: productId, offerIdentifier: offerIdentifier,
                offer: RequestedOffer(
                    discount: PaymentDiscount(
                        identifier: offerIdentifier, keyIdentifier: keyId, nonce: nonce, signature: signature,
                        timestamp: timestamp)), appAccountToken: token)
        case (nil, let v2?):
            guard v2.utf8.count <= PurchaseService.signedOfferMaxLength,
                let parsed = try? SignedOfferJWS(parsing: v2), let productId = parsed.claims.productId,
                let offerIdentifier = parsed.claims.offerIdentifier
            else {
                throw UnusableAnswer(
                    reason: "promotionalOfferSignatureV2 is not a compact JWS naming a productId and an offerIdentifier"
                )
            }
            return SignedPromotion(
                productId: productId, offerIdentifier: offerIdentifier,
                offer: RequestedOffer(
                    signedPromotion: PromotionalOfferJWS(offerId: offerIdentifier, compactJWS: v2)),
                appAccountToken: nil)
        default:
            throw UnusableAnswer(
                reason:
                    "promotionalOffer needs exactly one of promotionalOfferSignatureV1 and promotionalOfferSignatureV2")
        }
    }

    /// The message `identifier` names, if it can be shown: approved, its images approved, and for a plan switch or
    /// an offer without images.
    private func approvedMessage(
        _ identifier: String?, for subscription: StoreSubscription, textOnly: Bool = false,
        in tx: any StorageTransaction
    ) async throws -> RetentionMessage {
        guard let identifier, let uuid = UUID(uuidString: identifier) else {
            throw UnusableAnswer(reason: "messageIdentifier is missing or not a UUID")
        }
        let normalized = uuid.uuidString.lowercased()
        guard
            let message = try await tx.retentionMessage(
                appId: subscription.appId, environment: subscription.environment, identifier: normalized)
        else { throw UnusableAnswer(reason: "there is no message \(normalized)") }
        guard message.state == .approved else {
            throw UnusableAnswer(reason: "the message \(normalized) is \(message.state.rawValue), not APPROVED")
        }
        if textOnly, !message.isTextOnly {
            throw UnusableAnswer(
                reason: "the message \(normalized) has an image; a switch-plan or promotional-offer message has none")
        }
        for image in message.imageIdentifiers {
            let found = try await tx.retentionImage(
                appId: subscription.appId, environment: subscription.environment, identifier: image)
            guard found?.state == .approved else {
                throw UnusableAnswer(reason: "the message's image \(image) is not APPROVED")
            }
        }
        return message
    }

    private func requireGroupProduct(
        _ productId: String, of subscription: StoreSubscription, in tx: any StorageTransaction
    ) async throws {
        guard let product = try await tx.product(appId: subscription.appId, productId: productId),
            product.deletedAt == nil, product.subscription?.groupId == subscription.groupId
        else {
            throw UnusableAnswer(
                reason: "\(productId.prefix(128)) is not an auto-renewable of the subscription's group")
        }
    }

    // MARK: - Apple's fallback

    /// What the App Store shows when there is no usable real-time answer (WWDC26, "Explore Retention Messaging in App
    /// Store Connect"): first the app's App Store Connect retention messaging with an offer the subscriber is
    /// eligible for — in Kiosk, a retention offer of the product — then the default message for the product and
    /// locale, else nothing.
    func fallback(
        for subscription: StoreSubscription, storefront: Storefront, locale: String, in tx: any StorageTransaction
    ) async throws -> (Presentation, source: String) {
        let message = try await defaultMessage(for: subscription, locale: locale, in: tx)
        if let offer = try await eligibleRetentionOffer(for: subscription, storefront: storefront, in: tx) {
            return (.retentionOffer(offer, message), "retention-offer")
        }
        if let message { return (.message(message), "default") }
        return (.nothing, "none")
    }

    /// The default message for the subscription's product in `locale`, if one is configured and can be shown.
    private func defaultMessage(
        for subscription: StoreSubscription, locale: String, in tx: any StorageTransaction
    ) async throws -> RetentionMessage? {
        guard let locale = AppStoreLocale.normalized(locale),
            let identifier = try await tx.retentionDefaultMessage(
                appId: subscription.appId, environment: subscription.environment,
                productId: subscription.productId, locale: locale)
        else { return nil }
        return try? await approvedMessage(identifier, for: subscription, in: tx)
    }

    /// The retention offer the App Store would choose for the subscriber: one of the product the subscription
    /// renews into that has a price in the storefront, for an active subscription with no offer pending, which the
    /// subscriber has not redeemed before; the cheapest, then by identifier.
    func eligibleRetentionOffer(
        for subscription: StoreSubscription, storefront: Storefront, in tx: any StorageTransaction
    ) async throws -> RetentionOffer? {
        guard subscription.state == .active, subscription.offerPeriodsRemaining == 0 || subscription.offer == nil
        else { return nil }
        let offers = try await tx.retentionOffers(appId: subscription.appId).filter {
            $0.productId == subscription.autoRenewProductId
        }
        guard !offers.isEmpty else { return nil }
        let transactions = try await tx.transactions(
            accountId: subscription.accountId, appId: subscription.appId, environment: subscription.environment)
        var redeemed = Set<String>()
        for transaction in transactions where transaction.offer?.type == .retention {
            if let identifier = transaction.offer?.identifier { redeemed.insert(identifier) }
        }
        var best: (offer: RetentionOffer, price: Int)?
        for offer in offers where !redeemed.contains(offer.identifier) {
            guard let price = offer.schedule.price(in: storefront) else { continue }
            if let current = best,
                current.price < price || (current.price == price && current.offer.identifier < offer.identifier)
            {
                continue
            }
            best = (offer, price)
        }
        return best?.offer
    }
}
