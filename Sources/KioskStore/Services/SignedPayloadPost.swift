import AsyncHTTPClient
import Foundation
import KioskCore
import NIOCore
import NIOHTTP1

/// One POST of `{"signedPayload": "<JWS>"}` to a developer's server, as Apple sends a server notification and a
/// real-time retention request: what came back, or Apple's `sendAttemptResult` for why nothing did.
enum SignedPayloadPost {
    enum Answer: Sendable {
        /// An HTTP answer: its status, and its body when the caller keeps it.
        case answered(status: Int, body: ByteBuffer?)
        /// An HTTP answer whose body is longer than the caller keeps.
        case tooLarge(status: Int)
        /// No HTTP answer.
        case failed(NotificationAttempt.Result)
        /// Not sent: the operator's outbound policy forbids the URL, for the reason given.
        case refused(String)
    }

    /// POSTs `signedPayload` to `url` before `deadline`, unless `policy` forbids it; keeps at most `maxBytes` of the
    /// answer's body, or with nil reads and drops it.
    static func send(
        _ signedPayload: String, to url: String, with http: HTTPClient, policy: OutboundURLPolicy,
        deadline: NIODeadline, keepingUpTo maxBytes: Int? = nil
    ) async -> Answer {
        if let refusal = await policy.refusal(toSend: url) { return .refused(refusal) }
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        let body = (try? JSONEncoder().encode(["signedPayload": signedPayload])) ?? Data()
        request.body = .bytes(ByteBuffer(bytes: body))
        do {
            let response = try await http.execute(request, deadline: deadline)
            let status = Int(response.status.code)
            guard let maxBytes else {
                for try await _ in response.body {}
                return .answered(status: status, body: nil)
            }
            do {
                return .answered(status: status, body: try await response.body.collect(upTo: maxBytes))
            } catch is NIOTooManyBytesError {
                return .tooLarge(status: status)
            }
        } catch {
            return .failed(result(for: error))
        }
    }

    /// Apple's name for why a POST failed.
    static func result(for error: any Error) -> NotificationAttempt.Result {
        switch error {
        case let error as HTTPClientError:
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout: .timedOut
            case .remoteConnectionClosed: .prematureClose
            case .redirectCycleDetected, .redirectLimitReached: .circularRedirect
            case .invalidURL, .emptyHost, .emptyScheme: .other
            default: .invalidResponse
            }
        case ChannelError.connectTimeout: .timedOut
        case is IOError, is ChannelError: .noResponse
        case is HTTPParserError: .invalidResponse
        default: String(reflecting: type(of: error)).contains("NIOSSL") ? .tlsIssue : .other
        }
    }
}
