import AsyncHTTPClient
import Foundation
import KioskSigning
import KioskTestSupport
import Testing
import X509

/// HTTPS as a developer sets it up, with real processes: `kiosk certs tls` issues a certificate from the Kiosk TLS
/// root; `kiosk serve` and `kiosk merchant serve` answer HTTPS with it; the CLI, KioskKit (the coin shop) and the
/// merchant's store connection reach the store with the root trusted, the store's notifications reach the merchant,
/// and a client without the root is refused with a message that says how to trust it.
@Suite(.runsServers) struct HTTPSTests {
    @Test func storeAndMerchantServeHTTPSToClientsThatTrustTheKioskRoot() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("https-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let data = folder.appendingPathComponent("kiosk-data")
        let issued = try await KioskProcess.run([
            "certs", "tls", "--host", "localhost", "--host", "127.0.0.1", "--data-dir", data.path,
        ])
        #expect(issued.status == 0, "\(issued.stderr)")
        #expect(issued.stdout.contains("(made now: install it once where clients run)"), "\(issued.stdout)")
        let tls = data.appendingPathComponent("tls")
        let root = tls.appendingPathComponent("kiosk-tls-root.pem").path
        let certificate = tls.appendingPathComponent("localhost.pem").path
        let key = tls.appendingPathComponent("localhost.key").path
        let trusted = ["KIOSK_TLS_ROOT": root]

        let token = "kiosk_https_test_admin_token"
        let store = try await ServeProcess.listening([
            "--port", "0", "--data-dir", data.path, "--admin-token", token, "--tls-certificate", certificate,
            "--tls-key", key,
        ])
        defer { store.kill() }
        let server = try await store.baseURL()
        #expect(server.hasPrefix("https://127.0.0.1:"), "\(server)")

        // A client that does not trust the root is refused, and told how to trust it.
        let refused = try await KioskProcess.run(["apps", "list", "--server", server, "--token", token])
        #expect(refused.status == 1)
        #expect(
            refused.stderr.contains("its TLS certificate does not lead to a root this machine trusts")
                && refused.stderr.contains("--tls-root"), "\(refused.stderr)")
        let health = try await Self.health(
            of: server, trusting: try TLSTrust.certificates(inPEMFile: root, field: "root"))
        #expect(health == 200)

        // The CLI with --tls-root (or KIOSK_TLS_ROOT) sets the shop up over HTTPS.
        let listed = try await KioskProcess.run([
            "apps", "list", "--server", server, "--token", token, "--tls-root", root,
        ])
        #expect(listed.status == 0, "\(listed.stderr)")
        try await CoinShop.createShop(server: server, token: token, environment: trusted)

        // The merchant, served over HTTPS too; `init` copies the root into its folder for its store connection.
        let merchantPort = try freeLoopbackPort()
        let config = folder.appendingPathComponent("merchant/merchant.json").path
        let initialized = try await KioskProcess.run(
            [
                "merchant", "init", "--app", CoinShop.app, "--output", config, "--server", server, "--token", token,
                "--notification-url", "https://127.0.0.1:\(merchantPort)/merchant/v1/notifications",
            ], environment: trusted)
        #expect(initialized.status == 0, "\(initialized.stderr)")
        // The Next line serves the merchant where the store was told to send, with the certificate beside the root.
        #expect(
            initialized.stdout.contains(
                "Next: kiosk merchant serve --config \(config) --port \(merchantPort) --tls-certificate \(certificate) "
                    + "--tls-key \(key)"), "\(initialized.stdout)")
        let written = try String(contentsOfFile: config, encoding: .utf8)
        #expect(written.contains("\"tlsRootCertificates\""), "\(written)")
        let merchant = try await ServeProcess.listening(
            command: ["merchant", "serve"],
            [
                "--config", config, "--port", String(merchantPort), "--tls-certificate", certificate, "--tls-key",
                key,
            ])
        defer { merchant.kill() }
        let merchantURL = try await merchant.baseURL()
        #expect(merchantURL == "https://127.0.0.1:\(merchantPort)", "\(merchantURL)")

        // KioskKit reaches the store, and the shop the merchant, over HTTPS with the root trusted.
        let device = folder.appendingPathComponent("phone")
        let untrusting = try await CoinShop.run(["products"], server: server, device: device)
        #expect(untrusting.status != 0)
        #expect(untrusting.stderr.contains("TLS certificate does not lead to a trusted root"), "\(untrusting.stderr)")
        // It names what the shop's user types (the flag, the variable), not KioskKit's configuration property.
        #expect(
            untrusting.stderr.contains("pass --tls-root (or set KIOSK_TLS_ROOT to)")
                && !untrusting.stderr.contains("Configuration.tlsTrustRoots"), "\(untrusting.stderr)")
        let userToken = try await KioskProcess.run(["merchant", "token", "--config", config, "--user", "alice"])
        #expect(userToken.status == 0, "\(userToken.stderr)")
        let bought = try await CoinShop.run(
            [
                "buy", "coins", "--merchant", merchantURL, "--user-token",
                userToken.stdout.trimmingCharacters(in: .whitespacesAndNewlines),
            ], server: server, device: device, environment: trusted)
        #expect(bought.status == 0, "\(bought.stderr)")
        #expect(bought.stdout.contains("Balance at the merchant for alice: 100 coins"), "\(bought.stdout)")

        // The merchant's store connection (the App Store Server API) works over HTTPS: reconciliation finds the
        // purchase granted.
        let reconciled = try await KioskProcess.run([
            "merchant", "reconcile", "--environment", "sandbox", "--config", config, "--merchant", merchantURL,
        ])
        #expect(reconciled.status == 0, "\(reconciled.stderr)")
        #expect(reconciled.stdout.contains("1 store transaction"), "\(reconciled.stdout)")
        #expect(reconciled.stdout.contains("0 findings"), "\(reconciled.stdout)")

        // The store's notification of the purchase reached the merchant over HTTPS: the store trusts the Kiosk TLS
        // root of its data directory. Its first attempt is made right after the purchase; wait for its outcome.
        let outcome = try await Self.notificationOutcome(server: server, token: token, root: root)
        #expect(outcome == "delivered", "the ONE_TIME_CHARGE notification: \(outcome)")
    }

    /// `GET /health` through a client that trusts `roots`.
    static func health(of server: String, trusting roots: [Certificate]) async throws -> UInt {
        var configuration = HTTPClient.Configuration()
        try configuration.trust(roots)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            let response = try await client.execute(HTTPClientRequest(url: server + "/health"), timeout: .seconds(60))
            try await client.shutdown()
            return response.status.code
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    /// The state of the app's ONE_TIME_CHARGE notification once it left `pending` (at most a minute).
    static func notificationOutcome(server: String, token: String, root: String) async throws -> String {
        let deadline = ContinuousClock.now + .seconds(60)
        var state = "none"
        while ContinuousClock.now < deadline {
            let listed = try await KioskProcess.run([
                "test", "notifications", "--app", CoinShop.app, "--server", server, "--token", token, "--tls-root",
                root, "--json",
            ])
            try #require(listed.status == 0, "\(listed.stderr)")
            let json = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any]
            let notifications = json?["notifications"] as? [[String: Any]] ?? []
            state =
                notifications.first { $0["notificationType"] as? String == "ONE_TIME_CHARGE" }?["state"]
                as? String ?? "none"
            if state != "pending" && state != "none" { return state }
            try await Task.sleep(for: .milliseconds(200))
        }
        return state
    }
}
