/// The two stores Kiosk runs side by side. They never mix: separate signing chains, separate
/// accounts (test users exist only in the sandbox), separate receipts.
public enum StoreEnvironment: String, Codable, Sendable, CaseIterable, Hashable {
    case production
    case sandbox

    /// The spelling Apple uses in signed payloads and `verifyReceipt` answers.
    public var appleName: String {
        switch self {
        case .production: "Production"
        case .sandbox: "Sandbox"
        }
    }
}
