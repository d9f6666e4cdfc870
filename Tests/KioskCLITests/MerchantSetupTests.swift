import Foundation
import KioskTestSupport
import KioskTesting
import Testing

/// `kiosk merchant init` as the walkthrough runs it on a port of its choosing: the configuration keeps the
/// merchant's own URL, so `explain` and `reconcile` reach the merchant without `KIOSK_MERCHANT_URL`; the "Next:"
/// line serves it where the store was told to send; `--force` revokes the key the replaced configuration named;
/// and `reconcile --repair` says what it repaired and what it could not, and why.
@Suite(.runsServers) struct MerchantSetupTests {
    @Test func initKeepsTheMerchantsURLAndReplacesItsKey() async throws {
        try await withTestStore { store in
            try await MerchantCommandTests.createShop(on: store)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
                "kiosk-merchant-setup-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            let config = folder.appendingPathComponent("merchant.json").path
            let storeOptions = ["--server", store.baseURL, "--token", store.adminToken]
            let port = try freeLoopbackPort()
            let merchantURL = "http://127.0.0.1:\(port)"
            let initOptions = [
                "merchant", "init", "--app", MerchantCommandTests.app, "--output", config, "--notification-url",
                "\(merchantURL)/merchant/v1/notifications",
            ]

            let first = try await KioskProcess.run(initOptions + storeOptions)
            #expect(first.status == 0, "\(first.stderr)")
            let next = try Self.nextCommand(in: first.stdout)
            #expect(next == ["merchant", "serve", "--config", config, "--port", String(port)], "\(first.stdout)")
            #expect(try Self.publicURL(config) == merchantURL)
            let firstKeys = try await KioskProcess.run(
                ["keys", "list", "--app", MerchantCommandTests.app] + storeOptions)
            let firstKey = try #require(Self.activeKeys(firstKeys.stdout).first, "\(firstKeys.stdout)")
            #expect(Self.activeKeys(firstKeys.stdout).count == 1, "\(firstKeys.stdout)")

            // --force: a new key, and the one the replaced configuration named is revoked.
            let again = try await KioskProcess.run(initOptions + ["--force"] + storeOptions)
            #expect(again.status == 0, "\(again.stderr)")
            #expect(again.stdout.contains("replaces key \(firstKey), now revoked"), "\(again.stdout)")
            let keys = try await KioskProcess.run(["keys", "list", "--app", MerchantCommandTests.app] + storeOptions)
            #expect(keys.status == 0, "\(keys.stderr)")
            #expect(Self.activeKeys(keys.stdout).count == 1, "one Merchant server key is active: \(keys.stdout)")
            #expect(!Self.activeKeys(keys.stdout).contains(firstKey), "\(keys.stdout)")

            // The merchant, served by the "Next:" line as printed; explain and reconcile find it from the file.
            let merchant = try await ServeProcess.listening(command: Array(next.prefix(2)), Array(next.dropFirst(2)))
            defer { merchant.kill() }
            #expect(try await merchant.baseURL() == merchantURL)
            let explained = try await KioskProcess.run(["merchant", "explain", "--user", "alice", "--config", config])
            #expect(explained.status == 0, "no KIOSK_MERCHANT_URL needed: \(explained.stderr)")

            // A purchase no order names: reconcile finds it and --repair cannot grant it, and says why.
            let bought = try await KioskProcess.run(
                [
                    "test", "buy", "--app", MerchantCommandTests.app, "--tester", "t@example.com", "--product",
                    MerchantCommandTests.coins,
                ] + storeOptions)
            #expect(bought.status == 0, "\(bought.stderr)")
            let repaired = try await KioskProcess.run(
                ["merchant", "reconcile", "--environment", "sandbox", "--repair", "--config", config])
            #expect(repaired.status == 0, "\(repaired.stderr)")
            Self.expectNothingRepaired(repaired.stdout)
            #expect(try await merchant.terminate() == 0)
        }
    }

    /// Checks a `reconcile --repair` that could repair nothing says so, with the reason, rather than "repaired".
    static func expectNothingRepaired(_ output: String) {
        #expect(output.contains("1 store transaction, 0 grants, 1 finding"), "\(output)")
        #expect(!output.contains(", repaired"), "\(output)")
        #expect(output.contains("Repaired 0 of 1 finding; 1 could not be repaired."), "\(output)")
        #expect(output.contains("1 no_user: no order or earlier grant names whose purchase it is"), "\(output)")
    }

    /// The words of the command on the "Next: kiosk …" line, without `kiosk` and the comment after it.
    static func nextCommand(in output: String) throws -> [String] {
        let line = try #require(output.split(separator: "\n").first { $0.hasPrefix("Next: kiosk ") }, "\(output)")
        let command = line.dropFirst("Next: kiosk ".count).components(separatedBy: "   (").first ?? ""
        return command.split(separator: " ").map(String.init)
    }

    /// The `publicURL` the configuration keeps.
    static func publicURL(_ path: String) throws -> String? {
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path)))
        return (document as? [String: Any])?["publicURL"] as? String
    }

    /// The key ids `kiosk keys list` shows active.
    static func activeKeys(_ output: String) -> [String] {
        output.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ")
            return words.count >= 2 && words[1] == "active" ? String(words[0]) : nil
        }
    }
}
