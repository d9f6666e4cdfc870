import Foundation
import KioskCore
import KioskProtocol

/// Works out what a user is entitled to from their grants, at a moment: never from the order things arrived in.
///
/// Only grants that unlock an entitlement are read (balances are summed by the database). Non-consumables entitle
/// for good; auto-renewable subscriptions until the latest expiry among their grants (or
/// the end of a billing grace period); non-renewing subscriptions stack their durations in purchase order. Revoked
/// grants give nothing, so a refund of one product leaves what another product grants.
struct EntitlementCalculator: Sendable {
    let products: [String: MerchantConfiguration.ProductSettings]

    /// One entitlement's standing, with the grant that decides it.
    struct Standing: Sendable {
        var name: String
        var active: Bool
        var expiresDate: Date?
        var decidingGrant: GrantRecord
        var productIds: [String]
        var renewal: RenewalState?
        /// The end of a billing grace period that keeps it active past `expiresDate`.
        var gracePeriodExpiresDate: Date?
        /// A subscription group's entitlement: the best level held now, else the deciding grant's.
        var level: Int?
    }

    func standings(grants: [GrantRecord], renewals: [RenewalState], now: Date) -> [Standing] {
        let renewalByOriginal = Dictionary(renewals.map { ($0.originalTransactionId, $0) }, uniquingKeysWith: { $1 })
        let named = grants.filter { $0.entitlement != nil }
        return Dictionary(grouping: named, by: { $0.entitlement! }).map { name, grants in
            let standing = grants.filter { !$0.isRevoked }
            guard !standing.isEmpty else {
                let last = grants.max { ($0.revokedDate ?? .distantPast) < ($1.revokedDate ?? .distantPast) }!
                return Standing(
                    name: name, active: false, expiresDate: last.expiresDate, decidingGrant: last,
                    productIds: [last.productId], renewal: renewalByOriginal[last.originalTransactionId],
                    level: products[last.productId]?.level)
            }
            var ends: [(grant: GrantRecord, end: Date?, grace: Date?)] = []
            var stackedEnd: Date?
            for grant in standing.sorted(by: { $0.purchaseDate < $1.purchaseDate }) {
                switch grant.productKind {
                case .nonConsumable, .consumable:
                    ends.append((grant, nil, nil))
                case .autoRenewable:
                    let expires = grant.expiresDate ?? grant.purchaseDate
                    let grace = renewalByOriginal[grant.originalTransactionId]?.gracePeriodExpiresDate
                    ends.append((grant, expires, grace.flatMap { $0 > expires ? $0 : nil }))
                case .nonRenewing:
                    let days = products[grant.productId]?.durationDays ?? 0
                    let start = max(grant.purchaseDate, stackedEnd ?? grant.purchaseDate)
                    let end = start.addingTimeInterval(TimeInterval(days) * 86_400)
                    stackedEnd = end
                    ends.append((grant, end, nil))
                }
            }
            let permanent = ends.first { $0.end == nil }
            let latest = permanent ?? ends.max { ($0.grace ?? $0.end!) < ($1.grace ?? $1.end!) }!
            let activeUntil = latest.grace ?? latest.end
            // An upgrade mid-period leaves the lower level's period running beside the higher one: the best counts.
            let levelsNow = ends.filter { ($0.grace ?? $0.end).map { $0 > now } ?? true }
                .compactMap { products[$0.grant.productId]?.level }
            return Standing(
                name: name, active: activeUntil.map { $0 > now } ?? true, expiresDate: latest.end,
                decidingGrant: latest.grant, productIds: Array(Set(standing.map(\.productId))).sorted(),
                renewal: renewalByOriginal[latest.grant.originalTransactionId], gracePeriodExpiresDate: latest.grace,
                level: levelsNow.min() ?? products[latest.grant.productId]?.level)
        }
        .sorted { $0.name < $1.name }
    }

