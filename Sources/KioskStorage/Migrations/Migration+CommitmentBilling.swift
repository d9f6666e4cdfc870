import KioskSQL

extension Migration {
    /// Migration 18: monthly plans with a 12-month commitment (Apple's "Supporting monthly subscriptions with a
    /// 12-month commitment"). `billing_plans` holds a product's plans besides the up-front price (one row per plan
    /// type, `MONTHLY` today) with their custom prices in `billing_plan_prices`; a transaction billed monthly records
    /// where it stands in its commitment (Apple's `commitmentInfo`), and a subscription its commitment in progress and
    /// the plan its next commitment (or up-front period) renews under; a payment and a money event, the plan they
    /// were billed under. Rows from before are billed up front.
    static let commitmentBilling = Migration(
        version: 18,
        name: "commitment_billing",
        statements: [
            """
            CREATE TABLE billing_plans (
                app_id BIGINT NOT NULL,
                product_id TEXT NOT NULL,
                plan_type TEXT NOT NULL,
                price_tier BIGINT,
                CONSTRAINT billing_plans_pkey PRIMARY KEY (app_id, product_id, plan_type),
                CONSTRAINT billing_plans_product_fkey FOREIGN KEY (app_id, product_id)
                    REFERENCES products (app_id, product_id) ON DELETE CASCADE
            )
            """,
            """
            CREATE TABLE billing_plan_prices (
                app_id BIGINT NOT NULL,
                product_id TEXT NOT NULL,
                plan_type TEXT NOT NULL,
                storefront TEXT NOT NULL,
                amount_minor_units BIGINT NOT NULL,
                CONSTRAINT billing_plan_prices_pkey PRIMARY KEY (app_id, product_id, plan_type, storefront),
                CONSTRAINT billing_plan_prices_plan_fkey FOREIGN KEY (app_id, product_id, plan_type)
                    REFERENCES billing_plans (app_id, product_id, plan_type) ON DELETE CASCADE
            )
            """,
            "ALTER TABLE transactions ADD COLUMN commitment_period BIGINT",
            "ALTER TABLE transactions ADD COLUMN commitment_periods BIGINT",
            "ALTER TABLE transactions ADD COLUMN commitment_expires_at BIGINT",
            "ALTER TABLE transactions ADD COLUMN commitment_price_minor_units BIGINT",
            "ALTER TABLE subscriptions ADD COLUMN commitment_period BIGINT",
            "ALTER TABLE subscriptions ADD COLUMN commitment_periods BIGINT",
            "ALTER TABLE subscriptions ADD COLUMN commitment_expires_at BIGINT",
            "ALTER TABLE subscriptions ADD COLUMN commitment_price_minor_units BIGINT",
            "ALTER TABLE subscriptions ADD COLUMN renewal_billing_plan TEXT NOT NULL DEFAULT 'BILLED_UPFRONT'",
            "ALTER TABLE money_events ADD COLUMN billing_plan TEXT",
            "ALTER TABLE payments ADD COLUMN billing_plan TEXT",
        ]
    )
}
