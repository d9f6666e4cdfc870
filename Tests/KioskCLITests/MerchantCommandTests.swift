import AsyncHTTPClient
import Foundation
import KioskMerchant
import KioskTestSupport
import KioskTesting
import NIOCore
import Testing

/// `kiosk merchant …` as a developer types it: a real store, the real `kiosk` executable, a real merchant process.
@Suite struct MerchantCommandTests {
    static let app = "com.example.cli-shop"
    static let coins = "com.example.cli_shop.coins"

    /// init writes a working configuration (roots, key, products), token issues a user token, serve listens and
    /// prints where the store should send notifications, explain and reconcile ask the running merchant — before
    /// and after a purchase the merchant granted — and SIGTERM stops it cleanly.
    @Test func initServeTokenExplainReconcile() async throws {
        try await withTestStore { store in
            try await Self.createShop(on: store)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
                "kiosk-merchant-cli-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            let config = folder.appendingPathComponent("merchant.json")
            let storeOptions = ["--server", store.baseURL, "--token", store.adminToken]

            // init: the configuration, both roots and the Server API key, beside each other.
            let initialized = try await KioskProcess.run(
                ["merchant", "init", "--app", Self.app, "--output", config.path] + storeOptions)
            #expect(initialized.status == 0, "\(initialized.stderr)")
            #expect(initialized.stdout.contains("Wrote \(config.path)"), "\(initialized.stdout)")
            #expect(
                initialized.stdout.contains("Next: kiosk merchant serve --config \(config.path)"),
                "\(initialized.stdout)")
            let written = try JSONDecoder().decode(MerchantConfiguration.self, from: Data(contentsOf: config))
            let settings = try #require(written.apps.first)
            #expect(settings.bundleId == Self.app)
            #expect(settings.products.map(\.productId) == [Self.coins])
            #expect(settings.products.first?.type == .consumable && settings.products.first?.balance == "coins")
            for file in settings.rootCertificates.values.flatMap({ $0 }) {
                let pem = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                #expect(pem.contains("-----BEGIN CERTIFICATE-----"), "\(file)")
            }
            #expect(Set(settings.rootCertificates.keys) == ["Sandbox", "Production"])
            let keyFile = try #require(settings.serverAPIKey?.privateKeyFile)
            #expect(
                try String(contentsOf: folder.appendingPathComponent(keyFile), encoding: .utf8).contains("PRIVATE KEY"))
            for secret in [config.path, folder.appendingPathComponent(keyFile).path] {
                let mode = try #require(FileManager.default.attributesOfItem(atPath: secret)[.posixPermissions] as? Int)
                #expect(mode == 0o600, "\(secret) holds secrets: owner only")
            }
            _ = try MerchantConfiguration.load(from: config.path)

