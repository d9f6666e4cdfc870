import Foundation
import KioskCore
import KioskSQL
import SQLKit

/// Payment queue entries, numbered by the `queue_entry` sequence; a finished entry stays for the updates stream.
extension SQLStorageTransaction {
    func insertQueueRecords(_ records: [QueueRecord]) async throws {
        try await insert(
            records,
            into: """
                queue_entries (sequence, environment, account_id, app_id, state, payment_id, product_id,
                    quantity, transaction_id, restore_transaction_id, error_code, error_reason, created_at, finished_at)
                """
        ) { record -> SQLQueryString in
            """
            (\(bind: record.sequence), \(bind: record.environment.rawValue),
                \(bind: Self.text(record.accountId)), \(bind: record.appId), \(bind: record.state.rawValue),
                \(bind: record.paymentId.map(Self.text)), \(bind: record.productId), \(bind: record.quantity),
                \(bind: record.transactionId), \(bind: record.restoreTransactionId), \(bind: record.errorCode),
                \(bind: record.errorReason?.rawValue), \(bind: record.createdAt.millisecondsSince1970),
                \(bind: record.finishedAt?.millisecondsSince1970))
            """
        }
    }

    func finishQueueRecord(sequence: Int64, at date: Date) async throws -> QueueRecord? {
        // COALESCE keeps the first finish date, so finishing twice changes nothing.
        try await session.first(
            """
            UPDATE queue_entries SET finished_at = COALESCE(finished_at, \(bind: date.millisecondsSince1970))
            WHERE sequence = \(bind: sequence)
            RETURNING *
            """
        )
        .map(Self.decodeQueueRecord)
    }

    func queueRecord(sequence: Int64) async throws -> QueueRecord? {
        try await session.first("SELECT * FROM queue_entries WHERE sequence = \(bind: sequence)")
            .map(Self.decodeQueueRecord)
    }

    func queueRecords(paymentId: Payment.ID) async throws -> [QueueRecord] {
        try await session.all(
            "SELECT * FROM queue_entries WHERE payment_id = \(bind: Self.text(paymentId)) ORDER BY sequence"
        )
        .map(Self.decodeQueueRecord)
    }

    func unfinishedQueueRecords(accountId: UUID, appId: App.ID, environment: StoreEnvironment) async throws
        -> [QueueRecord]
    {
        try await session.all(
            """
            SELECT * FROM queue_entries
            WHERE \(Self.ownedBy(accountId, appId, environment)) AND finished_at IS NULL
            ORDER BY sequence
            """
        )
        .map(Self.decodeQueueRecord)
    }

    func queueRecords(accountId: UUID, appId: App.ID, environment: StoreEnvironment, after: Int64, limit: Int)
        async throws -> [QueueRecord]
    {
        try await session.all(
            """
            SELECT * FROM queue_entries
            WHERE \(Self.ownedBy(accountId, appId, environment)) AND sequence > \(bind: after)
            ORDER BY sequence
            LIMIT \(bind: limit)
            """
        )
        .map(Self.decodeQueueRecord)
    }

    func latestQueueSequence() async throws -> Int64 {
        try await session.first("SELECT COALESCE(MAX(sequence), 0) AS value FROM queue_entries")?
            .decode(column: "value", as: Int64.self) ?? 0
    }

    private static func decodeQueueRecord(_ row: any SQLRow) throws -> QueueRecord {
        QueueRecord(
            sequence: try row.decode(column: "sequence", as: Int64.self),
            environment: try row.enumeration("environment", as: StoreEnvironment.self),
            accountId: try row.uuid("account_id"),
            appId: try row.decode(column: "app_id", as: Int64.self),
            state: try row.enumeration("state", as: QueueRecord.State.self),
            paymentId: try row.optionalUUID("payment_id"),
            productId: try row.decode(column: "product_id", as: String.self),
            quantity: try row.decode(column: "quantity", as: Int.self),
            transactionId: try row.optional("transaction_id", as: Int64.self),
            restoreTransactionId: try row.optional("restore_transaction_id", as: Int64.self),
            errorCode: try row.optional("error_code", as: Int.self),
            errorReason: try row.decodeNil(column: "error_reason")
                ? nil : row.enumeration("error_reason", as: ErrorCode.self),
            createdAt: try row.date("created_at"),
            finishedAt: try row.optionalDate("finished_at")
        )
    }
}
