import ArgumentParser
import Foundation
import KioskCore
import KioskMerchant
import KioskProtocol
import NIOHTTP1
import X509

extension MerchantCommand {
    /// `kiosk merchant explain`: why a user has what they have.
    struct Explain: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Explain what a user owns at the merchant, and the history that led there.",
            discussion: """
                Prints one line per entitlement and balance (which transaction gives it, or how it ended), the \
                entitlements and balances now, then every grant, revocation and change in the ledger.
                """)
        @Option(help: "The user's id, as in their user token.") var user: String
        @OptionGroup var connection: MerchantConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let client = try connection.client()
                let explanationAnswer = try await client.get(
                    MerchantPaths.adminExplain(userId: KioskRoute.escaped(user)))
                let entitlementsAnswer = try await client.get(
                    MerchantPaths.adminEntitlements(userId: KioskRoute.escaped(user)))
                if connection.json {
                    let document: [String: Any] = [
                        "explanation": try JSONSerialization.jsonObject(with: explanationAnswer.body),
                        "entitlements": try JSONSerialization.jsonObject(with: entitlementsAnswer.body),
                    ]
                    let data = try JSONSerialization.data(
                        withJSONObject: document, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
                    print(String(decoding: data, as: UTF8.self))
                    return
                }
                let explanation = try explanationAnswer.decode(MerchantExplanation.self)
                let owned = try entitlementsAnswer.decode(MerchantEntitlements.self)
                for line in Self.describe(explanation: explanation, entitlements: owned) { print(line) }
            }
        }

        static func describe(explanation: MerchantExplanation, entitlements owned: MerchantEntitlements) -> [String] {
            var lines = explanation.lines
            lines.append("")
            if owned.entitlements.isEmpty && owned.balances.isEmpty {
                lines.append("No entitlements or balances.")
            } else {
                var table = TextTable("NAME", "KIND", "NOW", "PRODUCTS", "TRANSACTION")
                for entitlement in owned.entitlements {
                    var state = entitlement.active ? "active" : "inactive"
                    if let expires = entitlement.expiresDate {
                        state +=
                            entitlement.active
                            ? " until \(expires.ISO8601Format())" : " since \(expires.ISO8601Format())"
                    }
                    if let grace = entitlement.gracePeriodExpiresDate {
                        state += ", grace until \(grace.ISO8601Format())"
                    }
                    if let renews = entitlement.willAutoRenew { state += renews ? ", renews" : ", does not renew" }
                    table.add(
                        entitlement.name, "entitlement", state, entitlement.productIds.joined(separator: ","),
                        entitlement.transactionId)
                }
                for balance in owned.balances {
                    table.add(balance.name, "balance", String(balance.amount), "", "")
                }
                lines += table.trimmedLines
            }
            lines.append("")
            if explanation.history.isEmpty {
                lines.append("History: none.")
            } else {
                lines.append("History:")
                var table = TextTable("DATE", "KIND", "TRANSACTION", "PRODUCT", "SOURCE", "DETAIL")
                for entry in explanation.history {
                    table.add(
                        entry.date.ISO8601Format(), entry.kind, entry.transactionId ?? "-", entry.productId ?? "-",
                        entry.source,
                        entry.detail)
                }
                lines += table.trimmedLines
            }
            return lines
        }
    }

    /// `kiosk merchant reconcile`: the store's transactions against the grant ledger.
    struct Reconcile: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Compare the store's transactions with the merchant's grants; --repair fixes what differs.",
            discussion: """
                The merchant reads the store's notification history and each customer's transaction history \
                (App Store Server API) and lists purchases it never granted (not_granted; no_user when nothing ties \
                one to a user), refunds it missed (revocation_not_applied) and grants without a purchase \
                (grant_without_purchase). With --repair it grants and takes back through the same ledger, so \
                nothing is granted twice. Exits 0 whenever the merchant answered, findings or not.
                """)
        @Option(help: "sandbox or production.") var environment: String
        @Option(help: "The app's bundle id (needed only when the merchant serves several apps).") var app: String?
        @Flag(help: "Repair what is found: grant purchases not granted, take back grants without a purchase.")
        var repair = false
        @Option(
            help: """
                Read the store's notification history from this date, e.g. 2026-06-01 or 2026-06-01T12:00:00Z \
                (default: 179 days ago; the store keeps 180).
                """)
        var since: String?
        @OptionGroup var connection: MerchantConnectionOptions

        func run() async throws {
            try await reportingErrors {
                guard let name = StoreEnvironment(appleName: environment)?.appleName else {
                    throw CLIError(
                        message: "'\(environment)' is not an environment.", field: "--environment",
                        fix: "Use sandbox or production.")
                }
                let start: Date
                if let since {
                    guard let date = Self.date(since) else {
                        throw CLIError(
                            message: "'\(since)' is not a date.", field: "--since",
                            fix:
                                "Use an ISO 8601 date within the last 180 days, e.g. 2026-06-01 or 2026-06-01T12:00:00Z."
                        )
                    }
                    start = date
                } else {
                    // A day inside the store's 180-day reach: the store measures it when the request arrives, so
                    // exactly 180 days from here would already be too far back there.
                    start = Date().addingTimeInterval(-179 * 86_400)
                }
                let client = try connection.client()
                let request = MerchantReconcileRequest(
                    bundleId: app, environment: name, repair: repair ? true : nil, since: start)
                let encoder = JSONEncoder()
                encoder.dateEncodingStrategy = .iso8601
                let answer = try await client.post(MerchantPaths.adminReconcile, body: try encoder.encode(request))
                if connection.json {
                    print(answer.prettyJSON)
                    return
                }
                for line in Self.describe(try answer.decode(MerchantReconcileReport.self)) { print(line) }
            }
        }

        /// An ISO 8601 date (`2026-06-01`, midnight UTC) or date and time.
        static func date(_ text: String) -> Date? {
            let full = ISO8601DateFormatter()
            if let date = full.date(from: text) { return date }
            full.formatOptions.insert(.withFractionalSeconds)
            if let date = full.date(from: text) { return date }
            let day = ISO8601DateFormatter()
            day.formatOptions = [.withFullDate]
            return day.date(from: text)
        }

        static func describe(_ report: MerchantReconcileReport) -> [String] {
            var lines = ["Reconciled \(report.bundleId) (\(report.environment)) with the store."]
            if !report.findings.isEmpty {
                var table = TextTable("KIND", "TRANSACTION", "PRODUCT", "USER", "REPAIR", "DETAIL")
                for finding in report.findings {
                    table.add(
                        finding.kind, finding.transactionId, finding.productId, finding.userId ?? "-",
                        finding.repair ?? "-", finding.detail)
                }
                lines += table.trimmedLines
            }
            let summary = [
                counted(report.storeTransactions, "store transaction"), counted(report.grants, "grant"),
                counted(report.findings.count, "finding"),
            ]
            lines.append(summary.joined(separator: ", "))
            if report.repaired {
                lines += repairLines(report.findings)
            } else if !report.findings.isEmpty {
                lines.append("Nothing repaired: run again with --repair.")
            }
            return lines
        }

        /// What `--repair` did, counted from each finding's `repair`: what it repaired, what another path had
        /// already done, and what it could not repair and why (a finding it left has no `repair`).
        static func repairLines(_ findings: [MerchantReconcileReport.Finding]) -> [String] {
            guard !findings.isEmpty else { return ["Nothing to repair."] }
            let repaired = findings.filter { ["granted", "revoked", "reinstated"].contains($0.repair ?? "") }
            let meanwhile = findings.filter {
                ["already_granted", "granted_to_another_user"].contains($0.repair ?? "")
            }
            let left = findings.filter { $0.repair == nil }
            var parts = ["Repaired \(repaired.count) of \(counted(findings.count, "finding"))"]
            if !meanwhile.isEmpty { parts.append("\(meanwhile.count) had been granted meanwhile") }
            if !left.isEmpty { parts.append("\(left.count) could not be repaired") }
            var lines = [parts.joined(separator: "; ") + "."]
            for (kind, group) in Dictionary(grouping: left, by: \.kind).sorted(by: { $0.key < $1.key }) {
                let why =
                    kind == "no_user"
                    ? "no order or earlier grant names whose purchase it is; it is granted when the app sends it"
                    : group[0].detail
                lines.append("  \(group.count) \(kind): \(why)")
            }
            return lines
        }

        static func counted(_ count: Int, _ noun: String) -> String {
            "\(count) \(noun)\(count == 1 ? "" : "s")"
        }
    }
}

