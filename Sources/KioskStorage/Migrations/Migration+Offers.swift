extension Migration {
    /// Offer codes and offer redemptions (part of migration 4).
    static let offerStatements: [String] = []
}
