extension Migration {
    /// Notification retry bookkeeping (part of migration 4).
    static let notificationRetryStatements: [String] = []
}
