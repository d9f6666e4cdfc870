import KioskSQL

extension Migration {
    /// Migration 26: a notification keeps the JSON payload its JWS signs (`payload`), made when the change it reports
    /// commits, and is signed each time it is sent or listed. Signing it and storing the JWS (9 KB with the
    /// certificate chain, for a purchase's) took a quarter of a purchase's time on SQLite's one writer.
    /// `signed_payload` stays for the rows stored before, whose payload is read out of their JWS; new rows leave it
    /// empty.
    static let notificationsSignedWhenSent = Migration(
        version: 26,
        name: "notifications_signed_when_sent",
        statements: ["ALTER TABLE notifications ADD COLUMN payload TEXT"]
    )
}
