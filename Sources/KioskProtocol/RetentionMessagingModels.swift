import Foundation
import KioskCore

// Apple's Retention Messaging API with Apple's type and field names (the store encodes its answers; the
// real-time request the store signs and the answer a developer's Get Retention Message endpoint gives), and the
// console API's view of it (`/admin/v1/apps/{bundleId}/retention…`).

// MARK: - Management answers

/// `GET /inApps/v1/messaging/image/list`.
public struct GetImageListResponse: Codable, Sendable, Hashable {
    public var imageIdentifiers: [GetImageListResponseItem]

    public init(imageIdentifiers: [GetImageListResponseItem]) { self.imageIdentifiers = imageIdentifiers }
}

public struct GetImageListResponseItem: Codable, Sendable, Hashable {
    public var imageIdentifier: String
    /// `PENDING`, `APPROVED` or `REJECTED`.
    public var imageState: String
    /// `FULL_SIZE` or `BULLET_POINT`.
    public var imageSize: String

    public init(imageIdentifier: String, imageState: String, imageSize: String) {
        self.imageIdentifier = imageIdentifier
        self.imageState = imageState
        self.imageSize = imageSize
    }
}

/// `GET /inApps/v1/messaging/message/list`.
public struct GetMessageListResponse: Codable, Sendable, Hashable {
    public var messageIdentifiers: [GetMessageListResponseItem]

    public init(messageIdentifiers: [GetMessageListResponseItem]) { self.messageIdentifiers = messageIdentifiers }
}

public struct GetMessageListResponseItem: Codable, Sendable, Hashable {
    public var messageIdentifier: String
    public var messageState: String

    public init(messageIdentifier: String, messageState: String) {
        self.messageIdentifier = messageIdentifier
        self.messageState = messageState
    }
}

/// `GET /inApps/v1/messaging/default/{productId}/{locale}`.
public struct DefaultConfigurationResponse: Codable, Sendable, Hashable {
    public var messageIdentifier: String

    public init(messageIdentifier: String) { self.messageIdentifier = messageIdentifier }
}

/// `GET /inApps/v1/messaging/realtime/url`.
public struct RealtimeUrlResponse: Codable, Sendable, Hashable {
    public var realtimeURL: String

    public init(realtimeURL: String) { self.realtimeURL = realtimeURL }
}

/// The parameters a performance test runs with.
public struct PerformanceTestConfig: Codable, Sendable, Hashable {
    public var maxConcurrentRequests: Int
    public var totalRequests: Int
    /// Milliseconds.
    public var totalDuration: Int
    /// Milliseconds: an answer later than this fails.
    public var responseTimeThreshold: Int
    /// Percent of answers that must succeed.
    public var successRateThreshold: Int

    public init(
        maxConcurrentRequests: Int, totalRequests: Int, totalDuration: Int, responseTimeThreshold: Int,
        successRateThreshold: Int
    ) {
        self.maxConcurrentRequests = maxConcurrentRequests
        self.totalRequests = totalRequests
        self.totalDuration = totalDuration
        self.responseTimeThreshold = responseTimeThreshold
        self.successRateThreshold = successRateThreshold
    }
}

/// `POST /inApps/v1/messaging/performanceTest` (sandbox).
public struct PerformanceTestResponse: Codable, Sendable, Hashable {
    public var config: PerformanceTestConfig
    public var requestId: String

    public init(config: PerformanceTestConfig, requestId: String) {
        self.config = config
        self.requestId = requestId
    }
}

/// Response times of a performance test, in milliseconds.
public struct PerformanceTestResponseTimes: Codable, Sendable, Hashable {
    public var average: Int
    public var p50: Int
    public var p90: Int
    public var p95: Int
    public var p99: Int

    public init(average: Int, p50: Int, p90: Int, p95: Int, p99: Int) {
        self.average = average
        self.p50 = p50
        self.p90 = p90
        self.p95 = p95
        self.p99 = p99
    }
}

