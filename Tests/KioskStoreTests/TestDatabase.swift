import Foundation
import KioskTestSupport
import KioskTesting
import Testing

/// The engines the store's HTTP tests run on (SQLite, and PostgreSQL when configured).
typealias TestDatabase = TestDatabaseEngine

/// Runs `body` against a fresh store on `database`.
func withStore<T: Sendable>(
    _ database: TestDatabase, _ body: @Sendable (TestStore) async throws -> T
) async throws -> T {
    try await withTestStore(engine: database, body)
}

@Suite struct PostgreSQLStoreTests {
    /// A store started on a PostgreSQL URL runs its migrations there and reports the engine in `/health`.
    /// Skipped, with the reason in the report, when no PostgreSQL is configured.
    @Test(
        .enabled(
            if: TestEnvironment.runs(.postgreSQL),
            "set KIOSK_TEST_POSTGRES_URL (.ci/run does) to run the HTTP suites on PostgreSQL too"))
    func storeRunsOnPostgreSQL() async throws {
        try await withStore(.postgres) { store in
            let health = try await store.request(.GET, "/health")
            #expect((health.json["database"] as? [String: Any])?["engine"] as? String == "postgresql")
        }
    }
}

extension TestStore {
    /// Creates an app and returns its JSON.
    @discardableResult
    func createApp(_ bundleId: String = "com.example.app", name: String = "Example") async throws -> TestStore.Answer {
        let answer = try await request(.POST, "/admin/v1/apps", json: ["bundleId": bundleId, "name": name])
        #expect(answer.status == 201, "creating \(bundleId): \(answer.text)")
        return answer
    }

    /// Creates a product from `fields` (productId, type and referenceName default sensibly).
    @discardableResult
    func createProduct(
        app: String = "com.example.app", _ productId: String, type: String = "consumable", fields: [String: Any] = [:]
    ) async throws -> TestStore.Answer {
        var body: [String: Any] = [
            "productId": productId, "type": type, "referenceName": productId, "pricing": ["tier": 1],
            "localizations": [["locale": "en_US", "displayName": "Coins", "description": "A pile of coins"]],
        ]
        body.merge(fields) { $1 }
        return try await request(.POST, "/admin/v1/apps/\(app)/products", json: body)
    }
}

extension TestStore.Answer {
    /// The `error.code` of an error body.
    var errorCode: String? { (json["error"] as? [String: Any])?["code"] as? String }
    /// The `error.field` of an error body.
    var errorField: String? { (json["error"] as? [String: Any])?["field"] as? String }
    /// The `error.fix` of an error body.
    var errorFix: String? { (json["error"] as? [String: Any])?["fix"] as? String }
}