/// `--merchant`, `--admin-token`, `--config` and `--json`, shared by the commands that ask a running merchant.
struct MerchantConnectionOptions: ParsableArguments {
    @Option(
        help: """
            The merchant's URL (default: KIOSK_MERCHANT_URL, else the publicURL of --config, else \
            http://127.0.0.1:8090).
            """)
    var merchant: String?

    @Option(help: "The merchant's admin token (default: KIOSK_MERCHANT_ADMIN_TOKEN, or the one in --config).")
    var adminToken: String?

    @Option(help: "Read the admin token from this merchant configuration (or KIOSK_MERCHANT_CONFIG).")
    var config: String?

    @Flag(help: "Print one JSON document instead of text.")
    var json = false

    /// The client: an explicit --admin-token wins, then --config, then KIOSK_MERCHANT_ADMIN_TOKEN, then
    /// KIOSK_MERCHANT_CONFIG. The merchant's URL: --merchant, then KIOSK_MERCHANT_URL, then the configuration's
    /// publicURL (which `kiosk merchant init` writes).
    func client() throws -> MerchantClient {
        let environment = ProcessInfo.processInfo.environment
        var token = adminToken
        var publicURL: String?
        var roots = try environmentTLSRoots(environment)
        if let config {
            let loaded = try loadMerchantConfiguration(config)
            if token == nil { token = loaded.raw.adminToken }
            publicURL = loaded.raw.publicURL
            roots += loaded.tlsRoots
        }
        if token == nil { token = environment["KIOSK_MERCHANT_ADMIN_TOKEN"] }
        if token == nil, let path = environment["KIOSK_MERCHANT_CONFIG"], !path.isEmpty {
            let loaded = try loadMerchantConfiguration(path)
            token = loaded.raw.adminToken
            publicURL = loaded.raw.publicURL
            roots += loaded.tlsRoots
        }
        guard let token, !token.isEmpty else {
            throw CLIError(
                message: "No merchant admin token.", field: "--admin-token",
                fix: "Pass --admin-token or --config merchant.json, or set KIOSK_MERCHANT_ADMIN_TOKEN "
                    + "(the adminToken `kiosk merchant init` wrote into the configuration).")
        }
        return MerchantClient(
            baseURL: merchant ?? environment["KIOSK_MERCHANT_URL"] ?? publicURL ?? "http://127.0.0.1:8090",
            adminToken: token, tlsRoots: roots)
    }
}

