import AsyncHTTPClient
import Foundation
import KioskProtocol
import KioskSigning
import NIOCore
import NIOHTTP1
import X509

/// The one way Kiosk's clients (KioskKit, the CLI, the merchant's calls to a store) exchange JSON over HTTP: a
/// bearer token, a JSON body, the whole answer collected up to a limit, and a failure to get an answer sorted into
/// the cases a person acts on differently. Each caller turns failures and non-2xx answers into its own error type.
public struct JSONHTTPClient: Sendable {
    /// The HTTP client requests go through; its owner shuts it down.
    public let http: HTTPClient

    public init(http: HTTPClient) { self.http = http }

    /// A client trusting `roots` for HTTPS besides the system's, with a 10 s connect timeout. With `failFast`, a
    /// refused connection fails at once instead of being retried until the request's deadline (for callers that
    /// answer "unreachable" rather than wait).
    public static func makeHTTPClient(
        trusting roots: [Certificate], readTimeout: TimeAmount? = nil, failFast: Bool = false
    ) throws -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = !failFast
        configuration.timeout = .init(connect: .seconds(10), read: readTimeout)
        try configuration.trust(roots)
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Sends one request (`body` as `application/json` unless `headers` name another type, `Authorization: Bearer
    /// token` when given) and returns the answer whatever its status.
    public func send(
        _ method: HTTPMethod, _ url: String, bearer token: String? = nil, headers: HTTPHeaders = [:],
        json body: Data? = nil, timeout: TimeAmount, limit: Int = 16 << 20
    ) async throws(JSONHTTPFailure) -> JSONHTTPAnswer {
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers.add(contentsOf: headers)
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let body {
            if !request.headers.contains(name: "Content-Type") {
                request.headers.add(name: "Content-Type", value: "application/json")
            }
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        do {
            let response = try await http.execute(request, timeout: timeout)
            let collected = try await response.body.collect(upTo: limit)
            return JSONHTTPAnswer(
                status: response.status, headers: response.headers, body: Data(collected.readableBytesView))
        } catch is CancellationError {
            throw .cancelled
        } catch  where TLSTrust.isUntrustedCertificate(error) {
            throw .untrustedCertificate(error)
        } catch {
            throw .unreachable(error)
        }
    }
}

/// An answer: status, headers and the whole body.
public struct JSONHTTPAnswer: Sendable {
    public var status: HTTPResponseStatus
    public var headers: HTTPHeaders
    public var body: Data

    public init(status: HTTPResponseStatus, headers: HTTPHeaders, body: Data) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(status.code) }

    /// Kiosk's `{"error": {code, message, field, fix}}`, when the body is one.
    public var kioskError: ErrorResponse.Body? { try? JSONDecoder().decode(ErrorResponse.self, from: body).error }
}

/// Why no answer came.
public enum JSONHTTPFailure: Error {
    /// The calling task was cancelled.
    case cancelled
    /// The server's TLS certificate does not lead to a trusted root (``TLSTrust/untrustedFix`` says what to do).
    case untrustedCertificate(any Error)
    /// No connection, a timeout, or a body larger than the limit.
    case unreachable(any Error)
}