/// `GET /inApps/v1/messaging/performanceTest/result/{requestId}` (sandbox).
public struct PerformanceTestResultResponse: Codable, Sendable, Hashable {
    public var config: PerformanceTestConfig
    /// The URL tested.
    public var target: String
    /// `PENDING`, `PASS` or `FAIL`.
    public var result: String
    /// Percent of the requests answered in time; nil while pending.
    public var successRate: Int?
    public var numPending: Int
    public var responseTimes: PerformanceTestResponseTimes?
    /// Apple's `sendAttemptResult` of each failure, and how many.
    public var failures: [String: Int]?

    public init(
        config: PerformanceTestConfig, target: String, result: String, successRate: Int?, numPending: Int,
        responseTimes: PerformanceTestResponseTimes?, failures: [String: Int]?
    ) {
        self.config = config
        self.target = target
        self.result = result
        self.successRate = successRate
        self.numPending = numPending
        self.responseTimes = responseTimes
        self.failures = failures
    }
}

// MARK: - The real-time request and its answer

/// What the store POSTs to the developer's Get Retention Message endpoint.
public struct RealtimeRequestBody: Codable, Sendable, Hashable {
    public var signedPayload: String

    public init(signedPayload: String) { self.signedPayload = signedPayload }
}

/// The claims of `signedPayload`, signed with the environment's chain like every App Store JWS.
public struct DecodedRealtimeRequestBody: Codable, Sendable, Hashable {
    public var originalTransactionId: String
    public var appAppleId: Int64
    public var productId: String
    /// The device's locale, `en-US`.
    public var userLocale: String
    /// Lower-case UUID, new for each request.
    public var requestIdentifier: String
    public var signedDate: Int64
    /// `Sandbox` or `Production`.
    public var environment: String

    public init(
        originalTransactionId: String, appAppleId: Int64, productId: String, userLocale: String,
        requestIdentifier: String, signedDate: Int64, environment: String
    ) {
        self.originalTransactionId = originalTransactionId
        self.appAppleId = appAppleId
        self.productId = productId
        self.userLocale = userLocale
        self.requestIdentifier = requestIdentifier
        self.signedDate = signedDate
        self.environment = environment
    }
}

/// The answer of a Get Retention Message endpoint: one of its options, which exclude each other. Unknown fields are
/// ignored; an answer of the wrong shape, or one the store cannot show, falls back to the default message.
public struct RealtimeResponseBody: Codable, Sendable, Hashable {
    public struct Message: Codable, Sendable, Hashable {
        public var messageIdentifier: String?

        public init(messageIdentifier: String?) { self.messageIdentifier = messageIdentifier }
    }

    public struct AlternateProduct: Codable, Sendable, Hashable {
        public var messageIdentifier: String?
        public var productId: String?
        /// `BILLED_UPFRONT` or `MONTHLY` (a monthly plan with a 12-month commitment).
        public var billingPlanType: String?

        public init(messageIdentifier: String?, productId: String?, billingPlanType: String? = nil) {
            self.messageIdentifier = messageIdentifier
            self.productId = productId
            self.billingPlanType = billingPlanType
        }
    }

    /// A promotional offer signed with Apple's first scheme (`SKPaymentDiscount`'s fields beside the product).
    public struct PromotionalOfferSignatureV1: Codable, Sendable, Hashable {
        public var encodedSignature: String?
        public var productId: String?
        public var nonce: String?
        public var timestamp: Int64?
        public var keyId: String?
        public var offerIdentifier: String?
        public var appAccountToken: String?

        public init(
            encodedSignature: String?, productId: String?, nonce: String?, timestamp: Int64?, keyId: String?,
            offerIdentifier: String?, appAccountToken: String? = nil
        ) {
            self.encodedSignature = encodedSignature
            self.productId = productId
            self.nonce = nonce
            self.timestamp = timestamp
            self.keyId = keyId
            self.offerIdentifier = offerIdentifier
            self.appAccountToken = appAccountToken
        }
    }

    public struct PromotionalOffer: Codable, Sendable, Hashable {
        public var messageIdentifier: String?
        /// A compact JWS as Apple's `PromotionalOfferV2SignatureCreator` makes it.
        public var promotionalOfferSignatureV2: String?
        public var promotionalOfferSignatureV1: PromotionalOfferSignatureV1?

