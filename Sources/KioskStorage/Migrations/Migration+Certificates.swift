import KioskSQL

extension Migration {
    /// Certificate revocations the OCSP responder answers: one row per revoked certificate of a signing chain.
    static let certificateStatements: [String] = [
        """
        CREATE TABLE certificate_revocations (
            environment TEXT NOT NULL,
            serial_number TEXT NOT NULL,
            role TEXT NOT NULL,
            revoked_at BIGINT NOT NULL,
            reason BIGINT,
            CONSTRAINT certificate_revocations_pkey PRIMARY KEY (environment, serial_number)
        )
        """
    ]
}
