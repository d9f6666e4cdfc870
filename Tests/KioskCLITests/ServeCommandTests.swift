import AsyncHTTPClient
import Foundation
import KioskTestSupport
import KioskTesting
import Testing

@Suite(.runsServers) struct ServeCommandTests {
    /// `kiosk serve` on a fresh data directory creates the database, owner-only signing keys and an admin token it
    /// prints once, answers `/health`, stops cleanly on SIGTERM, and on the next start keeps the same state and
    /// prints no token.
    @Test func firstStartThenRestart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kiosk-serve-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }

        let first = try ServeProcess(["--port", "0", "--data-dir", directory.path, "--log-level", "warning"])
        let listening = try await first.waitForLine(containing: "listening on http://")
        let baseURL = try #require(listening.split(separator: " ").last.map(String.init))
        let tokenLine = try #require(first.lines.first { $0.hasPrefix("Admin token:") })
        let token = try #require(tokenLine.split(separator: " ").last.map(String.init))
        #expect(token.hasPrefix("kiosk_"))
        #expect(first.lines.contains { $0.contains("generated now for production, sandbox") })

        let health = try await HTTPClient.shared.get(url: baseURL + "/health").get()
        #expect(health.status.code == 200)
        let apps = try await KioskProcess.run(["apps", "list", "--server", baseURL, "--token", token])
        #expect(apps.status == 0, "\(apps.stderr)")

        for environment in ["production", "sandbox"] {
            let keyPath = directory.appendingPathComponent("signing/\(environment)/leaf-key.pem").path
            let mode = try #require(FileManager.default.attributesOfItem(atPath: keyPath)[.posixPermissions] as? Int)
            #expect(mode == 0o600, "\(keyPath) must be readable by its owner only")
        }
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("kiosk.sqlite").path))
        #expect(try await first.terminate() == 0)

        let second = try ServeProcess(["--port", "0", "--data-dir", directory.path, "--log-level", "warning"])
        _ = try await second.waitForLine(containing: "listening on http://")
        #expect(second.lines.contains { $0.contains("set at an earlier start") })
        #expect(!second.lines.contains { $0.contains("generated now") })
        #expect(!second.lines.contains { $0.contains(token) }, "the token is printed only once")
        #expect(try await second.terminate() == 0)
    }

    /// A second store on a taken port says which process holds it (its secret flags hidden) and what to do,
    /// instead of a raw `bind … errno 98`.
    @Test func aTakenPortNamesItsHolder() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-port-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let token = "kiosk_port_test_admin_token_0123456789"
        let first = try ServeProcess([
            "--port", "0", "--data-dir", directory.appendingPathComponent("a").path, "--admin-token", token,
            "--log-level", "warning",
        ])
        let listening = try await first.waitForLine(containing: "listening on http://")
        let port = try #require(listening.split(separator: ":").last.map(String.init))
        let second = try await KioskProcess.run([
            "serve", "--port", port, "--data-dir", directory.appendingPathComponent("b").path, "--admin-token", token,
            "--log-level", "warning",
        ])
        #expect(second.status == 1)
        #expect(
            second.stderr.contains(
                "error: The store cannot listen on 127.0.0.1:\(port): the port is in use (held by pid "
                    + "\(first.processIdentifier), "), "\(second.stderr)")
        #expect(second.stderr.contains("--admin-token …"), "\(second.stderr)")
        #expect(!second.stderr.contains(token), "the holder's secret flags are hidden")
        #expect(second.stderr.contains("\n  at:  --port\n  fix: Stop the process that holds it"), "\(second.stderr)")
        #expect(try await first.terminate() == 0)
    }

    /// Bad flags are refused with a readable error (what, where, what to do) and exit 1, before anything starts: a
    /// too short admin token leaves no data directory behind (no database, no signing keys).
    @Test func badFlagsAreExplained() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kiosk-bad-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = try await KioskProcess.run(["serve", "--port", "99999", "--data-dir", directory.path])
        #expect(port.status == 1)
        #expect(
            port.stderr == "error: '99999' is not a port.\n  at:  --port\n  fix: Use a number from 0 to 65535.\n",
            "\(port.stderr)")
        let database = try await KioskProcess.run([
            "serve", "--port", "0", "--database", "mysql://x", "--data-dir", directory.path,
        ])
        #expect(database.status == 1)
        #expect(
            database.stderr.hasPrefix(
                "error: The store could not open its database: 'mysql://x' uses the scheme 'mysql', which Kiosk does "
                    + "not support; accepted forms: "), "\(database.stderr)")
        #expect(database.stderr.contains("\n  at:  --database\n  fix: "), "\(database.stderr)")
        try? FileManager.default.removeItem(at: directory)
        let token = try await KioskProcess.run(["serve", "--admin-token", "short", "--data-dir", directory.path])
        #expect(token.status == 1)
        #expect(
            token.stderr
                == "error: The admin token must be at least 16 characters long.\n  at:  --admin-token\n  fix: "
                + "Pass a longer token, or leave it out to have Kiosk generate one.\n", "\(token.stderr)")
        #expect(
            !FileManager.default.fileExists(atPath: directory.path),
            "a refused token left a data directory (database, keys) behind")
        let idle = try await KioskProcess.run(["serve", "--idle-timeout", "0", "--data-dir", directory.path])
        #expect(idle.status == 1)
        #expect(
            idle.stderr
                == "error: '0' is not a timeout.\n  at:  --idle-timeout\n  fix: Use a number of seconds from 1 to 3600, "
                + "such as 30.\n", "\(idle.stderr)")
        let budget = try await KioskProcess.run(
            ["serve", "--data-dir", directory.path], environment: ["KIOSK_RETENTION_BUDGET": "0.7s"])
        #expect(budget.status == 1)
        #expect(
            budget.stderr
                == "error: '0.7s' is not a retention budget.\n  at:  --retention-budget\n  fix: Use a number of "
                + "milliseconds from 1 to 60000, such as Apple's 700.\n", "\(budget.stderr)")
        let body = try await KioskProcess.run(
            ["merchant", "serve", "--config", directory.appendingPathComponent("merchant.json").path],
            environment: ["KIOSK_BODY_TIMEOUT": "nan"])
        #expect(body.status == 1)
        #expect(body.stderr.contains("'nan' is not a timeout.\n  at:  --body-timeout\n"), "\(body.stderr)")
    }

    /// `--idle-timeout` and `KIOSK_BODY_TIMEOUT` reach the server, which says so at start, and a request head that
    /// never completes is closed.
    @Test func timeoutOptionsReachTheServer() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-idle-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = try freeLoopbackPort()
        let store = try ServeProcess(
            ["--port", String(port), "--data-dir", directory.path, "--idle-timeout", "1"],
            environment: ["KIOSK_BODY_TIMEOUT": "2.5"])
        _ = try await store.waitForLine(containing: "listening on http://")
        #expect(try await store.waitForLine(containing: "Timeouts:") == "Timeouts:         idle 1 s, body 2.5 s")
        let answer = try await withRawConnection(port: port) { connection in
            try await connection.send("GET /health HTTP/1.1\r\nHost: kiosk\r\n")
            return try await connection.readUntilClosed()
        }
        #expect(answer.isEmpty, "closed without an answer: \(answer)")
        #expect(try await store.terminate() == 0)
    }
}

