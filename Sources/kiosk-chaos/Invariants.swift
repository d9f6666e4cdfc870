import Foundation
import KioskProtocol

/// A transaction as the store holds it now (its latest signed state), from the sandbox test controls.
struct StoreTransaction: Sendable {
    var id: String
    var productId: String
    var quantity: Int
    var revoked: Bool
    var finished: Bool

    init(_ info: TestTransactionInfo) throws {
        let parts = info.signedTransaction.split(separator: ".")
        guard parts.count == 3, let payload = Data(base64URL: String(parts[1])),
            let fields = try JSONSerialization.jsonObject(with: payload) as? [String: Any]
        else { throw ChaosError("transaction \(info.transactionId): its signed transaction is not a JWS") }
        id = info.transactionId
        productId = info.productId
        quantity = info.quantity
        revoked = fields["revocationDate"] != nil
        finished = info.finished
    }
}

/// What the merchant's ledger says of one user: the history's events per transaction and the balances.
struct UserLedger: Sendable {
    /// Per transaction: how often it was granted, revoked and reinstated.
    var events: [String: [String: Int]] = [:]
    var balances: [String: Int64] = [:]

    func count(_ kind: String, of transaction: String) -> Int { events[transaction]?[kind] ?? 0 }

    /// Whether the ledger holds the transaction revoked now (no refund is ever reversed in a campaign, so each
    /// revocation after the last reinstatement counts).
    func isRevoked(_ transaction: String) -> Bool {
        count("revoked", of: transaction) > count("reinstated", of: transaction)
    }
}

/// A broken promise, found by comparing the merchant's ledger with the store's truth once everything settled.
struct Violation: Sendable, Hashable, CustomStringConvertible {
    enum Kind: String, Sendable, CaseIterable {
        /// Charged (and not refunded), never granted.
        case lostGrant = "lost grant"
        /// Granted twice, or to two users.
        case duplicatedGrant = "duplicated grant"
        case refundNotApplied = "refund not applied"
        case revokedWithoutRefund = "revoked without a refund"
        case grantWithoutPurchase = "grant without a purchase"
        case balance = "balance differs from the ledger"
        case unfinished = "left unfinished by the app"
        case reconciliation = "reconciliation finding"
        /// A purchase the store answered to the app, gone after a power cut.
        case lostPurchase = "answered purchase lost"
        /// A grant (or its refund) the merchant acknowledged, gone after a power cut.
        case lostAcknowledgement = "acknowledged grant lost"
    }

    var kind: Kind
    /// The transaction (or, for a balance, the user) it is about: a violation is counted once per subject.
    var subject: String
    var detail: String

    var description: String { "\(kind.rawValue) \(subject): \(detail)" }
}

/// The invariants of the campaign, checked against the store's truth.
struct Invariants {
    let bundleId: String
    let coins: String
    /// Coins credited per unit of the coins product (the merchant's configuration).
    let coinsPerUnit: Int64
    let store: Endpoint
    let merchant: Endpoint

    /// Every transaction of every customer in the store, by customer.
    func storeTransactions(of customers: [Customer]) async throws -> [Customer: [StoreTransaction]] {
        var result: [Customer: [StoreTransaction]] = [:]
        for customer in customers {
            let listed = try await store.call(
                .GET, TestControlRoutes.transactions.path(bundleId, query: ["tester": customer.tester]),
                as: TestTransactionsResponse.self)
            result[customer] = try listed.transactions.map(StoreTransaction.init)
        }
        return result
    }

    func ledger(of customer: Customer) async throws -> UserLedger {
        let explained = try await merchant.call(
            .GET, "/merchant/v1/admin/users/\(customer.userId)/explain", as: Explanation.self)
        let owned = try await merchant.call(
            .GET, "/merchant/v1/admin/users/\(customer.userId)/entitlements", as: Owned.self)
        var ledger = UserLedger()
        for entry in explained.history {
            guard let transaction = entry.transactionId else { continue }
            ledger.events[transaction, default: [:]][entry.kind, default: 0] += 1
        }
        for balance in owned.balances { ledger.balances[balance.name] = balance.amount }
        return ledger
    }

