import KioskSQL

extension Migration {
    /// Server API tables: app transactions (one per account and app, Apple's `appTransactionId`), consumption
    /// reports, and each transaction's last-modified time (an account's history is sorted and paged by it;
    /// `anyTransactionId` lookups go by original transaction id too).
    static let serverAPIStatements: [String] = [
        "ALTER TABLE transactions ADD COLUMN modified_at BIGINT NOT NULL DEFAULT 0",
        "UPDATE transactions SET modified_at = purchase_date",
        """
        CREATE INDEX transactions_account_modified_idx ON transactions (environment, account_id, app_id, modified_at, id)
        """,
        "CREATE INDEX transactions_original_idx ON transactions (environment, original_transaction_id)",
        "CREATE INDEX transactions_order_id_idx ON transactions (order_id)",
        """
        CREATE TABLE app_transactions (
            environment TEXT NOT NULL,
            id BIGINT NOT NULL,
            app_id BIGINT NOT NULL,
            account_id TEXT NOT NULL,
            original_purchase_date BIGINT NOT NULL,
            CONSTRAINT app_transactions_pkey PRIMARY KEY (environment, id),
            CONSTRAINT app_transactions_account_key UNIQUE (environment, app_id, account_id),
            CONSTRAINT app_transactions_app_id_fkey FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
        )
        """,
        """
        CREATE TABLE consumption_reports (
            environment TEXT NOT NULL,
            transaction_id BIGINT NOT NULL,
            app_id BIGINT NOT NULL,
            api_version BIGINT NOT NULL,
            body TEXT NOT NULL,
            received_at BIGINT NOT NULL,
            CONSTRAINT consumption_reports_pkey PRIMARY KEY (environment, transaction_id),
            CONSTRAINT consumption_reports_app_id_fkey FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
        )
        """,
    ]
}
