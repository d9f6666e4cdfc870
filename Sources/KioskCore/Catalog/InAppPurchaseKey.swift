import Foundation

/// A key for the App Store Server API. Kiosk keeps only the public key; the private key (PKCS#8 PEM)
/// is shown once, when the key is created.
public struct InAppPurchaseKey: Codable, Sendable, Hashable, Identifiable {
    /// Ten upper-case letters and digits, as Apple's key ids (`kid`).
    public var id: String
    public var appId: App.ID
    public var name: String
    /// PEM of the P-256 public key that verifies the JWTs signed with this key.
    public var publicKeyPEM: String
    public var createdAt: Date
    public var revokedAt: Date?

    public init(id: String, appId: App.ID, name: String, publicKeyPEM: String, createdAt: Date, revokedAt: Date? = nil)
    {
        self.id = id
        self.appId = appId
        self.name = name
        self.publicKeyPEM = publicKeyPEM
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }
}