        public init(
            messageIdentifier: String?, promotionalOfferSignatureV2: String? = nil,
            promotionalOfferSignatureV1: PromotionalOfferSignatureV1? = nil
        ) {
            self.messageIdentifier = messageIdentifier
            self.promotionalOfferSignatureV2 = promotionalOfferSignatureV2
            self.promotionalOfferSignatureV1 = promotionalOfferSignatureV1
        }
    }

    /// An Advanced Commerce API offer or switch plan, which Kiosk does not model.
    public struct AdvancedCommerceInfo: Codable, Sendable, Hashable {
        public var messageIdentifier: String?
        public var advancedCommerceData: String?

        public init(messageIdentifier: String?, advancedCommerceData: String?) {
            self.messageIdentifier = messageIdentifier
            self.advancedCommerceData = advancedCommerceData
        }
    }

    public var message: Message?
    public var alternateProduct: AlternateProduct?
    public var promotionalOffer: PromotionalOffer?
    public var advancedCommerceInfo: AdvancedCommerceInfo?

    public init(
        message: Message? = nil, alternateProduct: AlternateProduct? = nil, promotionalOffer: PromotionalOffer? = nil,
        advancedCommerceInfo: AdvancedCommerceInfo? = nil
    ) {
        self.message = message
        self.alternateProduct = alternateProduct
        self.promotionalOffer = promotionalOffer
        self.advancedCommerceInfo = advancedCommerceInfo
    }
}

// MARK: - What a subscriber saw when they tapped Cancel

/// One time a subscriber turned auto-renew off (tapped Cancel): what the store asked the developer's endpoint, what
/// the subscriber was shown, what they chose, and what came of it. The test control's answer carries it, and the
/// console and `kiosk retention show` list them.
public struct RetentionEvent: Codable, Sendable, Hashable {
    /// How the developer's Get Retention Message endpoint answered.
    public struct Realtime: Codable, Sendable, Hashable {
        public var url: String
        /// `answered`, `timed-out`, `failed` (no HTTP answer, or not 200), `invalid-answer`.
        public var result: String
        public var httpStatus: Int?
        /// Apple's `sendAttemptResult` for a failure (`TIMED_OUT`, `TLS_ISSUE`, …).
        public var sendAttemptResult: String?
        /// How long the answer took, or how long the store waited.
        public var milliseconds: Int
        /// The store's time budget.
        public var budgetMilliseconds: Int
        /// Why an answer could not be used.
        public var reason: String?

        public init(
            url: String, result: String, httpStatus: Int? = nil, sendAttemptResult: String? = nil, milliseconds: Int,
            budgetMilliseconds: Int, reason: String? = nil
        ) {
            self.url = url
            self.result = result
            self.httpStatus = httpStatus
            self.sendAttemptResult = sendAttemptResult
            self.milliseconds = milliseconds
            self.budgetMilliseconds = budgetMilliseconds
            self.reason = reason
        }
    }

    /// What the subscriber was shown.
    public struct Shown: Codable, Sendable, Hashable {
        /// `message`, `alternate-product`, `promotional-offer`, `retention-offer` or `none`.
        public var kind: String
        public var messageIdentifier: String?
        public var header: String?
        public var body: String?
        /// The product to switch to, or the product the offer is for.
        public var productId: String?
        public var offerIdentifier: String?

        public init(
            kind: String, messageIdentifier: String? = nil, header: String? = nil, body: String? = nil,
            productId: String? = nil, offerIdentifier: String? = nil
        ) {
            self.kind = kind
            self.messageIdentifier = messageIdentifier
            self.header = header
            self.body = body
            self.productId = productId
            self.offerIdentifier = offerIdentifier
        }
    }

