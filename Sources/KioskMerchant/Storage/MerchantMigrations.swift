import KioskSQL

/// The merchant's own schema, in its own database (never the store's). Written once for SQLite and PostgreSQL:
/// ids as TEXT, timestamps as BIGINT milliseconds since 1970, amounts as BIGINT whole units.
enum MerchantMigrations {
    static let all: [Migration] = [ledger, spends, stateOrder, appTransactions, userReads]

    static let ledger = Migration(
        version: 1, name: "merchant_ledger",
        statements: [
            // An order: what a user is about to buy; `app_account_token` travels with the payment.
            """
            CREATE TABLE orders (
                id TEXT NOT NULL,
                bundle_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                product_id TEXT NOT NULL,
                quantity BIGINT NOT NULL,
                app_account_token TEXT NOT NULL,
                state TEXT NOT NULL,
                transaction_id TEXT,
                created_at BIGINT NOT NULL,
                delivered_at BIGINT,
                CONSTRAINT orders_pkey PRIMARY KEY (id),
                CONSTRAINT orders_app_account_token_key UNIQUE (app_account_token)
            )
            """,
            "CREATE INDEX orders_user ON orders (user_id, created_at)",
            // The grant ledger: one row per transaction ever granted, whatever told us of it first. The key makes
            // a second grant of one transaction impossible; `state_signed_date` is the signing date of the
            // transaction state applied last, so an older state arriving late changes nothing.
            """
            CREATE TABLE grants (
                environment TEXT NOT NULL,
                transaction_id TEXT NOT NULL,
                original_transaction_id TEXT NOT NULL,
                bundle_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                order_id TEXT,
                product_id TEXT NOT NULL,
                product_kind TEXT NOT NULL,
                quantity BIGINT NOT NULL,
                entitlement TEXT,
                balance_name TEXT,
                balance_amount BIGINT NOT NULL,
                purchase_date BIGINT NOT NULL,
                expires_date BIGINT,
                revoked_date BIGINT,
                revocation_reason TEXT,
                state_signed_date BIGINT NOT NULL,
                source TEXT NOT NULL,
                granted_at BIGINT NOT NULL,
                CONSTRAINT grants_pkey PRIMARY KEY (environment, transaction_id)
            )
            """,
            "CREATE INDEX grants_user ON grants (user_id)",
            "CREATE INDEX grants_original ON grants (environment, original_transaction_id)",
            // Every change to a user's ledger, for history and `explain`.
            """
            CREATE TABLE ledger_events (
                user_id TEXT NOT NULL,
                at BIGINT NOT NULL,
                environment TEXT NOT NULL,
                transaction_id TEXT NOT NULL,
                product_id TEXT NOT NULL,
                kind TEXT NOT NULL,
                source TEXT NOT NULL,
                detail TEXT NOT NULL
            )
            """,
            "CREATE INDEX ledger_events_user ON ledger_events (user_id, at)",
            // Purchases the merchant learnt of but cannot tie to a user yet (no order, no earlier grant): granted
            // when the app sends them, listed by reconciliation.
            """
            CREATE TABLE unclaimed_transactions (
                environment TEXT NOT NULL,
                transaction_id TEXT NOT NULL,
                original_transaction_id TEXT NOT NULL,
                bundle_id TEXT NOT NULL,
                product_id TEXT NOT NULL,
                revoked_date BIGINT,
                state_signed_date BIGINT NOT NULL,
                received_at BIGINT NOT NULL,
                CONSTRAINT unclaimed_transactions_pkey PRIMARY KEY (environment, transaction_id)
            )
            """,
            // App Store Server Notifications taken, by UUID: a retry of one is recognised and changes nothing.
            """
            CREATE TABLE received_notifications (
                uuid TEXT NOT NULL,
                notification_type TEXT NOT NULL,
                subtype TEXT,
                environment TEXT NOT NULL,
                bundle_id TEXT NOT NULL,
                transaction_id TEXT,
                signed_date BIGINT NOT NULL,
                outcome TEXT NOT NULL,
                received_at BIGINT NOT NULL,
                CONSTRAINT received_notifications_pkey PRIMARY KEY (uuid)
            )
            """,
            // The latest renewal info per subscription: auto-renew and billing grace period.
            """
            CREATE TABLE renewal_states (
                environment TEXT NOT NULL,
                original_transaction_id TEXT NOT NULL,
                auto_renew_status BIGINT NOT NULL,
                auto_renew_product_id TEXT NOT NULL,
                expiration_intent BIGINT,
                grace_period_expires_date BIGINT,
                signed_date BIGINT NOT NULL,
                CONSTRAINT renewal_states_pkey PRIMARY KEY (environment, original_transaction_id)
            )
            """,
        ])

