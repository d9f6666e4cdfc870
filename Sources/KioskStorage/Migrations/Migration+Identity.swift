import KioskSQL

extension Migration {
    /// Migration 5: the store's signing identity, shared by every replica on the database — one row per environment
    /// with the chain's certificates (PEM) and its private keys sealed with the identity key, which stays outside
    /// the database. `version` is what a reissue compares and swaps, so replicas never overwrite each other unseen.
    static let identity = Migration(
        version: 5,
        name: "signing_identity",
        statements: [
            """
            CREATE TABLE signing_chains (
                environment TEXT NOT NULL,
                version BIGINT NOT NULL,
                root_certificate TEXT NOT NULL,
                intermediate_certificate TEXT NOT NULL,
                leaf_certificate TEXT NOT NULL,
                sealed_leaf_key TEXT NOT NULL,
                sealed_root_key TEXT,
                sealed_intermediate_key TEXT,
                updated_at BIGINT NOT NULL,
                CONSTRAINT signing_chains_pkey PRIMARY KEY (environment)
            )
            """
        ]
    )
}
