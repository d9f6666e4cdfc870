import KioskSQL

extension Migration {
    /// Migration 7: the win-back offers of auto-renewable products and their custom prices, stored like
    /// promotional offers plus their eligibility (months, dates as BIGINT milliseconds, priority).
    static let winBackOffers = Migration(
        version: 7,
        name: "win_back_offers",
        statements: [
            """
            CREATE TABLE win_back_offers (
                app_id BIGINT NOT NULL,
                product_id TEXT NOT NULL,
                identifier TEXT NOT NULL,
                reference_name TEXT NOT NULL,
                payment_mode TEXT NOT NULL,
                period TEXT NOT NULL,
                number_of_periods BIGINT NOT NULL,
                price_tier BIGINT,
                paid_months BIGINT NOT NULL,
                minimum_months_since BIGINT NOT NULL,
                maximum_months_since BIGINT,
                wait_months BIGINT,
                start_date BIGINT,
                end_date BIGINT,
                priority TEXT NOT NULL,
                CONSTRAINT win_back_offers_pkey PRIMARY KEY (app_id, product_id, identifier),
                CONSTRAINT win_back_offers_product_fkey FOREIGN KEY (app_id, product_id)
                    REFERENCES products (app_id, product_id) ON DELETE CASCADE
            )
            """,
            """
            CREATE TABLE win_back_offer_prices (
                app_id BIGINT NOT NULL,
                product_id TEXT NOT NULL,
                offer_identifier TEXT NOT NULL,
                storefront TEXT NOT NULL,
                amount_minor_units BIGINT NOT NULL,
                CONSTRAINT win_back_offer_prices_pkey
                    PRIMARY KEY (app_id, product_id, offer_identifier, storefront),
                CONSTRAINT win_back_offer_prices_offer_fkey FOREIGN KEY (app_id, product_id, offer_identifier)
                    REFERENCES win_back_offers (app_id, product_id, identifier) ON DELETE CASCADE
            )
            """,
        ]
    )
}