    static let spends = Migration(
        version: 2, name: "merchant_balance_spends",
        statements: [
            // What users spent from their balances; the key makes a retried spend count once.
            """
            CREATE TABLE balance_spends (
                user_id TEXT NOT NULL,
                name TEXT NOT NULL,
                amount BIGINT NOT NULL,
                idempotency_key TEXT NOT NULL,
                reason TEXT,
                spent_at BIGINT NOT NULL,
                CONSTRAINT balance_spends_pkey PRIMARY KEY (user_id, idempotency_key)
            )
            """,
            "CREATE INDEX balance_spends_user ON balance_spends (user_id, name)",
            // One row per balance, updated first by every spend: on PostgreSQL its row lock makes spends of one
            // balance take turns, so two at once cannot both see enough and overdraw it.
            """
            CREATE TABLE balance_locks (
                user_id TEXT NOT NULL,
                name TEXT NOT NULL,
                spends BIGINT NOT NULL,
                CONSTRAINT balance_locks_pkey PRIMARY KEY (user_id, name)
            )
            """,
        ])

    /// What decides between two states of one transaction besides their dates (see `PurchaseFacts.supersedes`):
    /// the store's revision of the state held, whether it reinstated the transaction after a revocation, and a
    /// count of the changes made to the row, on which every update is conditional and by which a transaction's
    /// history lines keep their order within one millisecond. A purchase parked without a user keeps its whole
    /// state (reason, expiry), applied when the app delivers it.
    static let stateOrder = Migration(
        version: 3, name: "merchant_state_order",
        statements: [
            "ALTER TABLE grants ADD COLUMN state_revision BIGINT",
            "ALTER TABLE grants ADD COLUMN reinstated BOOLEAN NOT NULL DEFAULT FALSE",
            "ALTER TABLE grants ADD COLUMN state_changes BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE unclaimed_transactions ADD COLUMN state_revision BIGINT",
            "ALTER TABLE unclaimed_transactions ADD COLUMN reinstated BOOLEAN NOT NULL DEFAULT FALSE",
            "ALTER TABLE unclaimed_transactions ADD COLUMN state_changes BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE unclaimed_transactions ADD COLUMN revocation_reason TEXT",
            "ALTER TABLE unclaimed_transactions ADD COLUMN expires_date BIGINT",
            "ALTER TABLE ledger_events ADD COLUMN state_change BIGINT NOT NULL DEFAULT 0",
        ])

    /// Version 4: which user each app transaction (the customer's `appTransactionId`) belongs to, learnt from the
    /// signed transactions the ledger applies, so a notification about the customer rather than a purchase
    /// (`RESCIND_CONSENT`) reaches its user.
    static let appTransactions = Migration(
        version: 4, name: "merchant_app_transactions",
        statements: [
            """
            CREATE TABLE customer_app_transactions (
                environment TEXT NOT NULL,
                app_transaction_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                bundle_id TEXT NOT NULL,
                CONSTRAINT customer_app_transactions_pkey PRIMARY KEY (environment, app_transaction_id, user_id)
            )
            """
        ])

    /// Version 5: what every delivery's answer reads of its user, found without reading the user's other grants. A
    /// game's player can hold thousands of consumable grants: the entitlement read searched them all for the few
    /// that unlock something, and the balance sums read each grant's whole row. The first index holds only the
    /// grants that unlock an entitlement, in the order the read wants them; the second holds what the balance sums
    /// need, so they read the index alone.
    static let userReads = Migration(
        version: 5, name: "merchant_user_reads",
        statements: [
            """
            CREATE INDEX grants_user_entitlements ON grants (user_id, purchase_date, transaction_id)
            WHERE entitlement IS NOT NULL
            """,
            """
            CREATE INDEX grants_user_balances ON grants (user_id, balance_name, revoked_date, balance_amount)
            WHERE balance_name IS NOT NULL
            """,
        ])
}
