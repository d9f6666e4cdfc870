import Foundation
import KioskCore

/// Sample aggregates with every field set, at whole milliseconds (the precision timestamps are stored at).
enum Fixtures {
    static let created = Date(timeIntervalSince1970: 1_767_225_600.123)
    static let updated = Date(timeIntervalSince1970: 1_767_229_200.456)

    static func app(id: Int64 = 1_400_000_001, bundleId: String = "com.example.game") -> App {
        App(
            id: id, bundleId: bundleId, name: "Game \(id)", sharedSecret: "0123456789abcdef0123456789abcdef",
            productionNotificationURLs: ["https://example.com/asn/prod", "https://backup.example.com/asn"],
            sandboxNotificationURLs: ["http://127.0.0.1:9000/asn"],
            createdAt: created, updatedAt: updated
        )
    }

    static func group(
        id: Int64 = 21_000_001, appId: Int64 = 1_400_000_001, name: String = "Premium"
    ) -> SubscriptionGroup {
        SubscriptionGroup(
            id: id, appId: appId, referenceName: name,
            localizations: [
                SubscriptionGroupLocalization(locale: "de_DE", name: "Premium DE", customAppName: "Spiel"),
                SubscriptionGroupLocalization(locale: "en_US", name: "Premium US"),
            ],
            createdAt: created, updatedAt: updated
        )
    }

    /// An auto-renewable product with localizations, custom prices and every kind of offer, each with prices.
    static func product(appId: Int64 = 1_400_000_001, productId: String = "com.example.game.monthly") -> Product {
        Product(
            appId: appId, productId: productId, referenceName: "Monthly", type: .autoRenewable,
            pricing: Pricing(tier: 5, customPrices: ["USA": 499, "JPN": 700, "DEU": 549]),
            localizations: [
                ProductLocalization(locale: "de_DE", displayName: "Monatlich", description: "Jeden Monat"),
                ProductLocalization(locale: "en_US", displayName: "Monthly", description: "Every month"),
                ProductLocalization(locale: "ja_JP", displayName: "月額", description: "毎月"),
            ],
            clearedForSale: false, reviewState: .approved, familyShareable: true,
            subscription: SubscriptionMembership(groupId: 21_000_001, level: 2), duration: .oneMonth,
            introductoryOffers: [
                IntroductoryOffer(
                    schedule: OfferSchedule(paymentMode: .freeTrial, period: OfferPeriod(count: 1, unit: .week))),
                IntroductoryOffer(
                    storefront: "JPN",
                    schedule: OfferSchedule(
                        paymentMode: .payAsYouGo, period: OfferPeriod(count: 1, unit: .month), numberOfPeriods: 3,
                        pricing: Pricing(tier: 1, customPrices: ["JPN": 120]))),
                IntroductoryOffer(
                    storefront: "USA",
                    schedule: OfferSchedule(
                        paymentMode: .payUpFront, period: OfferPeriod(count: 3, unit: .month),
                        pricing: Pricing(customPrices: ["USA": 999]))),
            ],
            promotionalOffers: [
                PromotionalOffer(
                    identifier: "comeback", referenceName: "Come back",
                    schedule: OfferSchedule(
                        paymentMode: .payAsYouGo, period: OfferPeriod(count: 1, unit: .month), numberOfPeriods: 2,
                        pricing: Pricing(tier: 2, customPrices: ["USA": 199, "DEU": 219]))),
                PromotionalOffer(
                    identifier: "loyal-year", referenceName: "Loyal",
                    schedule: OfferSchedule(paymentMode: .freeTrial, period: OfferPeriod(count: 1, unit: .year))),
            ],
            winBackOffers: [
                WinBackOffer(
                    identifier: "lapsed_free", referenceName: "Free month",
                    schedule: OfferSchedule(paymentMode: .freeTrial, period: OfferPeriod(count: 1, unit: .month))),
                WinBackOffer(
                    identifier: "lapsed_half", referenceName: "Half price",
                    schedule: OfferSchedule(
                        paymentMode: .payAsYouGo, period: OfferPeriod(count: 1, unit: .month), numberOfPeriods: 3,
                        pricing: Pricing(tier: 3, customPrices: ["USA": 249])), paidSubscriptionDurationInMonths: 6,
                    timeSinceLastSubscribedInMonths: WinBackOffer.MonthRange(minimum: 2, maximum: 12),
                    waitBetweenOffersInMonths: 3, startDate: created, endDate: updated, priority: .high
                ),
            ],
            territoryAvailability: TerritoryAvailability(
                territories: ["USA", "JPN", "DEU"], availableInNewTerritories: false),
            createdAt: created, updatedAt: updated
        )
    }

    static func tester(email: String = "ada@example.com") -> Account {
        Account(
            id: UUID(), environment: .sandbox, email: email, passwordHash: "$scrypt$ln=15$salt$hash", firstName: "Ada",
            lastName: "Lovelace", storefront: "GBR", paymentOutcome: .insufficientFunds,
            sandbox: SandboxSettings(
                interruptPurchases: true, askToBuy: true, renewalRate: .monthlyEvery3Minutes,
                purchaseHistoryClearedAt: updated),
            createdAt: created, updatedAt: updated
        )
    }

