import Foundation
import KioskCore
import SQLKit

/// Promotional offer nonces, kept so each signed offer is redeemed once.
extension SQLStorageTransaction {
    func useOfferNonce(_ nonce: UUID, appId: App.ID, environment: StoreEnvironment, at date: Date) async throws
        -> Bool
    {
        try await session.first(
            """
            INSERT INTO promotional_offer_nonces (environment, app_id, nonce, used_at)
            VALUES (\(bind: environment.rawValue), \(bind: appId), \(bind: Self.text(nonce)),
                \(bind: date.millisecondsSince1970))
            ON CONFLICT (environment, app_id, nonce) DO NOTHING
            RETURNING nonce
            """
        ) != nil
    }
}
