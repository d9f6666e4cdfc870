import AsyncHTTPClient
import Foundation
import KioskHTTPClient
import KioskProtocol
import KioskSigning
import NIOCore
import NIOHTTP1

/// Kiosk's client protocol over HTTP: one method per route of `StoreKitPaths`, JSON in and out.
///
/// Every failure is a ``KioskKitError``: `.network` when no answer came, `.store` with the decoded
/// `ErrorResponse` for non-2xx answers, `.invalidResponse` when a 2xx body does not decode.
struct StoreAPI: Sendable {
    let http: HTTPClient
    /// `http(s)://host:port` followed by `StoreKitPaths.base(sandbox:)`.
    let baseURL: String

    /// Ordinary calls get this long for an answer; the updates stream is bounded by the read timeout instead.
    let requestTimeout: TimeAmount

    init(http: HTTPClient, serverURL: URL, sandbox: Bool, requestTimeout: TimeAmount) {
        self.http = http
        self.requestTimeout = requestTimeout
        var server = serverURL.absoluteString
        while server.hasSuffix("/") { server.removeLast() }
        self.baseURL = server + StoreKitPaths.base(sandbox: sandbox)
    }

    func signIn(_ request: SignInRequest) async throws -> SignInResponse {
        try await send(.POST, StoreKitPaths.sessions, token: nil, body: request)
    }

    func signOut(token: String) async throws {
        _ = try await perform(.DELETE, StoreKitPaths.sessions, token: token, body: nil)
    }

    func products(_ identifiers: [String], token: String) async throws -> ProductsResponse {
        try await send(.POST, StoreKitPaths.products, token: token, body: ProductsRequest(identifiers: identifiers))
    }

    func pay(_ payment: PaymentRequest, token: String) async throws -> QueueEntry {
        try await send(.POST, StoreKitPaths.payments, token: token, body: payment)
    }

    func unfinished(token: String) async throws -> QueueSnapshot {
        try await send(.GET, StoreKitPaths.unfinished, token: token)
    }

    func finish(sequence: Int64, token: String) async throws -> QueueEntry {
        try await send(.POST, StoreKitPaths.finish(sequence: sequence), token: token)
    }

    func restore(_ request: RestoreRequest, token: String) async throws -> QueueSnapshot {
        try await send(.POST, StoreKitPaths.restore, token: token, body: request)
    }

    func receipt(token: String) async throws -> ReceiptResponse {
        try await send(.GET, StoreKitPaths.receipt, token: token)
    }

    func entitlements(token: String) async throws -> EntitlementsResponse {
        try await send(.GET, StoreKitPaths.entitlements, token: token)
    }

    func cancelSubscription(_ originalTransactionId: String, _ request: CancelSubscriptionRequest, token: String)
        async throws -> CancelSubscriptionResponse
    {
        try await send(
            .POST, StoreKitPaths.cancelSubscription(originalTransactionId: originalTransactionId), token: token,
            body: request)
    }

    /// Streams queue entries after `cursor` until the connection ends or the task is cancelled, calling
    /// `onEntry` for each one in order. Returns normally when the store closed the stream, or with
    /// `untilCaughtUp` once the store said every entry there was when it opened has been sent.
    func updates(
        after cursor: Int64, token: String, untilCaughtUp: Bool = false, onEntry: (QueueEntry) async throws -> Void
    ) async throws {
        var request = HTTPClientRequest(url: baseURL + StoreKitPaths.updates + "?after=\(cursor)")
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Accept", value: "text/event-stream")
        request.headers.add(name: "Last-Event-ID", value: String(cursor))
        let response: HTTPClientResponse
        do {
            response = try await http.execute(request, timeout: requestTimeout)
        } catch {
            throw Self.networkError(error)
        }
        guard response.status == .ok else {
            let body = try? await response.body.collect(upTo: 1 << 20)
            throw Self.storeError(status: response.status, body: body)
        }
        var parser = ServerSentEventParser()
        let decoder = JSONDecoder()
        do {
            for try await chunk in response.body {
                for event in parser.feed(chunk.readableBytesView) {
                    if untilCaughtUp && event.event == "caught-up" { return }
                    guard event.event == "entry" else { continue }
                    let entry: QueueEntry
                    do {
                        entry = try decoder.decode(QueueEntry.self, from: Data(event.data.utf8))
                    } catch {
                        throw KioskKitError(
                            code: .invalidResponse, message: "An updates event is not a queue entry.", cause: error)
                    }
                    try await onEntry(entry)
                }
            }
        } catch let error as KioskKitError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw Self.networkError(error)
        }
    }

    private func send<Answer: Decodable>(
        _ method: HTTPMethod, _ path: String, token: String?, body: (some Encodable)? = Optional<Empty>.none
    ) async throws -> Answer {
        let data = try await perform(method, path, token: token, body: body.map { try JSONEncoder().encode($0) })
        do {
            return try JSONDecoder().decode(Answer.self, from: data)
        } catch {
            throw KioskKitError(
                code: .invalidResponse, message: "The store's answer to \(method) \(path) is not a \(Answer.self).",
                cause: error)
        }
    }

    private func perform(_ method: HTTPMethod, _ path: String, token: String?, body: Data?) async throws -> Data {
        let answer: JSONHTTPAnswer
        do {
            answer = try await JSONHTTPClient(http: http).send(
                method, baseURL + path, bearer: token, json: body, timeout: requestTimeout)
        } catch {
            switch error {
            case .cancelled: throw CancellationError()
            case .untrustedCertificate(let cause), .unreachable(let cause): throw Self.networkError(cause)
            }
        }
        guard answer.isSuccess else {
            throw Self.storeError(status: answer.status, body: ByteBuffer(bytes: answer.body))
        }
        return answer.body
    }

    private static func networkError(_ error: any Error) -> any Error {
        if error is CancellationError { return error }
        if TLSTrust.isUntrustedCertificate(error) {
            return KioskKitError(
                code: .network,
                message: "The store's TLS certificate does not lead to a trusted root. " + TLSTrust.untrustedFix,
                cause: error)
        }
        return KioskKitError(
            code: .network, message: "The store could not be reached; check the server URL and that it is running.",
            cause: error)
    }

    private static func storeError(status: HTTPResponseStatus, body: ByteBuffer?) -> KioskKitError {
        let decoded = body.flatMap { try? JSONDecoder().decode(ErrorResponse.self, from: Data($0.readableBytesView)) }
        let message = decoded?.error.message ?? "The store answered \(status.code) \(status.reasonPhrase)."
        return KioskKitError(code: .store, message: message, httpStatus: Int(status.code), storeError: decoded?.error)
    }

    /// The body of requests that send none.
    private struct Empty: Encodable {}
}
