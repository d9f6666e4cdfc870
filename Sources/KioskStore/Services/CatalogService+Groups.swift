import Foundation
import KioskCore
import KioskStorage

extension CatalogService {
    public func createGroup(
        bundleId: String, referenceName: String, localizations: [SubscriptionGroupLocalization]
    ) async throws -> SubscriptionGroup {
        let now = clock.now()
        return try await database.transaction { tx in
            let app = try await Self.requireApp(bundleId, in: tx)
            if try await tx.groups(appId: app.id).contains(where: { $0.referenceName == referenceName }) {
                throw KioskError(
                    .duplicateGroup, "App '\(bundleId)' already has a subscription group '\(referenceName)'.",
                    field: "referenceName", fix: "Group reference names are unique per app; choose another.")
            }
            let group = SubscriptionGroup(
                id: try await tx.nextIdentifier(.subscriptionGroupId), appId: app.id, referenceName: referenceName,
                localizations: Self.normalized(localizations), createdAt: now, updatedAt: now)
            try CatalogRules.validateGroup(group)
            try await tx.insertGroup(group)
            return group
        }
    }

    public func groups(bundleId: String) async throws -> [SubscriptionGroup] {
        try await database.transaction { tx in
            try await tx.groups(appId: try await Self.requireApp(bundleId, in: tx).id)
        }
    }

    public func group(bundleId: String, id: SubscriptionGroup.ID) async throws -> SubscriptionGroup {
        try await database.transaction { tx in
            try await Self.requireGroup(id, app: try await Self.requireApp(bundleId, in: tx), in: tx)
        }
    }

    /// The group `id` and the app it belongs to, whichever app that is.
    public func groupAndApp(id: SubscriptionGroup.ID) async throws -> (group: SubscriptionGroup, app: App) {
        try await database.transaction { tx in
            guard let group = try await tx.group(id: id), let app = try await tx.app(id: group.appId) else {
                throw KioskError(
                    .groupNotFound, "There is no subscription group \(id).", field: "groupId",
                    fix: "List an app's groups with `kiosk groups list --app BUNDLE_ID`.")
            }
            return (group, app)
        }
    }

    /// Changes a group's localizations from what is stored now, in one transaction: `change` reads the list as
    /// stored and returns the new one, so two edits of one group's list never lose each other's change.
    public func modifyGroupLocalizations(
        bundleId: String, id: SubscriptionGroup.ID,
        _ change: @Sendable ([SubscriptionGroupLocalization]) throws -> [SubscriptionGroupLocalization]
    ) async throws -> SubscriptionGroup {
        let now = clock.now()
        return try await database.transaction { tx in
            let app = try await Self.requireApp(bundleId, in: tx)
            var group = try await Self.requireGroup(id, app: app, in: tx)
            group.localizations = Self.normalized(try change(group.localizations))
            group.updatedAt = now
            try CatalogRules.validateGroup(group)
            try await tx.updateGroup(group)
            return group
        }
    }

    public func updateGroup(
        bundleId: String, id: SubscriptionGroup.ID, referenceName: String?,
        localizations: [SubscriptionGroupLocalization]?
    ) async throws -> SubscriptionGroup {
        let now = clock.now()
        return try await database.transaction { tx in
            let app = try await Self.requireApp(bundleId, in: tx)
            var group = try await Self.requireGroup(id, app: app, in: tx)
            if let referenceName, referenceName != group.referenceName {
                if try await tx.groups(appId: app.id).contains(where: { $0.referenceName == referenceName }) {
                    throw KioskError(
                        .duplicateGroup, "App '\(bundleId)' already has a subscription group '\(referenceName)'.",
                        field: "referenceName", fix: "Group reference names are unique per app; choose another.")
                }
                group.referenceName = referenceName
            }
            if let localizations { group.localizations = Self.normalized(localizations) }
            group.updatedAt = now
            try CatalogRules.validateGroup(group)
            try await tx.updateGroup(group)
            return group
        }
    }

    /// Deletes an empty group; a group that still holds products cannot go.
    public func deleteGroup(bundleId: String, id: SubscriptionGroup.ID) async throws {
        try await database.transaction { tx in
            let app = try await Self.requireApp(bundleId, in: tx)
            let group = try await Self.requireGroup(id, app: app, in: tx)
            let members = try await tx.products(appId: app.id).filter { $0.subscription?.groupId == group.id }
            guard members.isEmpty else {
                throw KioskError(
                    .groupNotEmpty,
                    "Subscription group '\(group.referenceName)' still holds \(members.map(\.productId).joined(separator: ", ")).",
                    field: "groupId",
                    fix: "Products stay in their group even when deleted, so this group must stay too.")
            }
            try await tx.deleteGroup(id: group.id)
        }
    }

    static func requireGroup(
        _ id: SubscriptionGroup.ID, app: App, in tx: any StorageTransaction
    ) async throws -> SubscriptionGroup {
        guard let group = try await tx.group(id: id), group.appId == app.id else {
            throw KioskError(
                .groupNotFound, "App '\(app.bundleId)' has no subscription group \(id).", field: "groupId",
                fix: "List the app's groups with `kiosk groups list --app \(app.bundleId)`.")
        }
        return group
    }

    static func normalized(_ localizations: [SubscriptionGroupLocalization]) -> [SubscriptionGroupLocalization] {
        localizations.map {
            SubscriptionGroupLocalization(
                locale: CatalogRules.normalizedLocale($0.locale), name: $0.name, customAppName: $0.customAppName)
        }.sorted { $0.locale < $1.locale }
    }
}
