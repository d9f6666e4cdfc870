import ArgumentParser
import Foundation
import KioskCore
import KioskMerchant
import KioskProtocol

/// `kiosk merchant …`: the reference merchant server ("your server" in the seeds' server model): set it up from a
/// running store, run it, issue user tokens, and ask it what it granted.
struct MerchantCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merchant",
        abstract: "Run the merchant server: validates purchases and grants each exactly once.",
        discussion: """
            Start with `kiosk merchant init --app BUNDLE_ID` against a running store, then \
            `kiosk merchant serve --config merchant.json`. explain and reconcile talk to a running merchant \
            (--merchant / KIOSK_MERCHANT_URL, --admin-token / KIOSK_MERCHANT_ADMIN_TOKEN, or --config).
            """,
        subcommands: [Init.self, Serve.self, Token.self, Explain.self, Reconcile.self])

    struct Init: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a merchant configuration for an app of a running store.",
            discussion: """
                Reads the app's Apple id and shared secret (creating one if it has none), exports both root \
                certificates, creates an In-App Purchase key for the App Store Server API, and derives what each \
                product grants from the catalog: a consumable named "100 Coins" credits 100 of the balance "coins", \
                a non-consumable named "Remove Ads" unlocks "remove-ads", and every subscription of a group unlocks \
                the group's entitlement ("Coin Club": "coin-club"); edit the file to change that. The root \
                PEMs and the key (merchant-key.p8) go into the configuration's folder.
                """)
        @Option(help: "The app's bundle id.") var app: String
        @Option(help: "Where to write the configuration; the other files go beside it.") var output: String =
            "merchant.json"
        @Option(
            help: """
                Also point the app's sandbox and production notification URLs here, e.g. \
                http://127.0.0.1:8090/merchant/v1/notifications.
                """)
        var notificationUrl: String?
        @Option(
            help: """
                The merchant's own URL, kept in the configuration (publicURL) so explain and reconcile find it \
                (default: the scheme, host and port of --notification-url; without either, none is kept and \
                http://127.0.0.1:8090 is assumed).
                """)
        var merchantUrl: String?
        @Flag(
            help: """
                Overwrite an existing configuration (and its PEMs); the In-App Purchase key it named is revoked and \
                a new one made.
                """)
        var force = false
        @Flag(
            help: """
                The app passes each user's id (a UUID) as the purchase's appAccountToken: grant what the store tells \
                of to that user even without an order (usersByAppAccountToken; what `kiosk check` needs).
                """)
        var usersByAppAccountToken = false
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let client = connection.client
                guard let token = client.token, !token.isEmpty else {
                    throw CLIError(
                        message: "No admin token.",
                        fix:
                            "Pass --token or set KIOSK_ADMIN_TOKEN to the token `kiosk serve` printed at its first start."
                    )
                }
                let file = URL(fileURLWithPath: output).standardizedFileURL
                if FileManager.default.fileExists(atPath: file.path), !force {
                    throw CLIError(
                        message: "\(output) already exists.", field: "--output",
                        fix:
                            "Pass --force to replace it (its admin token, secret and key change), or choose another --output."
                    )
                }
                if let notificationUrl {
                    guard let components = URLComponents(string: notificationUrl),
                        ["http", "https"].contains(components.scheme ?? ""), components.host?.isEmpty == false
                    else {
                        throw CLIError(
                            message: "'\(notificationUrl)' is not an http(s) URL.", field: "--notification-url",
                            fix:
                                "Use the merchant's notification URL, e.g. http://127.0.0.1:8090\(MerchantPaths.notifications)."
                        )
                    }
                }
                let merchantURL = try Self.merchantURL(merchantUrl, notificationURL: notificationUrl)
                // The key the configuration being replaced named, revoked once the new one is written.
                let previousKey = force ? Self.previousKey(in: file, bundleId: app, store: client.server) : nil
                let directory = file.deletingLastPathComponent()
                var configuration: MerchantConfiguration
                do {
                    configuration = try await MerchantSetup.configuration(
                        storeURL: client.server, adminToken: token, bundleId: app, directory: directory,
                        notificationURL: notificationUrl, tlsRoots: try client.tlsRoots())
                } catch let error as KioskError {
                    throw CLIError(error)
                }
                // Kept when a flag named where the merchant is; otherwise the defaults of serve and of explain and
                // reconcile already agree (127.0.0.1:8090), and a merchant served elsewhere names its own address.
                if merchantUrl != nil || notificationUrl != nil { configuration.publicURL = merchantURL }
                if usersByAppAccountToken {
                    for index in configuration.apps.indices { configuration.apps[index].usersByAppAccountToken = true }
                }
                let keyFile = configuration.apps.first?.serverAPIKey?.privateKeyFile ?? "merchant-key.p8"
                // The configuration holds the admin token and the secret that signs user tokens; the key file the
                // In-App Purchase key: only their owner reads them.
                try? FileManager.default.setAttributes(
                    [.posixPermissions: 0o600], ofItemAtPath: directory.appendingPathComponent(keyFile).path)
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                do {
                    try PrivateFile.write(try encoder.encode(configuration) + Data("\n".utf8), to: file.path)
                } catch let error as CLIError {
                    throw error
                } catch {
                    throw CLIError(
                        message: "Cannot write \(file.path): \(error.localizedDescription)", field: "--output",
                        fix: "Check the folder exists and is writable.")
                }
                let newKeyId = configuration.apps.first?.serverAPIKey?.keyId
                var replaced: String?
                if let previousKey, previousKey != newKeyId {
                    replaced = await Self.revoke(previousKey, app: app, client: client)
                }
                if connection.json {
                    var printed = ["configuration": file.path, "adminToken": configuration.adminToken]
                    printed["merchantURL"] = merchantURL
                    if let previousKey, replaced != nil { printed["revokedKeyId"] = previousKey }
                    printJSON(printed)
                    return
                }
                let settings = configuration.apps.first
                let roots = (settings?.rootCertificates ?? [:]).sorted { $0.key > $1.key }.flatMap(\.value)
                var lines = [
                    "Wrote \(file.path) for \(app)",
                    "  store:        \(client.server)",
                    "  roots:        \(roots.joined(separator: ", "))",
                    "  merchant:     \(merchantURL) "
                        + (configuration.publicURL == nil
                            ? "(the default of serve, explain and reconcile)"
                            : "(publicURL: where explain and reconcile reach it)"),
                    "  Server API:   key \(settings?.serverAPIKey?.keyId ?? "?") in \(keyFile) (mode 0600)",
                    "  admin token:  \(configuration.adminToken)",
                    "                (the merchant's admin routes: explain, reconcile; also in the file, mode 0600)",
                ]
                if let replaced { lines.insert("                \(replaced)", at: 5) }
                if let tlsRoots = configuration.tlsRootCertificates {
                    lines.insert(
                        "  TLS root:     \(tlsRoots.joined(separator: ", ")) (trusted for the https store)", at: 3)
                }
                let products = settings?.products ?? []
                if products.isEmpty {
                    lines.append("  products:     none yet; add them to the file (or to the catalog, then init again)")
                } else {
                    var table = TextTable("PRODUCT", "TYPE", "GRANTS")
                    for product in products { table.add(product.productId, product.type.rawValue, product.grants) }
                    lines.append("")
                    lines += table.trimmedLines
                    lines.append("")
                }
                if let notificationUrl {
                    lines.append(
                        "The store now sends \(app)'s notifications (sandbox and production) to \(notificationUrl).")
                } else {
                    lines.append(
                        "The store sends this merchant no notifications yet (refunds, renewals): run init with "
                            + "--notification-url, or `kiosk apps update \(app) --sandbox-notification-url "
                            + "\(merchantURL)\(MerchantPaths.notifications)`.")
                }
                lines.append(
                    Self.next(
                        config: output, merchantURL: merchantURL,
                        tlsRoot: connection.tlsRoot ?? ProcessInfo.processInfo.environment["KIOSK_TLS_ROOT"]))
                for line in lines { print(line) }
            }
        }

        /// The port `kiosk merchant serve` listens on when given none.
        static let defaultPort = 8090

        /// The merchant's own URL (scheme, host and port, no path): `--merchant-url`, else where
        /// `--notification-url` points, else the loopback address and ``defaultPort``.
        static func merchantURL(_ given: String?, notificationURL: String?) throws -> String {
            if let given {
                guard var components = URLComponents(string: given),
                    ["http", "https"].contains(components.scheme ?? ""),
                    components.host?.isEmpty == false
                else {
                    throw CLIError(
                        message: "'\(given)' is not an http(s) URL.", field: "--merchant-url",
                        fix: "Use where the merchant is reached, e.g. http://127.0.0.1:\(defaultPort).")
                }
                while components.path.hasSuffix("/") { components.path.removeLast() }
                return components.string ?? given
            }
            guard let notificationURL, var components = URLComponents(string: notificationURL) else {
                return "http://127.0.0.1:\(defaultPort)"
            }
            components.path = ""
            components.query = nil
            components.fragment = nil
            return components.string ?? "http://127.0.0.1:\(defaultPort)"
        }

        /// The command that serves the merchant where the store was told to send: its port when not the default,
        /// and the TLS flags when the URL is https.
        static func next(config: String, merchantURL: String, tlsRoot: String? = nil) -> String {
            let components = URLComponents(string: merchantURL)
            let https = components?.scheme == "https"
            let port = components?.port ?? (https ? 443 : 80)
            var command = "kiosk merchant serve --config \(config)"
            if port != defaultPort { command += " --port \(port)" }
            if https {
                let (certificate, key) = issuedCertificate(besideRoot: tlsRoot) ?? ("CERTIFICATE.pem", "KEY.pem")
                command += " --tls-certificate \(certificate) --tls-key \(key)"
            }
            return "Next: \(command)   (serves \(merchantURL))"
        }

        /// The certificate and key `kiosk certs tls` issued beside the TLS root `root` (its folder holds the root,
        /// then `<name>.pem` and `<name>.key`), when there is exactly one.
        static func issuedCertificate(besideRoot root: String?) -> (String, String)? {
            guard let root else { return nil }
            let folder = URL(fileURLWithPath: root).deletingLastPathComponent()
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return nil }
            let issued = names.filter { name in
                name.hasSuffix(".pem") && name != URL(fileURLWithPath: root).lastPathComponent
                    && names.contains(String(name.dropLast(4)) + ".key")
            }
            guard issued.count == 1, let name = issued.first else { return nil }
            return (
                folder.appendingPathComponent(name).path,
                folder.appendingPathComponent(String(name.dropLast(4)) + ".key").path
            )
        }

        /// The In-App Purchase key id the configuration at `file` names for `bundleId` at the store `store`, if the
        /// file is one.
        static func previousKey(in file: URL, bundleId: String, store: String) -> String? {
            guard let data = try? Data(contentsOf: file),
                let document = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                let apps = document["apps"] as? [[String: Any]]
            else { return nil }
            let trimmed = { (url: String) in url.hasSuffix("/") ? String(url.dropLast()) : url }
            for app in apps where app["bundleId"] as? String == bundleId {
                // A key of another store is not this store's to revoke.
                if let kept = app["store"] as? String, trimmed(kept) != trimmed(store) { continue }
                if let key = (app["serverAPIKey"] as? [String: Any])?["keyId"] as? String { return key }
            }
            return nil
        }

        /// Revokes the key the replaced configuration named; says what became of it (nil when the store knows no
        /// such key any more, e.g. revoked by hand).
        static func revoke(_ keyId: String, app: String, client: AdminClient) async -> String? {
            do {
                _ = try await client.delete(AdminRoutes.key.path(app, keyId))
                return "(replaces key \(keyId), now revoked: its tokens stop working)"
            } catch let error as CLIError where error.code == "key_not_found" {
                return nil
            } catch {
                return "(the previous key \(keyId) could not be revoked: revoke it with `kiosk keys revoke --app "
                    + "\(app) \(keyId)`)"
            }
        }
    }

    struct Token: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a user token, as your sign-in would issue it.",
            discussion: """
                Made offline from the configuration's userTokenSecret; nothing is stored. The app sends it to the \
                merchant as Authorization: Bearer <token>. Prints only the token, e.g. \
                export COIN_SHOP_USER_TOKEN=$(kiosk merchant token --config merchant.json --user alice).
                """)
        @Option(help: "The merchant configuration (KIOSK_MERCHANT_CONFIG).") var config: String?
        @Option(help: "The user the token names: your own id for the signed-in user.") var user: String
        @Option(help: "How long the token is valid, in seconds (2592000: 30 days).") var expiresIn: Int = 2_592_000
        @Flag(help: "Print one JSON document instead of text.") var json = false

        func run() async throws {
            try await reportingErrors {
                guard !user.isEmpty else {
                    throw CLIError(
                        message: "The user id is empty.", field: "--user", fix: "Pass the user's id, e.g. --user alice."
                    )
                }
                guard let expires = UserTokens.expiry(lifetime: expiresIn, from: Date()) else {
                    throw CLIError(
                        message: "'\(expiresIn)' is not a lifetime.", field: "--expires-in",
                        fix: "Use a positive number of seconds, e.g. 86400 for a day.")
                }
                let loaded = try loadMerchantConfiguration(config)
                let token = UserTokens(secret: loaded.raw.userTokenSecret).issue(userId: user, expiresAt: expires)
                if json {
                    printJSON(MerchantTokenResponse(userId: user, token: token, expiresDate: expires))
                } else {
                    print(token)
                }
            }
        }
    }
}