/// Talks to a running merchant's admin routes (`/merchant/v1/admin/…`) for the CLI.
struct MerchantClient {
    let baseURL: String
    let adminToken: String
    /// Trusted for an https:// merchant besides the system's roots.
    var tlsRoots: [Certificate] = []

    func get(_ path: String) async throws -> AdminClient.Answer {
        try await send(.GET, path, body: nil)
    }

    func post(_ path: String, body: Data) async throws -> AdminClient.Answer {
        try await send(.POST, path, body: body)
    }

    /// Sends a request and returns a 2xx answer; any other answer becomes a `CLIError` with the merchant's text.
    private func send(_ method: HTTPMethod, _ path: String, body: Data?) async throws -> AdminClient.Answer {
        let base = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        guard var components = URLComponents(string: base), ["http", "https"].contains(components.scheme ?? ""),
            components.host?.isEmpty == false
        else {
            throw CLIError(
                message: "'\(baseURL)' is not a valid merchant URL.", field: "--merchant",
                fix: "Use e.g. --merchant http://127.0.0.1:8090")
        }
        components.percentEncodedPath += path
        guard let url = components.string else {
            throw CLIError(message: "'\(baseURL)' is not a valid merchant URL.", field: "--merchant")
        }
        let answer = try await sendJSONRequest(
            method, url: url, token: adminToken, body: body, readTimeout: .seconds(120), deadline: .seconds(180),
            trusting: tlsRoots, unreachable: "the merchant at \(baseURL)",
            fix: "Start it with `kiosk merchant serve --config merchant.json`, or point --merchant / "
                + "KIOSK_MERCHANT_URL at it.")
        guard (200..<300).contains(answer.status) else {
            var error = CLIError(answer: answer)
            if error.code == nil {
                let text = String(decoding: answer.body, as: UTF8.self)
                error.message =
                    "The merchant at \(baseURL) answered HTTP \(answer.status)\(text.isEmpty ? "" : ": \(text)")"
            }
            // The merchant answers every admin path; a server that does not is something else (the store, often).
            if answer.status == 404, error.code == nil || error.code == "not_found" {
                error.fix =
                    "Check that --merchant / KIOSK_MERCHANT_URL points at `kiosk merchant serve` (default port "
                    + "8090), not at the store."
            }
            throw error
        }
        return answer
    }
}
