import KioskSQL

extension Migration {
    /// Migration 8: customers and sandbox testers become one `accounts` table, told apart by `environment`; an
    /// email is unique within its environment (as before, the same email may be both a tester and a customer). The
    /// sandbox-only settings are NULL for production accounts.
    static let accounts = Migration(
        version: 8,
        name: "accounts",
        statements: [
            """
            CREATE TABLE accounts (
                id TEXT NOT NULL,
                environment TEXT NOT NULL,
                email TEXT NOT NULL,
                password_hash TEXT NOT NULL,
                first_name TEXT NOT NULL,
                last_name TEXT NOT NULL,
                storefront TEXT NOT NULL,
                payment_outcome TEXT NOT NULL,
                interrupt_purchases BOOLEAN,
                ask_to_buy BOOLEAN,
                renewal_rate TEXT,
                purchase_history_cleared_at BIGINT,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                CONSTRAINT accounts_pkey PRIMARY KEY (id)
            )
            """,
            "CREATE UNIQUE INDEX accounts_email_key ON accounts (environment, lower(email))",
            """
            INSERT INTO accounts (id, environment, email, password_hash, first_name, last_name, storefront,
                payment_outcome, interrupt_purchases, ask_to_buy, renewal_rate, purchase_history_cleared_at,
                created_at, updated_at)
            SELECT id, 'sandbox', email, password_hash, first_name, last_name, storefront, payment_outcome,
                interrupt_purchases, ask_to_buy, renewal_rate, purchase_history_cleared_at, created_at, updated_at
            FROM testers
            """,
            """
            INSERT INTO accounts (id, environment, email, password_hash, first_name, last_name, storefront,
                payment_outcome, created_at, updated_at)
            SELECT id, 'production', email, password_hash, first_name, last_name, storefront, payment_outcome,
                created_at, updated_at
            FROM customers
            """,
            "DROP TABLE testers",
            "DROP TABLE customers",
        ])
}
