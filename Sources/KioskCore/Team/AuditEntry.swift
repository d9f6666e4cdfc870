import Foundation

/// One action taken in the console: who, what, on what, when. The console shows them newest first.
public struct AuditEntry: Codable, Sendable, Hashable, Identifiable {
    public var id: UUID
    public var at: Date
    /// The name the operator signed in with.
    public var actor: String
    /// What was done, such as "product.create" or "transaction.refund".
    public var action: String
    /// What it was done to, such as "com.example.app/com.example.coins".
    public var target: String

    public init(id: UUID = UUID(), at: Date, actor: String, action: String, target: String) {
        self.id = id
        self.at = at
        self.actor = actor
        self.action = action
        self.target = target
    }
}
