import KioskSQL

extension Migration {
    /// Offer codes and offer redemptions (part of migration 4): each promotional offer nonce an app's customers
    /// used, so a signature is good once, and the one-time offer codes of an app's products (their pricing as
    /// JSON; redeemed_at is set once, in the purchase's transaction).
    static let offerStatements: [String] = [
        """
        CREATE TABLE promotional_offer_nonces (
            environment TEXT NOT NULL,
            app_id BIGINT NOT NULL,
            nonce TEXT NOT NULL,
            used_at BIGINT NOT NULL,
            PRIMARY KEY (environment, app_id, nonce)
        )
        """,
        """
        CREATE TABLE offer_codes (
            code TEXT PRIMARY KEY,
            app_id BIGINT NOT NULL,
            product_id TEXT NOT NULL,
            reference_name TEXT NOT NULL,
            payment_mode TEXT NOT NULL,
            period TEXT NOT NULL,
            number_of_periods INTEGER NOT NULL,
            pricing_json TEXT NOT NULL,
            created_at BIGINT NOT NULL,
            redeemed_at BIGINT,
            redeemed_account_id TEXT,
            redeemed_transaction_id BIGINT
        )
        """,
        "CREATE INDEX offer_codes_by_product ON offer_codes (app_id, product_id, created_at)",
    ]
}
