import Crypto
import Foundation
import KioskCore
import KioskSigning
import KioskStorage

extension PurchaseService {
    /// The `appTransactionId` of an account in an app: derived from the three, not drawn from a sequence, so
    /// signing a transaction needs no lookup. 18 digits like Apple's; transaction ids have 16, so the two never
    /// meet in an `anyTransactionId` lookup.
    static func appTransactionId(environment: StoreEnvironment, appId: App.ID, accountId: UUID) -> Int64 {
        let digest = SHA256.hash(
            data: Data("\(environment.rawValue)/\(appId)/\(accountId.uuidString.lowercased())".utf8))
        let value = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return 100_000_000_000_000_000 + Int64(value % 900_000_000_000_000_000)
    }

    /// Records that the account has the app (its app transaction), unless it already does. Its original purchase
    /// date is `now` in whole seconds, the precision of the app receipt, so `AppTransaction` and the receipt agree.
    @discardableResult
    static func ensureAppTransaction(
        environment: StoreEnvironment, appId: App.ID, accountId: UUID, now: Date, in tx: any StorageTransaction
    ) async throws -> StoreAppTransaction {
        try await tx.ensureAppTransaction(
            StoreAppTransaction(
                environment: environment,
                id: appTransactionId(environment: environment, appId: appId, accountId: accountId), appId: appId,
                accountId: accountId,
                originalPurchaseDate: Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))))
    }
}

extension AppTransactionPayload {
    /// The customer's `AppTransaction` at `now`, as Get App Transaction Info and `RESCIND_CONSENT` sign it.
    init(_ appTransaction: StoreAppTransaction, app: App, now: Date) {
        let signed = now.millisecondsSince1970
        self.init(
            receiptType: appTransaction.environment.appleName, appAppleId: app.id, bundleId: app.bundleId,
            applicationVersion: StoreLedger.applicationVersion, receiptCreationDate: signed,
            originalPurchaseDate: appTransaction.originalPurchaseDate.millisecondsSince1970,
            originalApplicationVersion: StoreLedger.applicationVersion, appTransactionId: String(appTransaction.id),
            originalPlatform: "iOS", signedDate: signed)
    }
}
