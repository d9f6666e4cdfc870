// TEMPORARY (removed before the session ends): placeholders so the tree builds while the purchase tables are
// written in their own branch.
import Foundation
import KioskCore

extension SQLStorageTransaction {
    func insertCustomer(_ customer: CustomerAccount) async throws { fatalError("pending") }
    func updateCustomer(_ customer: CustomerAccount) async throws { fatalError("pending") }
    func deleteCustomer(id: CustomerAccount.ID) async throws { fatalError("pending") }
    func customer(id: CustomerAccount.ID) async throws -> CustomerAccount? { fatalError("pending") }
    func customer(email: String) async throws -> CustomerAccount? { fatalError("pending") }
    func customers() async throws -> [CustomerAccount] { fatalError("pending") }
    func insertSession(_ session: StoreSession) async throws { fatalError("pending") }
    func session(tokenHash: String) async throws -> StoreSession? { fatalError("pending") }
    func deleteSession(tokenHash: String) async throws { fatalError("pending") }
    func insertPayment(_ payment: Payment) async throws { fatalError("pending") }
    func updatePayment(_ payment: Payment) async throws { fatalError("pending") }
    func payment(id: Payment.ID) async throws -> Payment? { fatalError("pending") }
    func payment(accountId: UUID, appId: App.ID, idempotencyKey: String) async throws -> Payment? { fatalError("pending") }
    func payments(appId: App.ID, environment: StoreEnvironment, accountId: UUID?, state: PaymentState?) async throws -> [Payment] { fatalError("pending") }
    func insertTransaction(_ transaction: StoreTransaction) async throws { fatalError("pending") }
    func updateTransaction(_ transaction: StoreTransaction) async throws { fatalError("pending") }
    func transaction(id: StoreTransaction.ID, environment: StoreEnvironment) async throws -> StoreTransaction? { fatalError("pending") }
    func transactions(accountId: UUID, appId: App.ID, environment: StoreEnvironment) async throws -> [StoreTransaction] { fatalError("pending") }
    func deleteTransaction(id: StoreTransaction.ID, environment: StoreEnvironment) async throws -> Int { fatalError("pending") }
    func deleteTransactions(accountId: UUID, appId: App.ID, environment: StoreEnvironment) async throws -> Int { fatalError("pending") }
    func insertQueueRecord(_ record: QueueRecord) async throws { fatalError("pending") }
    func finishQueueRecord(sequence: Int64, at date: Date) async throws -> QueueRecord? { fatalError("pending") }
    func queueRecord(sequence: Int64) async throws -> QueueRecord? { fatalError("pending") }
    func queueRecords(paymentId: Payment.ID) async throws -> [QueueRecord] { fatalError("pending") }
    func unfinishedQueueRecords(accountId: UUID, appId: App.ID, environment: StoreEnvironment) async throws -> [QueueRecord] { fatalError("pending") }
    func queueRecords(accountId: UUID, appId: App.ID, environment: StoreEnvironment, after: Int64, limit: Int) async throws -> [QueueRecord] { fatalError("pending") }
    func latestQueueSequence() async throws -> Int64 { fatalError("pending") }
    func setArmedFailure(_ failure: ArmedFailure) async throws { fatalError("pending") }
    func armedFailures(appId: App.ID) async throws -> [ArmedFailure] { fatalError("pending") }
    func consumeArmedFailure(appId: App.ID, api: ArmedFailure.API) async throws -> Int? { fatalError("pending") }
}
