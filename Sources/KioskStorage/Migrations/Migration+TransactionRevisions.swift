import KioskSQL

extension Migration {
    /// Migration 6: each transaction's revision, the count of its signings, which its JWS carries as
    /// `kioskRevision` so receivers order its states by the store's word rather than by `signedDate` alone.
    /// Rows from before were signed at least once: they start at 1. An update is conditional on the revision it
    /// read, so two changes made at once (two replicas) cannot both land.
    static let transactionRevisions = Migration(
        version: 6,
        name: "transaction_revisions",
        statements: ["ALTER TABLE transactions ADD COLUMN revision BIGINT NOT NULL DEFAULT 1"]
    )
}