    /// Every violation there is now: each customer's transactions against their ledger, grants no customer's
    /// purchase explains, and what the merchant's own reconciliation finds.
    func check(_ customers: [Customer]) async throws -> [Violation] {
        let truth = try await storeTransactions(of: customers)
        var violations: [Violation] = []
        var grantedTo: [String: [String]] = [:]
        var bought: Set<String> = []
        for customer in customers {
            let ledger = try await ledger(of: customer)
            let transactions = truth[customer] ?? []
            bought.formUnion(transactions.map(\.id))
            var expectedCoins: Int64 = 0
            for transaction in transactions {
                let id = transaction.id
                let granted = ledger.count("granted", of: id)
                if granted > 1 {
                    violations.append(.init(kind: .duplicatedGrant, subject: id, detail: "granted \(granted) times"))
                }
                if granted > 0 { grantedTo[id, default: []].append(customer.userId) }
                if transaction.revoked {
                    // Refunded: the grant (if the merchant ever knew of it) must be taken back.
                    if ledger.events[id] != nil && !ledger.isRevoked(id) {
                        violations.append(
                            .init(
                                kind: .refundNotApplied, subject: id,
                                detail: "the store refunded it; \(customer.userId)'s grant still stands"))
                    }
                } else {
                    let standing = granted + ledger.count("reinstated", of: id)
                    if standing == 0 && !ledger.isRevoked(id) {
                        violations.append(
                            .init(
                                kind: .lostGrant, subject: id,
                                detail: "\(transaction.productId) × \(transaction.quantity) bought by "
                                    + "\(customer.tester), never granted to \(customer.userId)"))
                    } else if ledger.isRevoked(id) {
                        violations.append(
                            .init(
                                kind: .revokedWithoutRefund, subject: id,
                                detail: "\(customer.userId)'s grant is revoked; the store never refunded it"))
                    }
                    if transaction.productId == coins { expectedCoins += Int64(transaction.quantity) * coinsPerUnit }
                }
                if !transaction.finished {
                    violations.append(
                        .init(kind: .unfinished, subject: id, detail: "\(customer.tester)'s app never finished it"))
                }
            }
            let balance = ledger.balances["coins"] ?? 0
            if balance != expectedCoins {
                violations.append(
                    .init(
                        kind: .balance, subject: customer.userId,
                        detail: "\(balance) coins at the merchant; the store's unrefunded purchases make "
                            + "\(expectedCoins)"))
            }
            for id in ledger.events.keys where !transactions.contains(where: { $0.id == id }) {
                violations.append(
                    .init(
                        kind: .grantWithoutPurchase, subject: id,
                        detail: "in \(customer.userId)'s ledger, not among \(customer.tester)'s purchases"))
            }
        }
        for (id, users) in grantedTo where users.count > 1 {
            violations.append(
                .init(kind: .duplicatedGrant, subject: id, detail: "granted to \(users.joined(separator: " and "))"))
        }
        let report = try await reconcile()
        for finding in report.findings {
            violations.append(
                .init(
                    kind: .reconciliation, subject: finding.transactionId,
                    detail: "\(finding.kind)\(finding.detail.map { ": \($0)" } ?? "")"))
        }
        return violations
    }

    /// What a power cut lost of what was acknowledged before it: each purchase the store answered must still be
    /// in the store, each transaction the merchant acknowledged still in a ledger (revoked, if one of the
    /// acknowledgements was of its refund).
    func survived(_ acknowledged: Acknowledged, _ customers: [Customer]) async throws -> [Violation] {
        let stored = Set(try await storeTransactions(of: customers).values.flatMap { $0.map(\.id) })
        var ledgers: [String: UserLedger] = [:]
        for customer in customers {
            let ledger = try await ledger(of: customer)
            for id in ledger.events.keys { ledgers[id] = ledger }
        }
        var lost: [Violation] = []
        for id in acknowledged.purchases.sorted() where !stored.contains(id) {
            lost.append(.init(kind: .lostPurchase, subject: id, detail: "the store answered it; gone after the cut"))
        }
        for (id, refunded) in acknowledged.grants.sorted(by: { $0.key < $1.key }) {
            if ledgers[id] == nil {
                lost.append(
                    .init(kind: .lostAcknowledgement, subject: id, detail: "the merchant took it; gone after the cut"))
            } else if refunded && ledgers[id]?.isRevoked(id) != true {
                lost.append(
                    .init(
                        kind: .lostAcknowledgement, subject: id,
                        detail: "the merchant took its refund; granted again after the cut"))
            }
        }
        return lost
    }

    /// The merchant's reconciliation; one that fails (the merchant could not reach a store just started again) is
    /// tried again, three times in all.
    private func reconcile() async throws -> Reconciliation {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await merchant.call(
                    .POST, "/merchant/v1/admin/reconcile", json: ["environment": "Sandbox"], as: Reconciliation.self)
            } catch  where attempt < 3 {
                try await Task.sleep(for: .milliseconds(200))
            }
        }
    }

    /// The parts of the merchant's answers the checks read.
    private struct Explanation: Decodable {
        struct Entry: Decodable {
            var kind: String
            var transactionId: String?
        }
        var history: [Entry]
    }

    private struct Owned: Decodable {
        struct Balance: Decodable {
            var name: String
            var amount: Int64
        }
        var balances: [Balance]
    }

    private struct Reconciliation: Decodable {
        struct Finding: Decodable {
            var kind: String
            var transactionId: String
            var detail: String?
        }
        var findings: [Finding]
    }
}

extension Data {
    /// Decodes base64url without padding (a JWS segment).
    init?(base64URL text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        self.init(base64Encoded: base64)
    }
}
