import KioskSQL

/// Readable names for the schema's unique constraints, the same on both engines.
///
/// SQLite reports a violated constraint by its columns (`UNIQUE constraint failed: apps.bundle_id`) or, for an
/// expression index, by the index's name; PostgreSQL reports the constraint's or index's name
/// (`apps_bundle_id_key`). Both spellings map to one name such as `apps.bundle_id`.
enum UniqueConstraint {
    /// Engine spelling → readable name.
    private static let names: [String: String] = [
        // SQLite: the columns of the violated key.
        "apps.id": "apps.id",
        "apps.bundle_id": "apps.bundle_id",
        "products.app_id, products.product_id": "products.product_id",
        "subscription_groups.id": "subscription_groups.id",
        "subscription_groups.app_id, subscription_groups.reference_name": "subscription_groups.reference_name",
        "accounts.id": "accounts.id",
        "index 'accounts_email_key'": "accounts.email",
        "iap_keys.id": "iap_keys.id",
        "sessions.token_hash": "sessions.token_hash",
        "payments.id": "payments.id",
        "payments.account_id, payments.app_id, payments.idempotency_key": "payments.idempotency_key",
        "transactions.environment, transactions.id": "transactions.id",
        "queue_entries.sequence": "queue_entries.sequence",
        "armed_failures.app_id, armed_failures.api": "armed_failures.api",
        "renewal_extensions.environment, renewal_extensions.app_id, renewal_extensions.request_identifier":
            "renewal_extensions.request_identifier",
        "retention_events.request_id": "retention_events.request_id",
        "retention_performance_tests.app_id, retention_performance_tests.environment":
            "retention_performance_tests.pending",
        // PostgreSQL: constraint and index names, as the migrations declare them.
        "apps_pkey": "apps.id",
        "apps_bundle_id_key": "apps.bundle_id",
        "products_pkey": "products.product_id",
        "subscription_groups_pkey": "subscription_groups.id",
        "subscription_groups_reference_name_key": "subscription_groups.reference_name",
        "accounts_pkey": "accounts.id",
        "accounts_email_key": "accounts.email",
        "iap_keys_pkey": "iap_keys.id",
        "sessions_pkey": "sessions.token_hash",
        "payments_pkey": "payments.id",
        "payments_idempotency_key_key": "payments.idempotency_key",
        "transactions_pkey": "transactions.id",
        "queue_entries_pkey": "queue_entries.sequence",
        "armed_failures_pkey": "armed_failures.api",
        "renewal_extensions_pkey": "renewal_extensions.request_identifier",
        "retention_events_pkey": "retention_events.request_id",
        "retention_performance_tests_one_pending": "retention_performance_tests.pending",
    ]

    /// The readable name of the constraint the engine reported; the engine's own text if it is not one of ours.
    static func name(engineSpelling: String) -> String {
        names[engineSpelling] ?? engineSpelling
    }
}
