import Foundation
import KioskCore
import KioskProtocol
import KioskSigning
import KioskStorage

extension PurchaseService {
    /// `SKReceiptRefreshRequest`: a freshly signed app receipt for the session's account, app and device.
    public func receipt(for client: ClientSession) async throws -> ReceiptResponse {
        try await failIfArmed(.receipt, client: client)
        return try await receipt(for: client, deviceId: client.session.deviceId)
    }

    /// The app receipt of `client` for `deviceId`: PKCS #7 over Apple's receipt ASN.1, base64.
    ///
    /// It holds every non-consumable and subscription purchase, and consumables only while their transaction is
    /// unfinished, as Apple's receipts do. Its hash is SHA-1(device id ‖ opaque value ‖ bundle id), so the
    /// device can check the receipt was made for it. Its original purchase date is when this account first got the
    /// app: its app transaction's, the date `AppTransaction` and the Server API give too.
    func receipt(for client: ClientSession, deviceId: UUID) async throws -> ReceiptResponse {
        let now = clocks.now(client.environment)
        let (transactions, unfinished, appTransaction) = try await database.transaction { tx in
            (
                try await visibleTransactions(client: client, in: tx),
                Set(
                    try await tx.unfinishedQueueRecords(
                        accountId: client.account.id, appId: client.app.id, environment: client.environment
                    ).compactMap(\.transactionId)),
                try await Self.ensureAppTransaction(
                    environment: client.environment, appId: client.app.id, accountId: client.account.id, now: now,
                    in: tx)
            )
        }
        let opaque = SecretGenerator.randomBytes(16)
        let inApp = Self.receiptPurchases(transactions, unfinished: unfinished)
        let receipt = AppReceipt(
            receiptType: client.environment == .production ? .production : .productionSandbox,
            appItemId: client.environment == .production ? client.app.id : 0, bundleId: client.app.bundleId,
            applicationVersion: StoreLedger.applicationVersion, opaqueValue: opaque,
            sha1Hash: AppReceipt.deviceHash(deviceId: deviceId, opaqueValue: opaque, bundleId: client.app.bundleId),
            receiptCreationDate: now, originalPurchaseDate: appTransaction.originalPurchaseDate,
            originalApplicationVersion: StoreLedger.applicationVersion, inApp: inApp)
        let der = try context.signing.sign(receipt, environment: client.environment)
        return ReceiptResponse(receipt: Data(der).base64EncodedString())
    }

    /// The purchases an app receipt lists: every non-consumable and subscription purchase, and consumables only
    /// while their transaction is unfinished.
    static func receiptPurchases(_ transactions: [StoreTransaction], unfinished: Set<Int64>)
        -> [AppReceipt.InAppPurchase]
    {
        transactions.filter { $0.productType != .consumable || unfinished.contains($0.id) }.map {
            AppReceipt.InAppPurchase(
                quantity: $0.quantity, productId: $0.productId, transactionId: String($0.id),
                originalTransactionId: String($0.originalTransactionId), purchaseDate: $0.purchaseDate,
                originalPurchaseDate: $0.originalPurchaseDate, productType: receiptProductType($0.productType),
                expiresDate: $0.expiresDate, webOrderLineItemId: $0.webOrderLineItemId,
                cancellationDate: $0.revocationDate)
        }
    }

    static func receiptProductType(_ type: ProductType) -> AppReceipt.ProductType {
        switch type {
        case .nonConsumable: .nonConsumable
        case .consumable: .consumable
        case .nonRenewing: .nonRenewingSubscription
        case .autoRenewable: .autoRenewableSubscription
        }
    }
}
