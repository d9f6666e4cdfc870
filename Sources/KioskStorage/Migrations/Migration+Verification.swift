import KioskSQL

extension Migration {
    /// Migration 3: verification — what the App Store Server API, server notifications and the OCSP responder
    /// keep. Each part's tables are defined beside the code that owns them.
    static let verification = Migration(
        version: 3,
        name: "verification",
        statements: serverAPIStatements + notificationStatements + certificateStatements
    )
}
