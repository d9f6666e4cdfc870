import Foundation
import KioskCore
import KioskSQL
import SQLKit

/// Subscription groups are stored whole: the group row plus its localizations, read back ordered by locale.
extension SQLStorageTransaction {
    func insertGroup(_ group: SubscriptionGroup) async throws {
        try await session.run(
            """
            INSERT INTO subscription_groups (id, app_id, reference_name, created_at, updated_at)
            VALUES (\(bind: group.id), \(bind: group.appId), \(bind: group.referenceName),
                \(bind: group.createdAt.millisecondsSince1970), \(bind: group.updatedAt.millisecondsSince1970))
            """
        )
        try await insertLocalizations(of: group)
    }

    func updateGroup(_ group: SubscriptionGroup) async throws {
        let row = try await session.first(
            """
            UPDATE subscription_groups SET app_id = \(bind: group.appId),
                reference_name = \(bind: group.referenceName),
                created_at = \(bind: group.createdAt.millisecondsSince1970),
                updated_at = \(bind: group.updatedAt.millisecondsSince1970)
            WHERE id = \(bind: group.id)
            RETURNING id
            """
        )
        try requireUpdated(row, "subscription group \(group.id)")
        try await session.run("DELETE FROM subscription_group_localizations WHERE group_id = \(bind: group.id)")
        try await insertLocalizations(of: group)
    }

    func deleteGroup(id: SubscriptionGroup.ID) async throws {
        try await session.run("DELETE FROM subscription_groups WHERE id = \(bind: id)")
    }

    func group(id: SubscriptionGroup.ID) async throws -> SubscriptionGroup? {
        try await loadGroups("id = \(bind: id)").first
    }

    func groups(appId: App.ID) async throws -> [SubscriptionGroup] {
        try await loadGroups("app_id = \(bind: appId)").sorted { $0.referenceName < $1.referenceName }
    }

    private func insertLocalizations(of group: SubscriptionGroup) async throws {
        guard !group.localizations.isEmpty else { return }
        try await session.run(
            """
            INSERT INTO subscription_group_localizations (group_id, locale, name, custom_app_name)
            VALUES \(group.localizations.valuesList { localization in
                """
                (\(bind: group.id), \(bind: localization.locale), \(bind: localization.name),
                    \(bind: localization.customAppName))
                """
            })
            """
        )
    }

    /// Reads the groups matching `filter` (on `subscription_groups`) with their localizations: two queries.
    private func loadGroups(_ filter: SQLQueryString) async throws -> [SubscriptionGroup] {
        let rows = try await session.all("SELECT * FROM subscription_groups WHERE \(filter)")
        guard !rows.isEmpty else { return [] }
        var localizations: [Int64: [SubscriptionGroupLocalization]] = [:]
        let localizationRows = try await session.all(
            """
            SELECT * FROM subscription_group_localizations
            WHERE group_id IN (SELECT id FROM subscription_groups WHERE \(filter))
            """
        )
        for row in localizationRows {
            localizations[try row.decode(column: "group_id", as: Int64.self), default: []].append(
                SubscriptionGroupLocalization(
                    locale: try row.decode(column: "locale", as: String.self),
                    name: try row.decode(column: "name", as: String.self),
                    customAppName: try row.optional("custom_app_name", as: String.self)
                )
            )
        }
        return try rows.map { row in
            let id = try row.decode(column: "id", as: Int64.self)
            return SubscriptionGroup(
                id: id,
                appId: try row.decode(column: "app_id", as: Int64.self),
                referenceName: try row.decode(column: "reference_name", as: String.self),
                localizations: (localizations[id] ?? []).sorted { $0.locale < $1.locale },
                createdAt: try row.date("created_at"),
                updatedAt: try row.date("updated_at")
            )
        }
    }
}
