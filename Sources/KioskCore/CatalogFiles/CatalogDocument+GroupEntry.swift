import Foundation

extension CatalogDocument {
    /// The app a catalog file belongs to.
    public struct AppEntry: Sendable, Hashable {
        /// The app's bundle id.
        public var bundleId: String
        /// The app's name.
        public var name: String

        /// An app entry.
        public init(bundleId: String, name: String) {
            self.bundleId = bundleId
            self.name = name
        }
    }

    /// A subscription group as the catalog file writes it: identified by its reference name, unique in the app.
    public struct GroupEntry: Sendable, Hashable {
        /// The group's reference name; products refer to the group by it.
        public var referenceName: String
        /// Customer-facing names, ordered by locale.
        public var localizations: [SubscriptionGroupLocalization]

        /// A group entry; localizations are put in locale order.
        public init(referenceName: String, localizations: [SubscriptionGroupLocalization] = []) {
            self.referenceName = referenceName
            self.localizations = localizations.sorted { $0.locale < $1.locale }
        }

        /// The entry that describes an existing group; compare it with an imported entry to see whether the import
        /// changes anything.
        public init(_ group: SubscriptionGroup) {
            self.init(referenceName: group.referenceName, localizations: group.localizations)
        }

        /// A new group made from this entry.
        ///
        /// - Parameters:
        ///   - id: The id the store assigns.
        ///   - appId: The app the group belongs to.
        ///   - now: The creation time.
        public func group(id: SubscriptionGroup.ID, appId: App.ID, now: Date) -> SubscriptionGroup {
            SubscriptionGroup(
                id: id, appId: appId, referenceName: referenceName, localizations: localizations, createdAt: now,
                updatedAt: now)
        }

        /// `existing` updated to what this entry says; id, app and creation time stay.
        public func applied(to existing: SubscriptionGroup, now: Date) -> SubscriptionGroup {
            var group = existing
            group.referenceName = referenceName
            group.localizations = localizations
            group.updatedAt = now
            return group
        }
    }
}
