import KioskSQL

extension Migration {
    /// Server notification tables: every notification (the same payload and UUID on every retry), each delivery
    /// attempt, renewal-date extension requests (single and mass) and the extensions each subscription got
    /// (at most two a year).
    static let notificationStatements: [String] = [
        """
        CREATE TABLE notifications (
            uuid TEXT NOT NULL,
            environment TEXT NOT NULL,
            app_id BIGINT NOT NULL,
            notification_type TEXT NOT NULL,
            subtype TEXT,
            transaction_id BIGINT,
            original_transaction_id BIGINT,
            signed_payload TEXT NOT NULL,
            test_token TEXT,
            state TEXT NOT NULL,
            next_attempt_at BIGINT,
            created_at BIGINT NOT NULL,
            CONSTRAINT notifications_pkey PRIMARY KEY (uuid),
            CONSTRAINT notifications_test_token_key UNIQUE (test_token),
            CONSTRAINT notifications_app_id_fkey FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
        )
        """,
        "CREATE INDEX notifications_app_created_idx ON notifications (environment, app_id, created_at)",
        "CREATE INDEX notifications_due_idx ON notifications (state, next_attempt_at)",
        """
        CREATE TABLE notification_attempts (
            notification_uuid TEXT NOT NULL,
            attempt BIGINT NOT NULL,
            url TEXT NOT NULL,
            attempted_at BIGINT NOT NULL,
            result TEXT NOT NULL,
            http_status BIGINT,
            CONSTRAINT notification_attempts_pkey PRIMARY KEY (notification_uuid, attempt, url),
            CONSTRAINT notification_attempts_uuid_fkey FOREIGN KEY (notification_uuid)
                REFERENCES notifications (uuid) ON DELETE CASCADE
        )
        """,
        """
        CREATE TABLE renewal_extensions (
            environment TEXT NOT NULL,
            app_id BIGINT NOT NULL,
            request_identifier TEXT NOT NULL,
            product_id TEXT,
            original_transaction_id BIGINT,
            extend_by_days BIGINT NOT NULL,
            reason_code BIGINT NOT NULL,
            storefront_country_codes TEXT,
            created_at BIGINT NOT NULL,
            completed_at BIGINT,
            succeeded_count BIGINT NOT NULL DEFAULT 0,
            failed_count BIGINT NOT NULL DEFAULT 0,
            web_order_line_item_id BIGINT,
            effective_date BIGINT,
            CONSTRAINT renewal_extensions_pkey PRIMARY KEY (environment, app_id, request_identifier),
            CONSTRAINT renewal_extensions_app_id_fkey FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
        )
        """,
        """
        CREATE TABLE subscription_extensions (
            environment TEXT NOT NULL,
            original_transaction_id BIGINT NOT NULL,
            request_identifier TEXT NOT NULL,
            extend_by_days BIGINT NOT NULL,
            extended_at BIGINT NOT NULL,
            CONSTRAINT subscription_extensions_pkey
                PRIMARY KEY (environment, original_transaction_id, request_identifier)
        )
        """,
    ]
}
