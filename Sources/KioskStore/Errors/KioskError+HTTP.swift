import Foundation
import HTTPTypes
import Hummingbird
import KioskCore

extension KioskError: ResponseGenerator {}
extension KioskError: HTTPResponseError {
    /// The HTTP status for the error's kind.
    public var status: HTTPResponse.Status {
        switch kind {
        case .invalidInput: .badRequest
        case .unauthorized: .unauthorized
        case .forbidden: .forbidden
        case .notFound: .notFound
        case .conflict: .conflict
        case .unavailable: .serviceUnavailable
        }
    }

    /// `{"error": {"code", "message", "field", "fix"}}` with the error's status.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        if kind == .unauthorized {
            let realm = request.uri.path.hasPrefix("/admin/") ? "kiosk-admin" : "kiosk-storekit"
            headers[.wwwAuthenticate] = "Bearer realm=\"\(realm)\""
        }
        let body = ErrorBody(
            error: .init(code: code, message: message, field: field, fix: fix, skErrorCode: storeKitCode))
        let data = try JSONEncoder.kiosk.encode(body)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// The JSON shape of every error the Kiosk-defined APIs answer.
struct ErrorBody: Codable, Sendable {
    struct Detail: Codable, Sendable {
        var code: String
        var message: String
        var field: String?
        var fix: String?
        /// The `SKError.Code` a StoreKit app sees, on the client protocol.
        var skErrorCode: Int?
        var requestId: String?
    }

    var error: Detail
}
