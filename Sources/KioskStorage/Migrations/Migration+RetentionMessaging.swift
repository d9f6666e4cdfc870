import KioskSQL

extension Migration {
    /// Migration 16: Apple's Retention Messaging API per app and environment (images with their PNG, messages with
    /// their text as JSON, default messages per product and locale, the real-time URL, performance tests), the
    /// cancellations the real-time flow saw (in the order recorded, `seq`, since a frozen sandbox clock gives many the
    /// same time), and the apps' retention offers (`offerType` 5, both environments).
    static let retentionMessaging = Migration(
        version: 16,
        name: "retention_messaging",
        statements: [
            """
            CREATE TABLE retention_images (
                app_id BIGINT NOT NULL,
                environment TEXT NOT NULL,
                image_id TEXT NOT NULL,
                image_size TEXT NOT NULL,
                state TEXT NOT NULL,
                width BIGINT NOT NULL,
                height BIGINT NOT NULL,
                bytes BIGINT NOT NULL,
                png TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                reviewed_at BIGINT,
                CONSTRAINT retention_images_pkey PRIMARY KEY (app_id, environment, image_id),
                CONSTRAINT retention_images_app_fkey FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
            )
            """,
            """
            CREATE TABLE retention_messages (
                app_id BIGINT NOT NULL,
                environment TEXT NOT NULL,
                message_id TEXT NOT NULL,
                state TEXT NOT NULL,
                content TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                reviewed_at BIGINT,
                CONSTRAINT retention_messages_pkey PRIMARY KEY (app_id, environment, message_id),
                CONSTRAINT retention_messages_app_fkey FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
            )
            """,
            """
            CREATE TABLE retention_default_messages (
                app_id BIGINT NOT NULL,
                environment TEXT NOT NULL,
                product_id TEXT NOT NULL,
                locale TEXT NOT NULL,
                message_id TEXT NOT NULL,
                updated_at BIGINT NOT NULL,
                CONSTRAINT retention_default_messages_pkey PRIMARY KEY (app_id, environment, product_id, locale),
                CONSTRAINT retention_default_messages_app_fkey FOREIGN KEY (app_id)
                    REFERENCES apps (id) ON DELETE CASCADE
            )
            """,
            """
            CREATE TABLE retention_realtime_urls (
                app_id BIGINT NOT NULL,
                environment TEXT NOT NULL,
                url TEXT NOT NULL,
                updated_at BIGINT NOT NULL,
                CONSTRAINT retention_realtime_urls_pkey PRIMARY KEY (app_id, environment),
                CONSTRAINT retention_realtime_urls_app_fkey FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
            )
            """,
            """
            CREATE TABLE retention_performance_tests (
                request_id TEXT NOT NULL,
                app_id BIGINT NOT NULL,
                environment TEXT NOT NULL,
                original_transaction_id BIGINT NOT NULL,
                target TEXT NOT NULL,
                state TEXT NOT NULL,
                config TEXT NOT NULL,
                result TEXT,
                created_at BIGINT NOT NULL,
                finished_at BIGINT,
                CONSTRAINT retention_performance_tests_pkey PRIMARY KEY (request_id),
                CONSTRAINT retention_performance_tests_app_fkey FOREIGN KEY (app_id)
                    REFERENCES apps (id) ON DELETE CASCADE
            )
            """,
            """
            CREATE INDEX retention_performance_tests_app
                ON retention_performance_tests (app_id, environment, created_at)
            """,
            """
            CREATE TABLE retention_events (
                request_id TEXT NOT NULL,
                app_id BIGINT NOT NULL,
                environment TEXT NOT NULL,
                original_transaction_id BIGINT NOT NULL,
                created_at BIGINT NOT NULL,
                seq BIGINT NOT NULL,
                event TEXT NOT NULL,
                CONSTRAINT retention_events_pkey PRIMARY KEY (request_id),
                CONSTRAINT retention_events_app_fkey FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
            )
            """,
            "CREATE INDEX retention_events_app ON retention_events (app_id, environment, seq)",
            """
            CREATE TABLE retention_offers (
                app_id BIGINT NOT NULL,
                product_id TEXT NOT NULL,
                identifier TEXT NOT NULL,
                reference_name TEXT NOT NULL,
                schedule TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                CONSTRAINT retention_offers_pkey PRIMARY KEY (app_id, product_id, identifier),
                CONSTRAINT retention_offers_product_fkey FOREIGN KEY (app_id, product_id)
                    REFERENCES products (app_id, product_id) ON DELETE CASCADE
            )
            """,
        ]
    )
}