extension MerchantConfiguration.ProductSettings {
    /// What a grant gives, e.g. `100 coins` or `entitlement pro`.
    var grants: String {
        var parts: [String] = []
        if let balance { parts.append("\(amount ?? 0) \(balance) per unit") }
        if let entitlement {
            parts.append(
                "entitlement \(entitlement)" + (level.map { " at level \($0)" } ?? "")
                    + (durationDays.map { " for \($0) days" } ?? ""))
        }
        if let content { parts.append("content \(content)") }
        if listed == false { parts.append("(unlisted)") }
        return parts.joined(separator: ", ")
    }
}

extension TextTable {
    /// The table's lines without the padding an empty last cell leaves.
    var trimmedLines: [String] {
        lines.map { line in String(line.reversed().drop(while: { $0 == " " }).reversed()) }
    }
}

extension CLIError {
    /// A `KioskError` as the CLI prints it: message, where, what to do.
    init(_ error: KioskError) {
        self.init(message: error.message, field: error.field, fix: error.fix, code: error.code.rawValue)
    }
}

/// Reads and checks a merchant configuration: `path`, else KIOSK_MERCHANT_CONFIG.
func loadMerchantConfiguration(_ path: String?) throws -> LoadedMerchantConfiguration {
    guard let path = path ?? ProcessInfo.processInfo.environment["KIOSK_MERCHANT_CONFIG"], !path.isEmpty else {
        throw CLIError(
            message: "No merchant configuration.", field: "--config",
            fix:
                "Pass --config merchant.json or set KIOSK_MERCHANT_CONFIG; `kiosk merchant init --app BUNDLE_ID` writes one."
        )
    }
    do {
        return try MerchantConfiguration.load(from: path)
    } catch let error as KioskError {
        throw CLIError(error)
    }
}

/// Prints `value` as one indented JSON document with sorted keys and ISO 8601 dates, for `--json`.
func printJSON<T: Encodable>(_ value: T) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .iso8601
    guard let data = try? encoder.encode(value) else { return }
    print(String(decoding: data, as: UTF8.self))
}
