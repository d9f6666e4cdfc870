import Foundation
import KioskTesting
import Testing

/// `GET /health` says whether the merchant's ledger database answers.
@Suite struct MerchantHealthTests {
    /// A merchant whose ledger answers is `ok`; once the ledger's files are overwritten (a damaged disk), the next
    /// read finds no database, and `/health` answers 503 `degraded` with what to check.
    ///
    /// The files are overwritten, not removed or made unreadable: the merchant keeps them open, so SQLite reads on
    /// from the open file either way. All three go: the write-ahead log holds the newest pages and its index would
    /// keep serving them from memory.
    @Test func degradedWhenTheLedgerDatabaseDoesNotAnswer() async throws {
        try await MerchantShop.with(.sqlite) { shop in
            try await shop.withMerchant(receivesNotifications: false) { merchant in
                let healthy = try await merchant.request(.GET, "/health")
                #expect(healthy.status == 200 && healthy.json["status"] as? String == "ok", "\(healthy.text)")

                let ledger = merchant.directory.appendingPathComponent("merchant.sqlite")
                for suffix in ["", "-wal", "-shm"] {
                    let file = try FileHandle(forWritingTo: URL(fileURLWithPath: ledger.path + suffix))
                    try file.write(contentsOf: Data(count: 4096))
                    try file.close()
                }
                let degraded = try await merchant.request(.GET, "/health")
                expectRefused(degraded, 503, "degraded", field: nil)
                let error = degraded.json["error"] as? [String: Any]
                #expect((error?["message"] as? String)?.contains("ledger database does not answer") == true)
                #expect((error?["fix"] as? String)?.contains("--database") == true, "\(degraded.text)")
            }
        }
    }
}