            // A second init keeps the configuration unless told to replace it.
            let firstConfiguration = try Data(contentsOf: config)
            let again = try await KioskProcess.run(
                ["merchant", "init", "--app", Self.app, "--output", config.path] + storeOptions)
            #expect(again.status == 1)
            #expect(
                again.stderr.hasPrefix("error: \(config.path) already exists.\n  at:  --output\n  fix: Pass --force"),
                "\(again.stderr)")
            #expect(try Data(contentsOf: config) == firstConfiguration, "the first configuration stays")
            let other = folder.appendingPathComponent("other/merchant.json")
            let json = try await KioskProcess.run(
                ["merchant", "init", "--app", Self.app, "--output", other.path, "--json"] + storeOptions)
            #expect(json.status == 0, "\(json.stderr)")
            let printed = try #require(
                try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], "\(json.stdout)")
            #expect(printed["configuration"] as? String == other.path, "\(json.stdout)")
            #expect((printed["adminToken"] as? String)?.count ?? 0 >= 16, "\(json.stdout)")

            // token: made offline, checked by the same secret the merchant uses.
            let token = try await KioskProcess.run(["merchant", "token", "--config", config.path, "--user", "alice"])
            #expect(token.status == 0, "\(token.stderr)")
            let userToken = token.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(userToken.hasPrefix("kmu1."), "\(token.stdout)")
            #expect(try UserTokens(secret: written.userTokenSecret).userId(from: userToken, now: Date()) == "alice")
            let tokenJSON = try await KioskProcess.run(
                ["merchant", "token", "--config", config.path, "--user", "bob", "--expires-in", "60", "--json"])
            #expect(tokenJSON.status == 0, "\(tokenJSON.stderr)")
            let tokenDocument = try #require(
                try JSONSerialization.jsonObject(with: Data(tokenJSON.stdout.utf8)) as? [String: Any],
                "\(tokenJSON.stdout)")
            #expect(tokenDocument["userId"] as? String == "bob", "\(tokenJSON.stdout)")
            #expect(tokenDocument["expiresDate"] is String && tokenDocument["token"] is String, "\(tokenJSON.stdout)")

            // serve, on any free port.
            let merchant = try ServeProcess(
                command: ["merchant", "serve"], ["--config", config.path, "--port", "0", "--log-level", "warning"])
            let listening = try await merchant.waitForLine(containing: "Kiosk merchant listening on http://")
            let base = try #require(listening.split(separator: " ").last.map(String.init))
            defer { merchant.send(SIGTERM) }
            // The banner's other lines follow the listening line: wait for them rather than look at a snapshot.
            _ = try await merchant.waitForLine(containing: "notifications: \(base)/merchant/v1/notifications")
            _ = try await merchant.waitForLine(containing: "app \(Self.app): 1 product(s)")
            let health = try await HTTPClient.shared.get(url: base + "/health").get()
            #expect(health.status.code == 200)
            #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("merchant.sqlite").path))

            let admin = ["--merchant", base, "--config", config.path]
            let nothing = try await KioskProcess.run(["merchant", "explain", "--user", "alice"] + admin)
            #expect(nothing.status == 0, "\(nothing.stderr)")
            #expect(nothing.stdout.contains("no purchases granted to alice"), "\(nothing.stdout)")
            let clean = try await KioskProcess.run(["merchant", "reconcile", "--environment", "sandbox"] + admin)
            #expect(clean.status == 0, "\(clean.stderr)")
            #expect(clean.stdout.contains("0 store transactions, 0 grants, 0 findings"), "\(clean.stdout)")

            let wrong = try await KioskProcess.run(
                ["merchant", "explain", "--user", "alice", "--merchant", base, "--admin-token", "not-the-admin-token"])
            #expect(wrong.status == 1)
            #expect(
                wrong.stderr.hasPrefix(
                    "error: This endpoint needs the merchant's admin token.\n  at:  Authorization\n  fix: "),
                "\(wrong.stderr)")

            // A purchase the app delivers with alice's token: explain shows the coins, reconcile agrees with the store.
            let bought = try await KioskProcess.run(
                [
                    "test", "buy", "--app", Self.app, "--tester", "t@example.com", "--product", Self.coins,
                    "--quantity", "2",
                ]
                    + storeOptions)
            #expect(bought.status == 0, "\(bought.stderr)")
            let signed = try #require(bought.stdout.split(separator: "\n").last.map(String.init))
            var delivery = HTTPClientRequest(url: base + "/merchant/v1/transactions")
            delivery.method = .POST
            delivery.headers.add(name: "Authorization", value: "Bearer \(userToken)")
            delivery.headers.add(name: "Content-Type", value: "application/json")
            delivery.body = .bytes(
                ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: ["signedTransaction": signed])))
            let delivered = try await HTTPClient.shared.execute(delivery, timeout: .seconds(60))
            let deliveredBody = String(buffer: try await delivered.body.collect(upTo: 1 << 20))
            #expect(delivered.status.code == 200, "\(deliveredBody)")

            let owned = try await KioskProcess.run(["merchant", "explain", "--user", "alice", "--json"] + admin)
            #expect(owned.status == 0, "\(owned.stderr)")
            let document = try #require(
                try JSONSerialization.jsonObject(with: Data(owned.stdout.utf8)) as? [String: Any], "\(owned.stdout)")
            let balances = (document["entitlements"] as? [String: Any])?["balances"] as? [[String: Any]]
            #expect(
                balances?.first?["name"] as? String == "coins" && balances?.first?["amount"] as? Int == 2,
                "\(owned.stdout)")
            #expect(((document["explanation"] as? [String: Any])?["history"] as? [Any])?.count == 1, "\(owned.stdout)")
            let text = try await KioskProcess.run(["merchant", "explain", "--user", "alice"] + admin)
            #expect(text.status == 0, "\(text.stderr)")
            #expect(text.stdout.contains("coins") && text.stdout.contains("granted"), "\(text.stdout)")
            let agreed = try await KioskProcess.run(["merchant", "reconcile", "--environment", "sandbox"] + admin)
            #expect(agreed.status == 0, "\(agreed.stderr)")
            #expect(agreed.stdout.contains("1 store transaction, 1 grant, 0 findings"), "\(agreed.stdout)")

            #expect(try await merchant.terminate() == 0)
        }
    }

    /// Bad input is explained (what, where, what to do) and exits 1, before anything starts: no file, no token,
    /// nobody listening.
    @Test func badInputIsExplained() async throws {
        let missing = "/tmp/kiosk-no-such-\(UUID().uuidString)/merchant.json"
        /// Foundation words the reason; what, where and the fix are Kiosk's.
        func isUnreadable(_ stderr: String) -> Bool {
            stderr.hasPrefix("error: Cannot read the merchant configuration \(missing): ")
                && stderr.contains("\n  at:  \(missing)\n  fix: Pass --config with the path of a JSON file")
        }
        let serve = try await KioskProcess.run(["merchant", "serve", "--config", missing, "--port", "0"])
        #expect(serve.status == 1)
        #expect(isUnreadable(serve.stderr), "\(serve.stderr)")
        let token = try await KioskProcess.run(["merchant", "token", "--config", missing, "--user", "alice"])
        #expect(token.status == 1)
        #expect(isUnreadable(token.stderr), "\(token.stderr)")
        #expect(token.stdout.isEmpty, "no token without a configuration: \(token.stdout)")
        let noConfig = try await KioskProcess.run(["merchant", "serve"])
        #expect(noConfig.status == 1)
        #expect(
            noConfig.stderr.hasPrefix("error: No merchant configuration.\n  at:  --config\n  fix: ")
                && noConfig.stderr.contains("KIOSK_MERCHANT_CONFIG"), "\(noConfig.stderr)")

        let broken = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kiosk-merchant-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: broken) }
        try Data(#"{"adminToken": "a-long-enough-admin-token", "apps": []}"#.utf8).write(to: broken)
        let invalid = try await KioskProcess.run(["merchant", "serve", "--config", broken.path])
        #expect(invalid.status == 1)
        #expect(
            invalid.stderr.hasPrefix(
                "error: The merchant configuration \(broken.path) is not valid: the field 'userTokenSecret' is missing"
                    + "\n  at:  userTokenSecret\n  fix: "), "\(invalid.stderr)")

        let nobody = try await KioskProcess.run(
            ["merchant", "explain", "--user", "alice", "--merchant", "http://127.0.0.1:1", "--admin-token", "x"])
        #expect(nobody.status == 1)
        #expect(
            nobody.stderr.hasPrefix("error: Cannot reach the merchant at http://127.0.0.1:1 ")
                && nobody.stderr.contains("\n  fix: Start it with `kiosk merchant serve"), "\(nobody.stderr)")
        let noToken = try await KioskProcess.run(["merchant", "reconcile", "--environment", "sandbox"])
        #expect(noToken.status == 1)
        #expect(
            noToken.stderr.hasPrefix("error: No merchant admin token.\n  at:  --admin-token\n  fix: "),
            "\(noToken.stderr)")
        let environment = try await KioskProcess.run(
            ["merchant", "reconcile", "--environment", "staging", "--admin-token", "x"])
        #expect(environment.status == 1)
        #expect(
            environment.stderr
                == "error: 'staging' is not an environment.\n  at:  --environment\n  fix: Use sandbox or production.\n",
            "\(environment.stderr)")
        let storeToken = try await KioskProcess.run(["merchant", "init", "--app", Self.app, "--output", broken.path])
        #expect(storeToken.status == 1)
        #expect(
            storeToken.stderr.hasPrefix("error: No admin token.\n  fix: Pass --token or set KIOSK_ADMIN_TOKEN"),
            "\(storeToken.stderr)")
        #expect(
            try Data(contentsOf: broken) == Data(#"{"adminToken": "a-long-enough-admin-token", "apps": []}"#.utf8),
            "a refused init leaves the file alone")
    }

    /// The app with one consumable, the agreement and a tester, through the store's admin API.
    /// `merchant init` names grants as a person would: "100 Coins" credits 100 `coins`, "Remove Ads" unlocks
    /// `remove-ads`, and both levels of the group "Coin Club" unlock the one entitlement `coin-club`.
    @Test func initNamesGrantsFromDisplayNamesAndGroups() async throws {
        try await withTestStore { store in
            let app = "com.example.names"
            let localized = { (name: String) in [["locale": "en_US", "displayName": name, "description": name]] }
            let steps: [(String, [String: Any])] = [
                ("/admin/v1/apps", ["bundleId": app, "name": "Names"]),
                (
                    "/admin/v1/apps/\(app)/subscription-groups",
                    ["referenceName": "Coin Club", "localizations": [["locale": "en_US", "name": "Coin Club"]]]
                ),
                (
                    "/admin/v1/apps/\(app)/products",
                    [
                        "productId": "com.example.coins.100", "type": "consumable", "referenceName": "100 coins",
                        "pricing": ["tier": 1], "localizations": localized("100 Coins"),
                    ]
                ),
                (
                    "/admin/v1/apps/\(app)/products",
                    [
                        "productId": "com.example.removeads", "type": "non_consumable", "referenceName": "No ads",
                        "pricing": ["tier": 3], "localizations": localized("Remove Ads"),
                    ]
                ),
            ]
            for (path, body) in steps {
                let answer = try await store.request(.POST, path, json: body)
                #expect((200..<300).contains(answer.status), "\(path): \(answer.text)")
            }
            for (id, level) in [("com.example.club.gold", 1), ("com.example.club.silver", 2)] {
                let answer = try await store.request(
                    .POST, "/admin/v1/apps/\(app)/products",
                    json: [
                        "productId": id, "type": "auto_renewable", "referenceName": id, "pricing": ["tier": 5],
                        "subscription": ["group": "Coin Club", "level": level], "duration": "P1M",
                        "localizations": localized(level == 1 ? "Gold" : "Silver"),
                    ])
                #expect(answer.status == 201, "\(answer.text)")
            }
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("names-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            let config = folder.appendingPathComponent("merchant.json")
            let initialized = try await KioskProcess.run([
                "merchant", "init", "--app", app, "--output", config.path, "--server", store.baseURL, "--token",
                store.adminToken,
            ])
            #expect(initialized.status == 0, "\(initialized.stderr)")
            let products = try #require(
                try JSONDecoder().decode(MerchantConfiguration.self, from: Data(contentsOf: config)).apps.first?
                    .products)
            let byId = Dictionary(uniqueKeysWithValues: products.map { ($0.productId, $0) })
            #expect(byId["com.example.coins.100"]?.balance == "coins")
            #expect(byId["com.example.coins.100"]?.amount == 100)
            #expect(byId["com.example.removeads"]?.entitlement == "remove-ads")
            #expect(
                byId["com.example.club.gold"]?.entitlement == "coin-club" && byId["com.example.club.gold"]?.level == 1)
            #expect(
                byId["com.example.club.silver"]?.entitlement == "coin-club"
                    && byId["com.example.club.silver"]?.level == 2)
            #expect(initialized.stdout.contains("100 coins per unit"), "\(initialized.stdout)")
            #expect(initialized.stdout.contains("entitlement coin-club at level 2"), "\(initialized.stdout)")
        }
    }

    static func createShop(on store: TestStore) async throws {
        let steps: [(String, [String: Any])] = [
            ("/admin/v1/apps", ["bundleId": app, "name": "CLI Shop"]),
            (
                "/admin/v1/apps/\(app)/products",
                [
                    "productId": coins, "type": "consumable", "referenceName": "Coins", "pricing": ["tier": 1],
                    "localizations": [["locale": "en_US", "displayName": "Coins", "description": "A pile of coins"]],
                ]
            ),
            ("/admin/v1/agreements/paid-apps/accept", SampleAgreement.json),
            ("/admin/v1/testers", ["email": "t@example.com", "password": "sandbox-pass", "storefront": "USA"]),
        ]
        for (path, body) in steps {
            let answer = try await store.request(.POST, path, json: body)
            #expect((200..<300).contains(answer.status), "\(path): \(answer.text)")
        }
    }
}
