import KioskSQL

extension Migration {
    /// Migration 25: a transaction's iOS 6-style receipt is no longer kept. The store signs one when a device or
    /// `verifyReceipt` asks for it, as it already did for renewals. A purchase signed and stored it inside the
    /// database transaction that charged, where SQLite's one writer waited for the signature and wrote 3.7 KB more.
    /// Every copy says the same: its fields come from the transaction alone.
    static let receiptsWhenAsked = Migration(
        version: 25,
        name: "receipts_when_asked",
        statements: ["ALTER TABLE transactions DROP COLUMN transaction_receipt"]
    )
}
