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
        "testers.id": "testers.id",
        "index 'testers_email_key'": "testers.email",
        "iap_keys.id": "iap_keys.id",
        // PostgreSQL: constraint and index names, as Migration 1 declares them.
        "apps_pkey": "apps.id",
        "apps_bundle_id_key": "apps.bundle_id",
        "products_pkey": "products.product_id",
        "subscription_groups_pkey": "subscription_groups.id",
        "subscription_groups_reference_name_key": "subscription_groups.reference_name",
        "testers_pkey": "testers.id",
        "testers_email_key": "testers.email",
        "iap_keys_pkey": "iap_keys.id",
    ]

    /// The readable name of the constraint the engine reported; the engine's own text if it is not one of ours.
    static func name(engineSpelling: String) -> String {
        names[engineSpelling] ?? engineSpelling
    }
}
