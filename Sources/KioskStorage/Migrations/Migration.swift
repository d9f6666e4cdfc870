import KioskSQL

extension Migration {
    /// Every migration of the store's schema, oldest first.
    static let all: [Migration] = [
        .catalog, .purchases, .verification, .subscriptions, .identity, .transactionRevisions, .winBackOffers,
        .accounts, .dueOrder, .money, .teamKeys, .exchangeRates, .console, .consoleUsers, .checkRuns,
        .retentionMessaging, .consent, .commitmentBilling, .performanceTestRuns, .territoryAvailability,
        .offerCodeCampaigns, .consoleSessionEnds, .consolePasswordSetAt, .leanerIndexes, .receiptsWhenAsked,
        .notificationsSignedWhenSent,
    ]
}
