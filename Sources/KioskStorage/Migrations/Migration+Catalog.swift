import KioskSQL

extension Migration {
    /// Migration 1: the catalog — settings, sequences, apps, products with their children, subscription groups,
    /// testers and In-App Purchase keys.
    ///
    /// Constraint names are spelled out so PostgreSQL reports the names `UniqueConstraint` knows. Products keep
    /// no foreign key to their subscription group: a deleted product still names its group, and must not stop
    /// the group from being deleted.
    static let catalog = Migration(
        version: 1,
        name: "catalog",
        statements: [
            """
            CREATE TABLE settings (
                key TEXT NOT NULL,
                value TEXT NOT NULL,
                CONSTRAINT settings_pkey PRIMARY KEY (key)
            )
            """,
            """
            CREATE TABLE sequences (
                name TEXT NOT NULL,
                next_value BIGINT NOT NULL,
                CONSTRAINT sequences_pkey PRIMARY KEY (name)
            )
            """,
            """
            CREATE TABLE apps (
                id BIGINT NOT NULL,
                bundle_id TEXT NOT NULL,
                name TEXT NOT NULL,
                shared_secret TEXT,
                production_notification_urls TEXT NOT NULL,
                sandbox_notification_urls TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                CONSTRAINT apps_pkey PRIMARY KEY (id),
                CONSTRAINT apps_bundle_id_key UNIQUE (bundle_id)
            )
            """,
            """
            CREATE TABLE subscription_groups (
                id BIGINT NOT NULL,
                app_id BIGINT NOT NULL,
                reference_name TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                CONSTRAINT subscription_groups_pkey PRIMARY KEY (id),
                CONSTRAINT subscription_groups_reference_name_key UNIQUE (app_id, reference_name),
                CONSTRAINT subscription_groups_app_id_fkey FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
            )
            """,
            """
            CREATE TABLE subscription_group_localizations (
                group_id BIGINT NOT NULL,
                locale TEXT NOT NULL,
                name TEXT NOT NULL,
                custom_app_name TEXT,
                CONSTRAINT subscription_group_localizations_pkey PRIMARY KEY (group_id, locale),
                CONSTRAINT subscription_group_localizations_group_id_fkey FOREIGN KEY (group_id)
                    REFERENCES subscription_groups (id) ON DELETE CASCADE
            )
            """,
            """
            CREATE TABLE products (
                app_id BIGINT NOT NULL,
                product_id TEXT NOT NULL,
                reference_name TEXT NOT NULL,
                type TEXT NOT NULL,
                price_tier BIGINT,
                cleared_for_sale BOOLEAN NOT NULL,
                review_state TEXT NOT NULL,
                family_shareable BOOLEAN NOT NULL,
                subscription_group_id BIGINT,
                subscription_level BIGINT,
                duration TEXT,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                deleted_at BIGINT,
                CONSTRAINT products_pkey PRIMARY KEY (app_id, product_id),
                CONSTRAINT products_app_id_fkey FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
            )
            """,
            "CREATE INDEX products_subscription_group_id_idx ON products (subscription_group_id)",
            """
            CREATE TABLE product_localizations (
                app_id BIGINT NOT NULL,
                product_id TEXT NOT NULL,
                locale TEXT NOT NULL,
                display_name TEXT NOT NULL,
                description TEXT NOT NULL,
                CONSTRAINT product_localizations_pkey PRIMARY KEY (app_id, product_id, locale),
                CONSTRAINT product_localizations_product_fkey FOREIGN KEY (app_id, product_id)
                    REFERENCES products (app_id, product_id) ON DELETE CASCADE
            )
            """,
            """
            CREATE TABLE product_prices (
                app_id BIGINT NOT NULL,
                product_id TEXT NOT NULL,
                storefront TEXT NOT NULL,
                amount_minor_units BIGINT NOT NULL,
                CONSTRAINT product_prices_pkey PRIMARY KEY (app_id, product_id, storefront),
                CONSTRAINT product_prices_product_fkey FOREIGN KEY (app_id, product_id)
                    REFERENCES products (app_id, product_id) ON DELETE CASCADE
            )
            """,
            // `offer_storefront` is '' for an offer that applies in every storefront (a NULL could not be a key).
            """
            CREATE TABLE introductory_offers (
                app_id BIGINT NOT NULL,
                product_id TEXT NOT NULL,
                offer_storefront TEXT NOT NULL,
                payment_mode TEXT NOT NULL,
                period TEXT NOT NULL,
                number_of_periods BIGINT NOT NULL,
                price_tier BIGINT,
                CONSTRAINT introductory_offers_pkey PRIMARY KEY (app_id, product_id, offer_storefront),
                CONSTRAINT introductory_offers_product_fkey FOREIGN KEY (app_id, product_id)
                    REFERENCES products (app_id, product_id) ON DELETE CASCADE
            )
            """,
            """
            CREATE TABLE introductory_offer_prices (
                app_id BIGINT NOT NULL,
                product_id TEXT NOT NULL,
                offer_storefront TEXT NOT NULL,
                storefront TEXT NOT NULL,
                amount_minor_units BIGINT NOT NULL,
                CONSTRAINT introductory_offer_prices_pkey
                    PRIMARY KEY (app_id, product_id, offer_storefront, storefront),
                CONSTRAINT introductory_offer_prices_offer_fkey FOREIGN KEY (app_id, product_id, offer_storefront)
                    REFERENCES introductory_offers (app_id, product_id, offer_storefront) ON DELETE CASCADE
            )
            """,
            """
            CREATE TABLE promotional_offers (
                app_id BIGINT NOT NULL,
                product_id TEXT NOT NULL,
                identifier TEXT NOT NULL,
                reference_name TEXT NOT NULL,
                payment_mode TEXT NOT NULL,
                period TEXT NOT NULL,
                number_of_periods BIGINT NOT NULL,
                price_tier BIGINT,
                CONSTRAINT promotional_offers_pkey PRIMARY KEY (app_id, product_id, identifier),
                CONSTRAINT promotional_offers_product_fkey FOREIGN KEY (app_id, product_id)
                    REFERENCES products (app_id, product_id) ON DELETE CASCADE
            )
            """,
            """
            CREATE TABLE promotional_offer_prices (
                app_id BIGINT NOT NULL,
                product_id TEXT NOT NULL,
                offer_identifier TEXT NOT NULL,
                storefront TEXT NOT NULL,
                amount_minor_units BIGINT NOT NULL,
                CONSTRAINT promotional_offer_prices_pkey
                    PRIMARY KEY (app_id, product_id, offer_identifier, storefront),
                CONSTRAINT promotional_offer_prices_offer_fkey FOREIGN KEY (app_id, product_id, offer_identifier)
                    REFERENCES promotional_offers (app_id, product_id, identifier) ON DELETE CASCADE
            )
            """,
            """
            CREATE TABLE testers (
                id TEXT NOT NULL,
                email TEXT NOT NULL,
                password_hash TEXT NOT NULL,
                first_name TEXT NOT NULL,
                last_name TEXT NOT NULL,
                storefront TEXT NOT NULL,
                interrupt_purchases BOOLEAN NOT NULL,
                ask_to_buy BOOLEAN NOT NULL,
                renewal_rate TEXT NOT NULL,
                purchase_history_cleared_at BIGINT,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                CONSTRAINT testers_pkey PRIMARY KEY (id)
            )
            """,
            "CREATE UNIQUE INDEX testers_email_key ON testers (lower(email))",
            """
            CREATE TABLE iap_keys (
                id TEXT NOT NULL,
                app_id BIGINT NOT NULL,
                name TEXT NOT NULL,
                public_key_pem TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                revoked_at BIGINT,
                CONSTRAINT iap_keys_pkey PRIMARY KEY (id),
                CONSTRAINT iap_keys_app_id_fkey FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
            )
            """,
            "CREATE INDEX iap_keys_app_id_idx ON iap_keys (app_id, created_at)",
        ]
    )
}