    /// Lower-case UUID: the real-time request's `requestIdentifier`.
    public var requestIdentifier: String
    /// `Sandbox` or `Production`.
    public var environment: String
    public var originalTransactionId: String
    public var productId: String
    public var userLocale: String
    /// Milliseconds since 1970, on the environment's clock.
    public var date: Int64
    /// Where what was shown came from: `realtime` (the endpoint's answer), `retention-offer` (the app's retention
    /// offer, when the endpoint gave nothing usable), `default` (the default message) or `none`.
    public var source: String
    /// Nil when the app has no real-time URL.
    public var realtime: Realtime?
    public var shown: Shown
    /// `cancel` (the subscriber confirmed) or `accept` (took what was shown).
    public var choice: String
    /// `cancelled` (auto-renew off), `kept` (nothing changed), `switched` (renews into another product, or upgraded
    /// now), `offer-redeemed`, or `refused` (taking it failed; nothing changed).
    public var outcome: String
    /// The transaction a plan switch or offer was charged with or applies to.
    public var transactionId: String?
    /// The whole story in one sentence.
    public var summary: String

    public init(
        requestIdentifier: String, environment: String, originalTransactionId: String, productId: String,
        userLocale: String, date: Int64, source: String, realtime: Realtime?, shown: Shown, choice: String,
        outcome: String, transactionId: String? = nil, summary: String
    ) {
        self.requestIdentifier = requestIdentifier
        self.environment = environment
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.userLocale = userLocale
        self.date = date
        self.source = source
        self.realtime = realtime
        self.shown = shown
        self.choice = choice
        self.outcome = outcome
        self.transactionId = transactionId
        self.summary = summary
    }
}

// MARK: - The console API

/// `GET /admin/v1/apps/{bundleId}/retention?environment=sandbox|production`: the app's retention messaging in one
/// environment, as the developer configured it through Apple's API, with the review states the operator set.
public struct RetentionOverview: Codable, Sendable, Hashable {
    public struct Image: Codable, Sendable, Hashable {
        public var imageIdentifier: String
        public var imageSize: String
        public var imageState: String
        public var width: Int
        public var height: Int
        public var bytes: Int
        public var createdDate: Int64

        public init(
            imageIdentifier: String, imageSize: String, imageState: String, width: Int, height: Int, bytes: Int,
            createdDate: Int64
        ) {
            self.imageIdentifier = imageIdentifier
            self.imageSize = imageSize
            self.imageState = imageState
            self.width = width
            self.height = height
            self.bytes = bytes
            self.createdDate = createdDate
        }
    }

    public struct Message: Codable, Sendable, Hashable {
        /// A bullet point as uploaded: the Core type is the wire type.
        public typealias BulletPoint = RetentionMessage.BulletPoint

        public var messageIdentifier: String
        public var messageState: String
        public var header: String
        public var body: String
        public var headerPosition: String?
        public var imageIdentifier: String?
        public var altText: String?
        public var bulletPoints: [BulletPoint]
        public var createdDate: Int64

        public init(
            messageIdentifier: String, messageState: String, header: String, body: String, headerPosition: String?,
            imageIdentifier: String?, altText: String?, bulletPoints: [BulletPoint], createdDate: Int64
        ) {
            self.messageIdentifier = messageIdentifier
            self.messageState = messageState
            self.header = header
            self.body = body
            self.headerPosition = headerPosition
            self.imageIdentifier = imageIdentifier
            self.altText = altText
            self.bulletPoints = bulletPoints
            self.createdDate = createdDate
        }
    }

    public struct DefaultMessage: Codable, Sendable, Hashable {
        public var productId: String
        public var locale: String
        public var messageIdentifier: String

        public init(productId: String, locale: String, messageIdentifier: String) {
            self.productId = productId
            self.locale = locale
            self.messageIdentifier = messageIdentifier
        }
    }

    public struct PerformanceTest: Codable, Sendable, Hashable {
        public var requestId: String
        public var originalTransactionId: String
        public var createdDate: Int64
        public var result: PerformanceTestResultResponse
        /// Why a test that could not run failed.
        public var failureReason: String?

        public init(
            requestId: String, originalTransactionId: String, createdDate: Int64, result: PerformanceTestResultResponse,
            failureReason: String? = nil
        ) {
            self.requestId = requestId
            self.originalTransactionId = originalTransactionId
            self.createdDate = createdDate
            self.result = result
            self.failureReason = failureReason
        }
    }

