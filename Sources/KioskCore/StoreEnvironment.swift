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

extension StoreEnvironment {
    /// The environment a request names, `sandbox` or `production` in any case; none named is the sandbox.
    ///
    /// - Throws: `invalid_environment` naming `field` for any other text.
    public init(requested text: String?, field: String = "environment") throws {
        guard let text else {
            self = .sandbox
            return
        }
        guard let environment = StoreEnvironment(rawValue: text.lowercased()) else {
            throw KioskError(
                .invalidEnvironment, "'\(text.prefix(32))' is not an environment.", field: field,
                fix: "Use sandbox or production.")
        }
        self = environment
    }
}