    static func key(
        id: String = "A1B2C3D4E5", appId: Int64 = 1_400_000_001, createdAt: Date = created
    ) -> InAppPurchaseKey {
        InAppPurchaseKey(
            id: id, appId: appId, name: "Server \(id)",
            publicKeyPEM: "-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----\n", createdAt: createdAt
        )
    }

    static func customer(email: String = "grace@example.com") -> Account {
        Account(
            id: UUID(), environment: .production, email: email, passwordHash: "$scrypt$ln=15$salt$hash",
            firstName: "Grace", lastName: "Hopper", storefront: "USA", paymentOutcome: .decline, createdAt: created,
            updatedAt: updated
        )
    }

    static func session(tokenHash: String = String(repeating: "ab", count: 32), accountId: UUID) -> StoreSession {
        StoreSession(
            tokenHash: tokenHash, environment: .sandbox, accountId: accountId, appId: 1_400_000_001,
            deviceId: UUID(), createdAt: created
        )
    }

    /// A deferred payment with every optional field set; `minimal` leaves them all nil.
    static func payment(
        accountId: UUID, environment: StoreEnvironment = .sandbox, idempotencyKey: String? = "key-1",
        createdAt: Date = created, minimal: Bool = false
    ) -> Payment {
        Payment(
            id: UUID(), environment: environment, accountId: accountId, appId: 1_400_000_001,
            idempotencyKey: minimal ? nil : idempotencyKey, productId: "com.example.game.coins", quantity: 3,
            applicationUsername: minimal ? nil : "player-7", appAccountToken: minimal ? nil : UUID(),
            state: minimal ? .purchased : .failed, transactionId: minimal ? nil : 2_000_000_000_000_001,
            errorCode: minimal ? nil : 2, errorReason: minimal ? nil : .paymentDeclined,
            createdAt: createdAt, updatedAt: updated
        )
    }

    /// An auto-renewable purchase with every optional field set; `minimal` leaves them all nil.
    static func transaction(
        id: Int64 = 2_000_000_000_000_001, environment: StoreEnvironment = .sandbox, accountId: UUID,
        purchaseDate: Date = created, minimal: Bool = false
    ) -> StoreTransaction {
        StoreTransaction(
            id: id, environment: environment, appId: 1_400_000_001, accountId: accountId,
            productId: "com.example.game.monthly", productType: .autoRenewable, originalTransactionId: id - 1,
            purchaseDate: purchaseDate, originalPurchaseDate: created, quantity: 1, priceMinorUnits: 499,
            currency: "USD", storefront: "USA", storefrontId: 143_441,
            applicationUsername: minimal ? nil : "player-7", appAccountToken: minimal ? nil : UUID(),
            orderId: "MK5TTTVWJH", subscriptionGroupId: minimal ? nil : 21_000_001,
            webOrderLineItemId: minimal ? nil : 2_000_000_000_000_002, expiresDate: minimal ? nil : updated,
            revocationDate: minimal ? nil : updated, revocationReason: minimal ? nil : 1,
            signedTransaction: "eyJhbGciOiJFUzI1NiJ9.eyJ0cmFuc2FjdGlvbklkIjoiMSJ9.c2ln"
        )
    }

    /// A restored entry with every optional field set; `minimal` leaves them all nil.
    static func queueRecord(
        sequence: Int64, environment: StoreEnvironment = .sandbox, accountId: UUID,
        transactionId: Int64? = 2_000_000_000_000_001, minimal: Bool = false
    ) -> QueueRecord {
        QueueRecord(
            sequence: sequence, environment: environment, accountId: accountId, appId: 1_400_000_001,
            state: minimal ? .deferred : .restored, paymentId: minimal ? nil : UUID(),
            productId: "com.example.game.monthly", quantity: 1, transactionId: minimal ? nil : transactionId,
            restoreTransactionId: minimal ? nil : 2_000_000_000_000_009, errorCode: minimal ? nil : 0,
            errorReason: minimal ? nil : .injectedFailure, createdAt: created, finishedAt: minimal ? nil : updated
        )
    }

    /// A signing chain row whose every text field names `marker` (storage does not parse them).
    static func sealedChain(_ environment: StoreEnvironment, version: Int64, marker: String) -> SealedSigningChain {
        SealedSigningChain(
            environment: environment, version: version, rootCertificatePEM: "root \(marker)",
            intermediateCertificatePEM: "intermediate \(marker)", leafCertificatePEM: "leaf \(marker)",
            sealedLeafKey: "leaf key \(marker)", sealedRootKey: version == 1 ? nil : "root key \(marker)",
            sealedIntermediateKey: version == 1 ? nil : "intermediate key \(marker)",
            updatedAt: Date(millisecondsSince1970: 1_700_000_000_000 + version))
    }
}