extension ServeCommandTests {
    /// Secrets come from files or the environment, never only from flags the process list shows: the admin token
    /// from `--admin-token-file`, the metrics token from `KIOSK_METRICS_TOKEN_FILE`; `/metrics` then answers that
    /// token and refuses none. A bad policy or an unreadable file is explained.
    @Test func tokensComeFromFilesAndMetricsNeedOne() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kiosk-token-files-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let adminFile = directory.appendingPathComponent("admin-token")
        let metricsFile = directory.appendingPathComponent("metrics-token")
        try "kiosk_admin_token_from_a_file_0123\n".write(to: adminFile, atomically: true, encoding: .utf8)
        try "metrics_token_from_a_file_456789\n".write(to: metricsFile, atomically: true, encoding: .utf8)
        let data = directory.appendingPathComponent("data").path

        let policy = try await KioskProcess.run(["serve", "--data-dir", data, "--outbound-urls", "intranet"])
        #expect(policy.status == 1)
        #expect(
            policy.stderr
                == "error: 'intranet' is not an outbound URL policy.\n  at:  --outbound-urls\n  fix: Use any (the "
                + "default) or public-https.\n", "\(policy.stderr)")
        let missing = try await KioskProcess.run(
            ["serve", "--data-dir", data, "--admin-token-file", directory.appendingPathComponent("nope").path])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("could not be read as a token file.\n  at:  --admin-token-file\n"))

        let server = try ServeProcess(
            [
                "--port", "0", "--data-dir", data, "--log-level", "warning", "--admin-token-file", adminFile.path,
                "--outbound-urls", "public-https",
            ],
            environment: ["KIOSK_METRICS_TOKEN_FILE": metricsFile.path])
        let listening = try await server.waitForLine(containing: "listening on http://")
        let baseURL = try #require(listening.split(separator: " ").last.map(String.init))
        #expect(!server.lines.contains { $0.contains("kiosk_admin_token_from_a_file") }, "a given token is not printed")
        let apps = try await KioskProcess.run(
            ["apps", "list", "--server", baseURL],
            environment: ["KIOSK_ADMIN_TOKEN": "kiosk_admin_token_from_a_file_0123"])
        #expect(apps.status == 0, "\(apps.stderr)")
        func metrics(_ token: String?) async throws -> UInt {
            var request = HTTPClientRequest(url: baseURL + "/metrics")
            if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
            let answer = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
            _ = try await answer.body.collect(upTo: 1 << 20)
            return answer.status.code
        }
        #expect(try await metrics(nil) == 401)
        #expect(try await metrics("metrics_token_from_a_file_456789") == 200)
        let admin = ["KIOSK_ADMIN_TOKEN": "kiosk_admin_token_from_a_file_0123", "KIOSK_SERVER": baseURL]
        let created = try await KioskProcess.run(
            ["apps", "create", "--bundle-id", "com.example.app", "--name", "Example"], environment: admin)
        #expect(created.status == 0, "\(created.stderr)")
        let refused = try await KioskProcess.run(
            ["apps", "update", "com.example.app", "--production-notification-url", "http://127.0.0.1:9/apple"],
            environment: admin)
        #expect(refused.status == 1)
        #expect(
            refused.stderr.contains("this store sends only to https URLs (--outbound-urls public-https)"),
            "\(refused.stderr)")
        #expect(refused.stderr.contains("at:  --production-notification-url"), "\(refused.stderr)")
        #expect(try await server.terminate() == 0)
    }
}
