import Foundation
import KioskHTTPClient
import KioskSigning
import NIOCore
import NIOHTTP1
import X509

/// Talks to a running store's console API and sandbox test controls for the CLI, at the paths of
/// ``AdminRoutes`` and ``TestControlRoutes``.
struct AdminClient {
    let server: String
    let token: String?
    /// `--tls-root`: a PEM root trusted for an https:// store besides the system's (else `KIOSK_TLS_ROOT`'s).
    var tlsRoot: String?

    /// The roots `--tls-root` or `KIOSK_TLS_ROOT` name, for a caller that makes its own requests to the store.
    func tlsRoots() throws -> [Certificate] {
        try environmentTLSRoots(ProcessInfo.processInfo.environment, option: tlsRoot)
    }

    /// An answer from the store: its status and body.
    struct Answer {
        var status: Int
        var body: Data
        var contentType: String?
    }

    func get(_ path: String, query: [String: String] = [:]) async throws -> Answer {
        try await send(.GET, path, query: query, body: nil)
    }

    func post(_ path: String, query: [String: String] = [:], raw: Data? = nil) async throws -> Answer {
        try await send(.POST, path, query: query, body: raw)
    }

    func patch(_ path: String, raw: Data) async throws -> Answer {
        try await send(.PATCH, path, query: [:], body: raw)
    }

    func put(_ path: String, raw: Data) async throws -> Answer {
        try await send(.PUT, path, query: [:], body: raw)
    }

    func delete(_ path: String, query: [String: String] = [:]) async throws -> Answer {
        try await send(.DELETE, path, query: query, body: nil)
    }

    /// Sends a request and returns a 2xx answer; any other answer becomes a `CLIError` with the store's text.
    private func send(_ method: HTTPMethod, _ path: String, query: [String: String], body: Data?) async throws -> Answer
    {
        guard let token, !token.isEmpty else {
            throw CLIError(
                message: "No admin token.",
                fix: "Pass --token or set KIOSK_ADMIN_TOKEN to the token `kiosk serve` printed at its first start.")
        }
        var components = URLComponents(string: server.hasSuffix("/") ? String(server.dropLast()) : server)
        components?.percentEncodedPath += path
        if !query.isEmpty {
            components?.queryItems = query.sorted { $0.key < $1.key }.map {
                URLQueryItem(name: $0.key, value: $0.value)
            }
        }
        guard let url = components?.string else {
            throw CLIError(
                message: "'\(server)' is not a valid server URL.", fix: "Use e.g. --server http://127.0.0.1:8080")
        }
        let answer = try await sendJSONRequest(
            method, url: url, token: token, body: body, readTimeout: .seconds(60), deadline: .seconds(120),
            trusting: try tlsRoots(), unreachable: "the store at \(server)",
            fix: "Start it with `kiosk serve`, or point --server / KIOSK_SERVER at it.")
        guard (200..<300).contains(answer.status) else { throw CLIError(answer: answer) }
        return answer
    }
}

/// Sends one request with `Authorization: Bearer <token>` and `body` (if any) as JSON, and returns the answer
/// whatever its status. Each call has a client of its own (trusting `roots` for HTTPS besides the system's) that
/// reports a refused connection at once instead of retrying it until the deadline; not getting an answer becomes
/// "Cannot reach <unreachable> (…)." with `fix`, or the way to trust a Kiosk TLS root when that was the cause.
func sendJSONRequest(
    _ method: HTTPMethod, url: String, token: String, body: Data?, readTimeout: TimeAmount, deadline: TimeAmount,
    trusting roots: [Certificate] = [], unreachable: String, fix: String
) async throws -> AdminClient.Answer {
    let http = try JSONHTTPClient.makeHTTPClient(trusting: roots, readTimeout: readTimeout, failFast: true)
    defer { _ = http.shutdown() }
    let answer: JSONHTTPAnswer
    do {
        answer = try await JSONHTTPClient(http: http).send(
            method, url, bearer: token, headers: ["Accept": "application/json"], json: body, timeout: deadline,
            limit: 64 << 20)
    } catch {
        switch error {
        case .cancelled: throw CancellationError()
        case .untrustedCertificate:
            throw CLIError(
                message:
                    "Cannot reach \(unreachable): its TLS certificate does not lead to a root this machine trusts.",
                field: "--tls-root", fix: TLSTrust.untrustedFix)
        case .unreachable(let cause): throw CLIError(message: "Cannot reach \(unreachable) (\(cause)).", fix: fix)
        }
    }
    return AdminClient.Answer(
        status: Int(answer.status.code), body: answer.body, contentType: answer.headers.first(name: "Content-Type"))
}

extension AdminClient.Answer {
    /// The body decoded as the store's JSON.
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(type, from: body)
    }

    /// The body re-printed as indented JSON with sorted keys, for `--json`.
    var prettyJSON: String {
        guard let object = try? JSONSerialization.jsonObject(with: body),
            let data = try? JSONSerialization.data(
                withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        else { return String(decoding: body, as: UTF8.self) }
        return String(decoding: data, as: UTF8.self)
    }
}
