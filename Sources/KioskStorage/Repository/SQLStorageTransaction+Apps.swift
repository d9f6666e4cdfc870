import Foundation
import KioskCore
import KioskSQL
import SQLKit

extension SQLStorageTransaction {
    func insertApp(_ app: App) async throws {
        try await changesCachedRows()
        try await session.run(
            """
            INSERT INTO apps (id, bundle_id, name, shared_secret, production_notification_urls,
                sandbox_notification_urls, billing_grace_period_days, sandbox_notification_retries, created_at,
                updated_at)
            VALUES (\(bind: app.id), \(bind: app.bundleId), \(bind: app.name), \(bind: app.sharedSecret),
                \(bind: try Self.encodeURLs(app.productionNotificationURLs)),
                \(bind: try Self.encodeURLs(app.sandboxNotificationURLs)), \(bind: app.billingGracePeriodDays),
                \(bind: app.sandboxNotificationRetries),
                \(bind: app.createdAt.millisecondsSince1970), \(bind: app.updatedAt.millisecondsSince1970))
            """
        )
    }

    func updateApp(_ app: App) async throws {
        try await changesCachedRows()
        let row = try await session.first(
            """
            UPDATE apps SET bundle_id = \(bind: app.bundleId), name = \(bind: app.name),
                shared_secret = \(bind: app.sharedSecret),
                production_notification_urls = \(bind: try Self.encodeURLs(app.productionNotificationURLs)),
                sandbox_notification_urls = \(bind: try Self.encodeURLs(app.sandboxNotificationURLs)),
                billing_grace_period_days = \(bind: app.billingGracePeriodDays),
                sandbox_notification_retries = \(bind: app.sandboxNotificationRetries),
                created_at = \(bind: app.createdAt.millisecondsSince1970),
                updated_at = \(bind: app.updatedAt.millisecondsSince1970)
            WHERE id = \(bind: app.id)
            RETURNING id
            """
        )
        try requireUpdated(row, "app \(app.id)")
    }

    func app(id: App.ID) async throws -> App? {
        try await cached(.app(id)) {
            try await session.first("SELECT * FROM apps WHERE id = \(bind: id)").map(Self.decodeApp)
        }
    }

    func app(bundleId: String) async throws -> App? {
        try await cached(.appBundleId(bundleId)) {
            try await session.first("SELECT * FROM apps WHERE bundle_id = \(bind: bundleId)").map(Self.decodeApp)
        }
    }

    func apps() async throws -> [App] {
        // Sorted in Swift as well, so both engines agree whatever their collation.
        try await session.all("SELECT * FROM apps ORDER BY bundle_id").map(Self.decodeApp)
            .sorted { $0.bundleId < $1.bundleId }
    }

    private static func decodeApp(_ row: any SQLRow) throws -> App {
        App(
            id: try row.decode(column: "id", as: Int64.self),
            bundleId: try row.decode(column: "bundle_id", as: String.self),
            name: try row.decode(column: "name", as: String.self),
            sharedSecret: try row.optional("shared_secret", as: String.self),
            productionNotificationURLs: try decodeURLs(
                row.decode(column: "production_notification_urls", as: String.self)),
            sandboxNotificationURLs: try decodeURLs(
                row.decode(column: "sandbox_notification_urls", as: String.self)),
            billingGracePeriodDays: try row.optional("billing_grace_period_days", as: Int.self),
            sandboxNotificationRetries: try row.decode(column: "sandbox_notification_retries", as: Bool.self),
            createdAt: try row.date("created_at"),
            updatedAt: try row.date("updated_at")
        )
    }

    /// Notification URLs are an ordered list kept as a JSON array in one TEXT column.
    private static func encodeURLs(_ urls: [String]) throws -> String {
        String(decoding: try JSONEncoder().encode(urls), as: UTF8.self)
    }

    private static func decodeURLs(_ text: String) throws -> [String] {
        do {
            return try JSONDecoder().decode([String].self, from: Data(text.utf8))
        } catch {
            throw StorageError.engine(message: "apps holds notification URLs that are not a JSON array: \(text)")
        }
    }
}
