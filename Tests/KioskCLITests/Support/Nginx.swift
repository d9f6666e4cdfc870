import AsyncHTTPClient
import Foundation
import KioskTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A real nginx in front of store replicas, configured with the documented configuration (`docs/operations.md`,
/// section "Run several replicas"): its `server` lines become the replicas' addresses and `listen 80` a loopback
/// port; everything else is the text an operator copies.
enum Nginx {
    /// The document's nginx block with the test's replicas and port.
    static func site(document: String, listen port: Int, upstreams: [Int]) throws -> String {
        let opening = try #require(document.range(of: "```nginx\n"), "docs/operations.md shows no nginx configuration")
        let closing = try #require(
            document.range(of: "\n```", range: opening.upperBound..<document.endIndex), "the nginx block never ends")
        var lines = document[opening.upperBound..<closing.lowerBound].split(
            separator: "\n", omittingEmptySubsequences: false
        )
        .map(String.init)
        let servers = lines.indices.filter {
            let line = lines[$0].trimmingCharacters(in: .whitespaces)
            return line.hasPrefix("server ") && line.hasSuffix(":8080;")
        }
        let listen = lines.indices.filter { lines[$0].trimmingCharacters(in: .whitespaces) == "listen 80;" }
        try #require(servers.count >= 2 && listen.count == 1, "the documented upstream or listen lines changed")
        let indent = String(lines[servers[0]].prefix { $0 == " " })
        lines[listen[0]] = lines[listen[0]].replacingOccurrences(of: "listen 80;", with: "listen 127.0.0.1:\(port);")
        for index in servers.reversed() { lines.remove(at: index) }
        lines.insert(contentsOf: upstreams.map { "\(indent)server 127.0.0.1:\($0);" }, at: servers[0])
        return lines.joined(separator: "\n") + "\n"
    }

    /// A whole configuration around `site` that keeps every file nginx writes in `directory`, in the foreground.
    static func configuration(site: String, directory: URL) -> String {
        let path = directory.path
        return """
            \(geteuid() == 0 ? "user root;" : "")
            worker_processes 1;
            daemon off;
            pid \(path)/nginx.pid;
            error_log \(path)/error.log warn;
            events { worker_connections 512; }
            http {
                log_format upstreams '$request $status $upstream_addr';
                access_log \(path)/access.log upstreams;
                client_body_temp_path \(path)/client-body;
                proxy_temp_path \(path)/proxy;
                fastcgi_temp_path \(path)/fastcgi;
                uwsgi_temp_path \(path)/uwsgi;
                scgi_temp_path \(path)/scgi;
            \(site)
            }

            """
    }

    /// Runs nginx with the documented configuration on `port`, in front of the replicas on `upstreams`, while `body`
    /// runs with its URL; stops it afterwards. Waits (at most a minute) until it answers `/health` through a replica.
    static func with<T>(
        listen port: Int, upstreams: [Int], directory: URL, _ body: (String) async throws -> T
    ) async throws -> T {
        let executable = try TestEnvironment.require(.nginx)
        let document = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("docs/operations.md")
        let site = try Self.site(
            document: String(contentsOf: document, encoding: .utf8), listen: port, upstreams: upstreams)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("nginx.conf")
        try Self.configuration(site: site, directory: directory).write(to: file, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [
            "-p", directory.path, "-e", directory.appendingPathComponent("error.log").path, "-c", file.path,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        let url = "http://127.0.0.1:\(port)"
        let deadline = Date().addingTimeInterval(60)
        while true {
            let pastDeadline = Date() >= deadline
            if let health = try? await HTTPClient.shared.get(url: url + "/health").get(), health.status.code == 200 {
                break
            }
            if !process.isRunning || pastDeadline {
                let log = (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8))
                Issue.record("nginx did not answer /health on \(url): \(log ?? "no error log")")
                throw NginxError()
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        return try await body(url)
    }

    /// The replica ports nginx passed requests to so far, from its access log.
    static func upstreamPorts(directory: URL) throws -> Set<Int> {
        let log = try String(contentsOf: directory.appendingPathComponent("access.log"), encoding: .utf8)
        return Set(
            log.split(separator: "\n").compactMap { line in
                line.split(separator: " ").last?.split(separator: ":").last.flatMap { Int($0) }
            })
    }

    struct NginxError: Error {}
}