    func entitlements(
        userId: String, grants: [GrantRecord], renewals: [RenewalState], balances: [BalanceSummary], now: Date
    ) -> MerchantEntitlements {
        MerchantEntitlements(
            userId: userId,
            entitlements: standings(grants: grants, renewals: renewals, now: now).map { standing in
                MerchantEntitlements.Entitlement(
                    name: standing.name, active: standing.active, expiresDate: standing.expiresDate,
                    productIds: standing.productIds, transactionId: standing.decidingGrant.transactionId,
                    level: standing.level,
                    willAutoRenew: standing.decidingGrant.productKind == .autoRenewable
                        ? standing.renewal.map { $0.autoRenewStatus == 1 } : nil,
                    gracePeriodExpiresDate: standing.gracePeriodExpiresDate)
            },
            balances: balances.map { MerchantEntitlements.Balance(name: $0.name, amount: $0.amount) })
    }

    /// Sentences a support person can read to the user.
    func explanation(
        userId: String, grants: [GrantRecord], renewals: [RenewalState], balances: [BalanceSummary],
        events: [LedgerEvent], spends: [SpendRecord], now: Date
    ) -> MerchantExplanation {
        var lines: [String] = []
        for standing in standings(grants: grants, renewals: renewals, now: now) {
            let grant = standing.decidingGrant
            let how = grant.transactionId == grant.originalTransactionId ? "was bought" : "renewed"
            let why = "transaction \(grant.transactionId) (\(grant.productId)) \(how) on \(grant.purchaseDate.iso8601)"
            if let revoked = grant.revokedDate {
                lines.append(
                    "not entitled to \(standing.name): transaction \(grant.transactionId) (\(grant.productId)) was refunded or revoked on \(revoked.iso8601)"
                )
            } else if !standing.active, let end = standing.gracePeriodExpiresDate ?? standing.expiresDate {
                lines.append("not entitled to \(standing.name): it ended on \(end.iso8601); the last \(why)")
            } else if let grace = standing.gracePeriodExpiresDate {
                lines.append(
                    "entitled to \(standing.name) until \(grace.iso8601) (billing grace period; the period ended \(standing.expiresDate?.iso8601 ?? "?")) because \(why)"
                )
            } else if let end = standing.expiresDate {
                let level = standing.level.map { " at level \($0)" } ?? ""
                var line = "entitled to \(standing.name)\(level) until \(end.iso8601) because \(why)"
                if let renewal = standing.renewal, grant.productKind == .autoRenewable {
                    line += renewal.autoRenewStatus == 1 ? "; it renews automatically" : "; auto-renew is off"
                }
                lines.append(line)
            } else {
                lines.append("entitled to \(standing.name) permanently because \(why)")
            }
        }
        for balance in balances {
            let purchases = balance.standing == 1 ? "1 purchase" : "\(balance.standing) purchases"
            var line = "\(balance.name): \(balance.amount) (\(balance.credited) from \(purchases)"
            if balance.spent > 0 { line += ", \(balance.spent) spent" }
            if balance.revoked > 0 {
                line += balance.revoked == 1 ? "; 1 refunded purchase" : "; \(balance.revoked) refunded purchases"
                line += " took back what \(balance.revoked == 1 ? "it" : "they") gave"
            }
            lines.append(line + ")")
        }
        if lines.isEmpty { lines.append("no purchases granted to \(userId)") }
        for event in events where event.kind == LedgerEvent.consentRescinded {
            lines.append(
                "a parent or guardian withdrew consent for this user's use of the app on \(event.at.iso8601) "
                    + "(RESCIND_CONSENT, app transaction \(event.transactionId)): Apple no longer lets the app open "
                    + "for them; end their sessions and delete what you keep under that consent. The purchases above "
                    + "are unchanged.")
        }
        return MerchantExplanation(
            userId: userId, lines: lines,
            history: (events.map {
                MerchantExplanation.HistoryEntry(
                    date: $0.at, kind: $0.kind, transactionId: $0.transactionId, productId: $0.productId,
                    source: $0.source, detail: $0.detail)
            }
                + spends.map {
                    MerchantExplanation.HistoryEntry(
                        date: $0.spentAt, kind: "spent", transactionId: nil, productId: nil, source: "app",
                        detail: "-\($0.amount) \($0.name)" + ($0.reason.map { ": \($0)" } ?? ""))
                })
                .sorted { $0.date < $1.date })
    }
}
