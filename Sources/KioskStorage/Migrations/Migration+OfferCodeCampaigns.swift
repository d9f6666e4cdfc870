import KioskSQL

extension Migration {
    /// Migration 21: offer codes as App Store Connect models them. A campaign holds the terms (pricing as JSON, like
    /// `offer_codes`) and the customers it is for; a batch holds either one-time codes (rows of `offer_codes` with
    /// its `batch_id`) or one custom code, with the number of customers who redeemed it and who they were.
    static let offerCodeCampaigns = Migration(
        version: 21,
        name: "offer_code_campaigns",
        statements: [
            """
            CREATE TABLE offer_code_campaigns (
                id BIGINT PRIMARY KEY,
                app_id BIGINT NOT NULL,
                product_id TEXT NOT NULL,
                name TEXT NOT NULL,
                eligibilities TEXT NOT NULL,
                introductory_offer_rule TEXT NOT NULL,
                payment_mode TEXT NOT NULL,
                period TEXT NOT NULL,
                number_of_periods INTEGER NOT NULL,
                pricing_json TEXT NOT NULL,
                active BOOLEAN NOT NULL,
                created_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX offer_code_campaigns_by_product ON offer_code_campaigns (app_id, product_id, id)",
            """
            CREATE TABLE offer_code_batches (
                id BIGINT PRIMARY KEY,
                campaign_id BIGINT NOT NULL REFERENCES offer_code_campaigns (id),
                app_id BIGINT NOT NULL,
                custom_code TEXT,
                number_of_codes BIGINT NOT NULL,
                expiration_date BIGINT,
                environment TEXT,
                active BOOLEAN NOT NULL,
                redemptions BIGINT NOT NULL,
                created_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX offer_code_batches_by_campaign ON offer_code_batches (campaign_id, id)",
            "CREATE UNIQUE INDEX offer_code_batches_custom_code ON offer_code_batches (app_id, custom_code)",
            """
            CREATE TABLE offer_code_redemptions (
                batch_id BIGINT NOT NULL REFERENCES offer_code_batches (id),
                account_id TEXT NOT NULL,
                redeemed_at BIGINT NOT NULL,
                transaction_id BIGINT,
                CONSTRAINT offer_code_redemptions_pkey PRIMARY KEY (batch_id, account_id)
            )
            """,
            "ALTER TABLE offer_codes ADD COLUMN batch_id BIGINT",
            "CREATE INDEX offer_codes_by_batch ON offer_codes (batch_id)",
        ]
    )
}
