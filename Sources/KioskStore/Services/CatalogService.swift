import Foundation
import KioskCore
import KioskSigning
import KioskStorage

/// The console's operations (App Store Connect's): each validates its input with the catalog rules and runs
/// in one database transaction, so a failed call leaves nothing half-written.
public struct CatalogService: Sendable {
    let database: any KioskDatabase
    let clock: any KioskClock
    /// What the Server API's authentication keeps of keys; a revoked key is dropped from it.
    let serverAPIKeys: ServerAPIKeyCache
    /// Which notification URLs may be set (`--outbound-urls`).
    let outboundPolicy: OutboundURLPolicy

    public init(
        database: any KioskDatabase, clock: any KioskClock, serverAPIKeys: ServerAPIKeyCache = ServerAPIKeyCache(),
        outboundPolicy: OutboundURLPolicy = .any
    ) {
        self.database = database
        self.clock = clock
        self.serverAPIKeys = serverAPIKeys
        self.outboundPolicy = outboundPolicy
    }

    // MARK: Apps

    public func createApp(bundleId: String, name: String) async throws -> App {
        try CatalogRules.validateBundleId(bundleId, field: "bundleId")
        try CatalogRules.validateAppName(name, field: "name")
        let now = clock.now()
        return try await database.transaction { tx in
            if try await tx.app(bundleId: bundleId) != nil {
                throw KioskError(
                    .duplicateBundleId, "An app with bundle id '\(bundleId)' already exists.", field: "bundleId",
                    fix: "Bundle ids are unique; use `kiosk apps show \(bundleId)` to see it, or choose another id.")
            }
            let app = App(
                id: try await tx.nextIdentifier(.appAppleId), bundleId: bundleId, name: name, createdAt: now,
                updatedAt: now)
            try await tx.insertApp(app)
            return app
        }
    }

    public func apps() async throws -> [App] {
        try await database.transaction { tx in try await tx.apps() }
    }

    public func app(bundleId: String) async throws -> App {
        try await database.transaction { tx in try await Self.requireApp(bundleId, in: tx) }
    }

    public func updateApp(
        bundleId: String, name: String?, productionNotificationURLs: [String]?, sandboxNotificationURLs: [String]?,
        sandboxNotificationRetries: Bool? = nil
    ) async throws -> App {
        if let name { try CatalogRules.validateAppName(name, field: "name") }
        if let productionNotificationURLs {
            try CatalogRules.validateNotificationURLs(
                productionNotificationURLs, field: "productionNotificationURLs", policy: outboundPolicy)
        }
        if let sandboxNotificationURLs {
            try CatalogRules.validateNotificationURLs(
                sandboxNotificationURLs, field: "sandboxNotificationURLs", policy: outboundPolicy)
        }
        let now = clock.now()
        return try await database.transaction { tx in
            var app = try await Self.requireApp(bundleId, in: tx)
            if let name { app.name = name }
            if let productionNotificationURLs { app.productionNotificationURLs = productionNotificationURLs }
            if let sandboxNotificationURLs { app.sandboxNotificationURLs = sandboxNotificationURLs }
            if let sandboxNotificationRetries { app.sandboxNotificationRetries = sandboxNotificationRetries }
            app.updatedAt = now
            try await tx.updateApp(app)
            return app
        }
    }

    /// Apple's billing grace period lengths, in days.
    static let gracePeriodDays = [3, 16, 28]

    /// Turns the app's billing grace period on (3, 16 or 28 days) or off (nil); renewals that fail from then on use
    /// it, in both environments.
    public func setBillingGracePeriod(bundleId: String, days: Int?) async throws -> App {
        if let days, !Self.gracePeriodDays.contains(days) {
            throw KioskError(
                .invalidGracePeriod, "A billing grace period lasts 3, 16 or 28 days, not \(days).", field: "days",
                fix: "Send 3, 16, 28, or null to turn it off.")
        }
        let now = clock.now()
        return try await database.transaction { tx in
            var app = try await Self.requireApp(bundleId, in: tx)
            app.billingGracePeriodDays = days
            app.updatedAt = now
            try await tx.updateApp(app)
            return app
        }
    }

    /// Generates (or regenerates, replacing the old one) the app-specific shared secret.
    public func regenerateSharedSecret(bundleId: String) async throws -> App {
        let now = clock.now()
        return try await database.transaction { tx in
            var app = try await Self.requireApp(bundleId, in: tx)
            app.sharedSecret = SecretGenerator.sharedSecret()
            app.updatedAt = now
            try await tx.updateApp(app)
            return app
        }
    }

    // MARK: Lookups shared by the other operations

    static func requireApp(_ bundleId: String, in tx: any StorageTransaction) async throws -> App {
        guard let app = try await tx.app(bundleId: bundleId) else {
            throw KioskError(
                .appNotFound, "No app has bundle id '\(bundleId)'.", field: "bundleId",
                fix: "Check the id with `kiosk apps list`, or create it with `kiosk apps create`.")
        }
        return app
    }
}
