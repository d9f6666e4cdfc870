import KioskSQL

extension Migration {
    /// Migration 20: the territories a product is offered in, as App Store Connect's availability sets them. A
    /// product without a row is offered wherever it has a price; `territories` holds alpha-3 codes, sorted and
    /// comma-separated (the storefront table's codes have no comma).
    static let territoryAvailability = Migration(
        version: 20,
        name: "territory_availability",
        statements: [
            """
            CREATE TABLE product_territories (
                app_id BIGINT NOT NULL,
                product_id TEXT NOT NULL,
                territories TEXT NOT NULL,
                available_in_new_territories BOOLEAN NOT NULL,
                CONSTRAINT product_territories_pkey PRIMARY KEY (app_id, product_id),
                CONSTRAINT product_territories_product_fkey FOREIGN KEY (app_id, product_id)
                    REFERENCES products (app_id, product_id) ON DELETE CASCADE
            )
            """
        ]
    )
}
