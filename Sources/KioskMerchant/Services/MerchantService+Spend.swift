import Foundation
import KioskCore
import KioskProtocol
import KioskSQL

extension MerchantService {
    /// Spends `request.amount` of the user's balance `name`, once per idempotency key, never below zero.
    ///
    /// Spends of one balance take turns (a lock row updated first), so two at once cannot both see enough. A
    /// retry with the same key answers the first spend again (`replayed`); the same key for another spend is
    /// refused.
    func spend(userId: String, balance name: String, request: MerchantSpendRequest) async throws
        -> MerchantSpendResponse
    {
        guard request.amount > 0 else {
            throw KioskError(
                .invalidAmount, "amount must be at least 1; it is \(request.amount).", field: "amount",
                fix: "Spend a positive whole number of units.")
        }
        guard (1...128).contains(request.idempotencyKey.count) else {
            throw KioskError(
                .invalidIdempotencyKey, "idempotencyKey must have 1–128 characters.", field: "idempotencyKey",
                fix: "Send a key made once per spend, e.g. a UUID, and the same key when retrying it.")
        }
        if let reason = request.reason, reason.count > 200 {
            throw KioskError(
                .invalidReason, "reason may have at most 200 characters; it has \(reason.count).", field: "reason")
        }
        let now = clock.now()
        return try await database.withSession { session in
            try await session.run(
                """
                INSERT INTO balance_locks (user_id, name, spends) VALUES (\(bind: userId), \(bind: name), 0)
                ON CONFLICT (user_id, name) DO UPDATE SET spends = balance_locks.spends + 1
                """)
            let ledger = GrantLedger(session: session)
            let remaining = try await ledger.balances(userId: userId).first { $0.name == name }?.amount ?? 0
            if let earlier = try await session.first(
                """
                SELECT * FROM balance_spends
                WHERE user_id = \(bind: userId) AND idempotency_key = \(bind: request.idempotencyKey)
                """
            ).map(SpendRecord.init(row:)) {
                guard earlier.name == name, earlier.amount == request.amount else {
                    throw KioskError(
                        .idempotencyKeyReused,
                        "idempotencyKey \(request.idempotencyKey) already spent \(earlier.amount) \(earlier.name).",
                        field: "idempotencyKey", fix: "Use a new key for a new spend; reuse a key only to retry.")
                }
                return MerchantSpendResponse(
                    balance: name, amount: earlier.amount, remaining: remaining,
                    idempotencyKey: earlier.idempotencyKey, reason: earlier.reason, spentDate: earlier.spentAt,
                    replayed: true)
            }
            guard remaining >= request.amount else {
                throw KioskError(
                    .insufficientBalance,
                    "\(userId) has \(remaining) \(name); spending \(request.amount) needs \(request.amount.saturatingSubtracting(remaining)) more.",
                    field: "amount", fix: "Spend at most \(max(remaining, 0)), or buy more first.")
            }
            try await session.run(
                """
                INSERT INTO balance_spends (user_id, name, amount, idempotency_key, reason, spent_at)
                VALUES (\(bind: userId), \(bind: name), \(bind: request.amount), \(bind: request.idempotencyKey),
                    \(bind: request.reason), \(bind: now.millisecondsSince1970))
                """)
            return MerchantSpendResponse(
                balance: name, amount: request.amount, remaining: remaining - request.amount,
                idempotencyKey: request.idempotencyKey, reason: request.reason, spentDate: now, replayed: false)
        }
    }
}
