import Foundation
import KioskTestSupport
import KioskTesting
import Testing

/// The example coin shop as the CLI tests drive it: its app, products, agreement and tester made with the `kiosk`
/// CLI, the `coin-shop` binary run as the tester on a device (a state directory), and what the store and the
/// device then hold.
enum CoinShop {
    static let app = "com.example.shop"
    static let tester = "t@example.com"

    /// The `coin-shop` binary SwiftPM built beside `kiosk`.
    static var executable: URL { KioskProcess.builtExecutable(named: "coin-shop") }

    /// The app, its two products, the agreement and a tester, made with the `kiosk` CLI as a developer would.
    static func createShop(on store: TestStore) async throws {
        try await createShop(server: store.baseURL, token: store.adminToken)
    }

    /// ``createShop(on:)`` on a store at `server` with the admin token `token` (and `environment`, e.g.
    /// `KIOSK_TLS_ROOT` for an https store).
    static func createShop(server: String, token: String, environment: [String: String] = [:]) async throws {
        let kiosk = { (arguments: [String]) in
            try await KioskProcess.run(arguments + ["--server", server, "--token", token], environment: environment)
        }
        #expect(try await kiosk(["apps", "create", "--bundle-id", app, "--name", "Shop"]).status == 0)
        for (id, type, name) in [("coins", "consumable", "100 Coins"), ("remove_ads", "non_consumable", "Remove Ads")] {
            let created = try await kiosk([
                "products", "create", "--app", app, "--id", "\(app).\(id)", "--type", type, "--reference-name", name,
                "--tier", "1", "--locale", "en_US", "--display-name", name, "--description", "\(name) for the shop",
            ])
            #expect(created.status == 0, "\(created.stderr)")
        }
        #expect(try await kiosk(SampleAgreement.commandLine).status == 0)
        #expect(
            try await kiosk(["testers", "create", "--email", tester, "--password", "sandbox-pass"]).status == 0
        )
    }

    /// The tester's transactions in the app, as `kiosk test transactions --json` lists them (the command must
    /// succeed: an empty list from a failed command proves nothing).
    static func testerTransactions(on store: TestStore) async throws -> [(id: String, finished: Bool)] {
        try await testerTransactions(server: store.baseURL, token: store.adminToken)
    }

    /// ``testerTransactions(on:)`` of a store at `server` with the admin token `token`.
    static func testerTransactions(server: String, token: String) async throws -> [(id: String, finished: Bool)] {
        let listed = try await KioskProcess.run([
            "test", "transactions", "--app", app, "--tester", tester, "--json", "--server", server, "--token", token,
        ])
        try #require(listed.status == 0, "\(listed.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])
        let transactions = try #require(json["transactions"] as? [[String: Any]], "\(listed.stdout)")
        return try transactions.map { entry in
            (
                try #require(entry["transactionId"] as? String, "\(entry)"),
                try #require(entry["finished"] as? Bool, "\(entry)")
            )
        }
    }

    /// Runs `coin-shop` as the tester on `device`, against `store`.
    static func run(_ arguments: [String], store: TestStore, device: URL) async throws -> KioskProcess.Result {
        try await run(arguments, server: store.baseURL, device: device)
    }

    /// Runs `coin-shop` as the tester on `device`, against the store at `server` (or a proxy in front of it);
    /// `onStart` gets its process id.
    static func run(
        _ arguments: [String], server: String, device: URL, environment: [String: String] = [:],
        onStart: @escaping @Sendable (Int32) -> Void = { _ in }
    ) async throws -> KioskProcess.Result {
        try await KioskProcess.run(
            arguments + [
                "--server", server, "--bundle-id", app, "--email", tester, "--password",
                "sandbox-pass", "--state-dir", device.path,
                // A full test run keeps two cores busy; a slow answer then is load, not the shop's behaviour.
                "--timeout", "120",
            ], environment: environment, executable: executable, onStart: onStart)
    }

    static func temporaryDevice() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("phone-\(UUID().uuidString)")
    }

    /// The device's `coin-shop.json`.
    static func ledger(of device: URL) throws -> [String: Any] {
        let data = try Data(contentsOf: device.appendingPathComponent("coin-shop.json"))
        return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
    }

}
