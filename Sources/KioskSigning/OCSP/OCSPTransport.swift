import AsyncHTTPClient
import Foundation
import NIOCore

/// Carries an OCSP request to a responder: what ``SignedDataVerifier`` uses for online checks.
public protocol OCSPTransport: Sendable {
    /// POSTs `request` (DER) to `url` with `Content-Type: application/ocsp-request`.
    ///
    /// - Returns: The HTTP status and body.
    /// - Throws: when the responder cannot be reached; the verifier reports that as retryable.
    func post(_ request: [UInt8], to url: String) async throws -> (status: Int, body: [UInt8])
}

/// ``OCSPTransport`` over HTTP with AsyncHTTPClient, as Apple's verifiers ask `http://ocsp.apple.com/…`.
public struct HTTPOCSPTransport: OCSPTransport {
    private let client: HTTPClient
    private let timeout: TimeAmount

    /// - Parameters:
    ///   - client: The HTTP client (default: the shared one).
    ///   - timeout: How long one request may take before it counts as a network failure.
    public init(client: HTTPClient = .shared, timeout: TimeAmount = .seconds(10)) {
        self.client = client
        self.timeout = timeout
    }

    public func post(_ request: [UInt8], to url: String) async throws -> (status: Int, body: [UInt8]) {
        var http = HTTPClientRequest(url: url)
        http.method = .POST
        http.headers.add(name: "Content-Type", value: "application/ocsp-request")
        http.headers.add(name: "Accept", value: "application/ocsp-response")
        http.body = .bytes(ByteBuffer(bytes: request))
        let response = try await client.execute(http, timeout: timeout)
        let body = try await response.body.collect(upTo: 1024 * 1024)
        return (Int(response.status.code), Array(body.readableBytesView))
    }
}
