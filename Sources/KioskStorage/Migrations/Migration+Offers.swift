extension Migration {
    /// Offer codes and offer redemptions (part of migration 4): each promotional offer nonce an app's customers
    /// used, so a signature is good once.
    static let offerStatements: [String] = [
        """
        CREATE TABLE promotional_offer_nonces (
            environment TEXT NOT NULL,
            app_id BIGINT NOT NULL,
            nonce TEXT NOT NULL,
            used_at BIGINT NOT NULL,
            PRIMARY KEY (environment, app_id, nonce)
        )
        """,
    ]
}
