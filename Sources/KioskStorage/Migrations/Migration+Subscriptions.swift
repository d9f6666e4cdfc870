import KioskSQL

extension Migration {
    /// Migration 4: subscriptions — the subscription rows the renewal scheduler drives, what transactions say about
    /// renewals, offers, upgrades and refunds, the apps' grace-period and sandbox-retry settings, and (beside the
    /// code that owns them) offer codes and notification retries.
    static let subscriptions = Migration(
        version: 4,
        name: "subscriptions",
        statements: subscriptionStatements + offerStatements + notificationRetryStatements
    )

    /// One row per subscription (environment, original transaction id). `next_event_at` is the scheduler's job:
    /// the index finds due rows in time order.
    static let subscriptionStatements: [String] = [
        "ALTER TABLE transactions ADD COLUMN revocation_type TEXT",
        "ALTER TABLE transactions ADD COLUMN transaction_reason TEXT NOT NULL DEFAULT 'PURCHASE'",
        "ALTER TABLE transactions ADD COLUMN is_upgraded BOOLEAN NOT NULL DEFAULT FALSE",
        "ALTER TABLE transactions ADD COLUMN offer_type BIGINT",
        "ALTER TABLE transactions ADD COLUMN offer_identifier TEXT",
        "ALTER TABLE transactions ADD COLUMN offer_discount_type TEXT",
        "ALTER TABLE transactions ADD COLUMN offer_period TEXT",
        "ALTER TABLE transactions ADD COLUMN refunded_minor_units BIGINT NOT NULL DEFAULT 0",
        "ALTER TABLE apps ADD COLUMN billing_grace_period_days BIGINT",
        "ALTER TABLE apps ADD COLUMN sandbox_notification_retries BOOLEAN NOT NULL DEFAULT TRUE",
        """
        CREATE TABLE subscriptions (
            environment TEXT NOT NULL,
            original_transaction_id BIGINT NOT NULL,
            app_id BIGINT NOT NULL,
            account_id TEXT NOT NULL,
            group_id BIGINT NOT NULL,
            product_id TEXT NOT NULL,
            latest_transaction_id BIGINT NOT NULL,
            auto_renew_product_id TEXT NOT NULL,
            auto_renew_enabled BOOLEAN NOT NULL,
            state TEXT NOT NULL,
            expires_at BIGINT NOT NULL,
            next_event_at BIGINT,
            expiration_intent BIGINT,
            billing_retry_started_at BIGINT,
            grace_period_expires_at BIGINT,
            price_increase_status BIGINT,
            renewal_price_minor_units BIGINT,
            renewal_count BIGINT NOT NULL,
            fail_next_renewal BOOLEAN NOT NULL,
            offer_type BIGINT,
            offer_identifier TEXT,
            offer_discount_type TEXT,
            offer_period TEXT,
            offer_periods_remaining BIGINT NOT NULL,
            created_at BIGINT NOT NULL,
            updated_at BIGINT NOT NULL,
            CONSTRAINT subscriptions_pkey PRIMARY KEY (environment, original_transaction_id),
            CONSTRAINT subscriptions_app_id_fkey FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
        )
        """,
        "CREATE INDEX subscriptions_due_idx ON subscriptions (environment, next_event_at)",
        "CREATE INDEX subscriptions_account_idx ON subscriptions (environment, app_id, account_id, group_id)",
    ]
}