    /// `sandbox` or `production`.
    public var environment: String
    public var realtimeURL: String?
    /// Whether a performance test passed, which a production URL needs.
    public var performanceTestPassed: Bool
    public var images: [Image]
    public var messages: [Message]
    public var defaultMessages: [DefaultMessage]
    /// Newest first.
    public var performanceTests: [PerformanceTest]
    /// The app's retention offers (both environments).
    public var retentionOffers: [RetentionOfferResource]
    /// The newest cancellations, newest first.
    public var events: [RetentionEvent]

    public init(
        environment: String, realtimeURL: String?, performanceTestPassed: Bool, images: [Image], messages: [Message],
        defaultMessages: [DefaultMessage], performanceTests: [PerformanceTest],
        retentionOffers: [RetentionOfferResource], events: [RetentionEvent]
    ) {
        self.environment = environment
        self.realtimeURL = realtimeURL
        self.performanceTestPassed = performanceTestPassed
        self.images = images
        self.messages = messages
        self.defaultMessages = defaultMessages
        self.performanceTests = performanceTests
        self.retentionOffers = retentionOffers
        self.events = events
    }
}

/// `POST /admin/v1/apps/{bundleId}/retention/review`: App Review's decision on one image or message.
public struct RetentionReviewRequest: Codable, Sendable, Hashable {
    /// `sandbox` or `production`.
    public var environment: String
    /// One of `imageIdentifier` and `messageIdentifier`.
    public var imageIdentifier: String?
    public var messageIdentifier: String?
    /// `APPROVED`, `REJECTED` or `PENDING`.
    public var state: String

    public init(environment: String, imageIdentifier: String? = nil, messageIdentifier: String? = nil, state: String) {
        self.environment = environment
        self.imageIdentifier = imageIdentifier
        self.messageIdentifier = messageIdentifier
        self.state = state
    }
}

/// The image or message after a review.
public struct RetentionReviewResponse: Codable, Sendable, Hashable {
    public var environment: String
    /// `image` or `message`.
    public var kind: String
    public var identifier: String
    public var state: String

    public init(environment: String, kind: String, identifier: String, state: String) {
        self.environment = environment
        self.kind = kind
        self.identifier = identifier
        self.state = state
    }
}

/// A retention offer: a discount the App Store shows a subscriber about to cancel (`offerType` 5).
public struct RetentionOfferResource: Codable, Sendable, Hashable {
    public var productId: String
    public var identifier: String
    public var referenceName: String
    /// `free_trial`, `pay_as_you_go` or `pay_up_front`.
    public var paymentMode: String
    /// ISO 8601, `P1M`.
    public var period: String
    public var numberOfPeriods: Int
    public var pricing: Pricing
    public var createdDate: Int64

    public init(
        productId: String, identifier: String, referenceName: String, paymentMode: String, period: String,
        numberOfPeriods: Int, pricing: Pricing, createdDate: Int64
    ) {
        self.productId = productId
        self.identifier = identifier
        self.referenceName = referenceName
        self.paymentMode = paymentMode
        self.period = period
        self.numberOfPeriods = numberOfPeriods
        self.pricing = pricing
        self.createdDate = createdDate
    }
}

/// `POST /admin/v1/apps/{bundleId}/retention/offers`: adds (or replaces) a retention offer of an auto-renewable.
public struct RetentionOfferRequest: Codable, Sendable, Hashable {
    public var productId: String
    public var identifier: String
    public var referenceName: String?
    public var paymentMode: String
    public var period: String
    public var numberOfPeriods: Int?
    public var pricing: Pricing?

    public init(
        productId: String, identifier: String, referenceName: String? = nil, paymentMode: String, period: String,
        numberOfPeriods: Int? = nil, pricing: Pricing? = nil
    ) {
        self.productId = productId
        self.identifier = identifier
        self.referenceName = referenceName
        self.paymentMode = paymentMode
        self.period = period
        self.numberOfPeriods = numberOfPeriods
        self.pricing = pricing
    }
}

/// `GET /admin/v1/apps/{bundleId}/retention/offers`.
public struct RetentionOfferList: Codable, Sendable, Hashable {
    public var retentionOffers: [RetentionOfferResource]

    public init(retentionOffers: [RetentionOfferResource]) { self.retentionOffers = retentionOffers }
}
