import KioskSQL

extension Migration {
    /// Migration 2: purchases — customer accounts, sessions, payments, transactions, the payment queue and armed
    /// test failures; testers gain a payment outcome.
    ///
    /// Account ids are lower-case UUID text with no foreign key: an account is a customer (production) or a tester
    /// (sandbox), told apart by `environment`. Payments and queue entries name transactions without foreign keys
    /// too: a payment keeps its transaction id after the transaction is deleted, and the repository deletes the
    /// queue entries itself. Every app-scoped row goes with its app (ON DELETE CASCADE), as in migration 1.
    static let purchases = Migration(
        version: 2,
        name: "purchases",
        statements: [
            "ALTER TABLE testers ADD COLUMN payment_outcome TEXT NOT NULL DEFAULT 'approve'",
            """
            CREATE TABLE customers (
                id TEXT NOT NULL,
                email TEXT NOT NULL,
                password_hash TEXT NOT NULL,
                first_name TEXT NOT NULL,
                last_name TEXT NOT NULL,
                storefront TEXT NOT NULL,
                payment_outcome TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                CONSTRAINT customers_pkey PRIMARY KEY (id)
            )
            """,
            "CREATE UNIQUE INDEX customers_email_key ON customers (lower(email))",
            """
            CREATE TABLE sessions (
                token_hash TEXT NOT NULL,
                environment TEXT NOT NULL,
                account_id TEXT NOT NULL,
                app_id BIGINT NOT NULL,
                device_id TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                CONSTRAINT sessions_pkey PRIMARY KEY (token_hash),
                CONSTRAINT sessions_app_id_fkey FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
            )
            """,
            // Several payments may have no idempotency key: NULLs never collide in a unique constraint.
            """
            CREATE TABLE payments (
                id TEXT NOT NULL,
                environment TEXT NOT NULL,
                account_id TEXT NOT NULL,
                app_id BIGINT NOT NULL,
                idempotency_key TEXT,
                product_id TEXT NOT NULL,
                quantity BIGINT NOT NULL,
                application_username TEXT,
                app_account_token TEXT,
                state TEXT NOT NULL,
                transaction_id BIGINT,
                error_code BIGINT,
                error_reason TEXT,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                CONSTRAINT payments_pkey PRIMARY KEY (id),
                CONSTRAINT payments_idempotency_key_key UNIQUE (account_id, app_id, idempotency_key),
                CONSTRAINT payments_app_id_fkey FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
            )
            """,
            "CREATE INDEX payments_app_id_idx ON payments (app_id, environment, created_at)",
            """
            CREATE TABLE transactions (
                environment TEXT NOT NULL,
                id BIGINT NOT NULL,
                app_id BIGINT NOT NULL,
                account_id TEXT NOT NULL,
                product_id TEXT NOT NULL,
                product_type TEXT NOT NULL,
                original_transaction_id BIGINT NOT NULL,
                purchase_date BIGINT NOT NULL,
                original_purchase_date BIGINT NOT NULL,
                quantity BIGINT NOT NULL,
                price_minor_units BIGINT NOT NULL,
                currency TEXT NOT NULL,
                storefront TEXT NOT NULL,
                storefront_id BIGINT NOT NULL,
                application_username TEXT,
                app_account_token TEXT,
                order_id TEXT NOT NULL,
                subscription_group_id BIGINT,
                web_order_line_item_id BIGINT,
                expires_date BIGINT,
                revocation_date BIGINT,
                revocation_reason BIGINT,
                signed_transaction TEXT NOT NULL,
                transaction_receipt TEXT NOT NULL,
                CONSTRAINT transactions_pkey PRIMARY KEY (environment, id),
                CONSTRAINT transactions_app_id_fkey FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
            )
            """,
            "CREATE INDEX transactions_account_idx ON transactions (environment, account_id, app_id)",
            """
            CREATE TABLE queue_entries (
                sequence BIGINT NOT NULL,
                environment TEXT NOT NULL,
                account_id TEXT NOT NULL,
                app_id BIGINT NOT NULL,
                state TEXT NOT NULL,
                payment_id TEXT,
                product_id TEXT NOT NULL,
                quantity BIGINT NOT NULL,
                transaction_id BIGINT,
                restore_transaction_id BIGINT,
                error_code BIGINT,
                error_reason TEXT,
                created_at BIGINT NOT NULL,
                finished_at BIGINT,
                CONSTRAINT queue_entries_pkey PRIMARY KEY (sequence),
                CONSTRAINT queue_entries_app_id_fkey FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
            )
            """,
            "CREATE INDEX queue_entries_account_idx ON queue_entries (environment, account_id, app_id, sequence)",
            "CREATE INDEX queue_entries_payment_idx ON queue_entries (payment_id, sequence)",
            """
            CREATE TABLE armed_failures (
                app_id BIGINT NOT NULL,
                api TEXT NOT NULL,
                remaining BIGINT NOT NULL,
                error_code BIGINT NOT NULL,
                CONSTRAINT armed_failures_pkey PRIMARY KEY (app_id, api),
                CONSTRAINT armed_failures_app_id_fkey FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
            )
            """,
        ]
    )
}
