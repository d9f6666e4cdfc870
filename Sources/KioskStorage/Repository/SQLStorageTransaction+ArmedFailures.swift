import Foundation
import KioskCore
import KioskSQL
import SQLKit

/// Failures armed by the sandbox test controls: at most one per app and API, gone once used up.
///
/// Every sandbox purchase, products request, restore and receipt refresh asks whether a failure is armed, and nearly
/// always none is: the app's armed failures are read through the ``ReadCache``, so asking costs no statement of its
/// own, and arming or using one up changes the cached rows' version.
extension SQLStorageTransaction {
    func setArmedFailure(_ failure: ArmedFailure) async throws {
        try await changesCachedRows()
        guard failure.remaining > 0 else {
            try await session.run("DELETE FROM armed_failures WHERE \(Self.failureKey(failure.appId, failure.api))")
            return
        }
        try await session.run(
            """
            INSERT INTO armed_failures (app_id, api, remaining, error_code)
            VALUES (\(bind: failure.appId), \(bind: failure.api.rawValue), \(bind: failure.remaining),
                \(bind: failure.errorCode))
            ON CONFLICT (app_id, api) DO UPDATE SET remaining = excluded.remaining, error_code = excluded.error_code
            """
        )
    }

    func armedFailures(appId: App.ID) async throws -> [ArmedFailure] {
        try await cached(.armedFailures(appId)) {
            try await session.all("SELECT * FROM armed_failures WHERE app_id = \(bind: appId) ORDER BY api").map {
                row in
                ArmedFailure(
                    appId: try row.decode(column: "app_id", as: Int64.self),
                    api: try row.enumeration("api", as: ArmedFailure.API.self),
                    remaining: try row.decode(column: "remaining", as: Int.self),
                    errorCode: try row.decode(column: "error_code", as: Int.self)
                )
            }
            .sorted { $0.api.rawValue < $1.api.rawValue }
        } ?? []
    }

    func consumeArmedFailure(appId: App.ID, api: ArmedFailure.API) async throws -> Int? {
        guard try await armedFailures(appId: appId).contains(where: { $0.api == api }) else { return nil }
        try await changesCachedRows()
        let key = Self.failureKey(appId, api)
        // One statement checks and decrements, so two concurrent calls can never both use the last one.
        let row = try await session.first(
            """
            UPDATE armed_failures SET remaining = remaining - 1
            WHERE \(key) AND remaining > 0
            RETURNING error_code, remaining
            """
        )
        guard let row else { return nil }
        if try row.decode(column: "remaining", as: Int.self) == 0 {
            try await session.run("DELETE FROM armed_failures WHERE \(key) AND remaining = 0")
        }
        return try row.decode(column: "error_code", as: Int.self)
    }

    private static func failureKey(_ appId: App.ID, _ api: ArmedFailure.API) -> SQLQueryString {
        "app_id = \(bind: appId) AND api = \(bind: api.rawValue)"
    }
}
