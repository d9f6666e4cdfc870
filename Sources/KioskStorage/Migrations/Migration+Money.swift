import KioskSQL

extension Migration {
    /// Migration 10: money. `money_events` holds what every purchase, renewal, refund and refund reversal was worth
    /// (price, tax, commission, proceeds, fixed when it happened), one row per transaction revision that moved
    /// money; the reports add them up by day and storefront. `tax_rules` holds the operator's tax rules per
    /// storefront, each from its effective date (Kiosk's built-in table applies where none does).
    static let money = Migration(
        version: 10,
        name: "money",
        statements: [
            """
            CREATE TABLE money_events (
                environment TEXT NOT NULL,
                transaction_id BIGINT NOT NULL,
                revision BIGINT NOT NULL,
                kind TEXT NOT NULL,
                occurred_at BIGINT NOT NULL,
                app_id BIGINT NOT NULL,
                account_id TEXT NOT NULL,
                original_transaction_id BIGINT NOT NULL,
                product_id TEXT NOT NULL,
                product_type TEXT NOT NULL,
                storefront TEXT NOT NULL,
                currency TEXT NOT NULL,
                units BIGINT NOT NULL,
                customer_price_minor_units BIGINT NOT NULL,
                tax_minor_units BIGINT NOT NULL,
                commission_minor_units BIGINT NOT NULL,
                proceeds_minor_units BIGINT NOT NULL,
                prices_include_tax BOOLEAN NOT NULL,
                tax_rate_basis_points BIGINT NOT NULL,
                commission_basis_points BIGINT NOT NULL,
                proceeds_reason TEXT,
                CONSTRAINT money_events_pkey PRIMARY KEY (environment, transaction_id, revision),
                CONSTRAINT money_events_app_id_fkey FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
            )
            """,
            "CREATE INDEX money_events_time_idx ON money_events (environment, occurred_at)",
            """
            CREATE TABLE tax_rules (
                storefront TEXT NOT NULL,
                effective_from BIGINT NOT NULL,
                prices_include_tax BOOLEAN NOT NULL,
                rate_basis_points BIGINT NOT NULL,
                CONSTRAINT tax_rules_pkey PRIMARY KEY (storefront, effective_from)
            )
            """,
        ]
    )
}
