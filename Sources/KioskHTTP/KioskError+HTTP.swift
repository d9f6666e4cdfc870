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
        case .tooLarge: .contentTooLarge
        case .unavailable: .serviceUnavailable
        }
    }

    /// `{"error": {"code", "message", "field", "fix"}}` with the error's status.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        if kind == .unauthorized {
            let clientProtocol =
                request.uri.path.hasPrefix("/storekit/") || request.uri.path.hasPrefix("/sandbox/storekit/")
            let merchant = request.uri.path.hasPrefix("/merchant/")
            let realm = clientProtocol ? "kiosk-storekit" : merchant ? "kiosk-merchant" : "kiosk-admin"
            headers[.wwwAuthenticate] = "Bearer realm=\"\(realm)\""
        }
        var body = ErrorBody(error: ErrorBody.Detail(self))
        if !additional.isEmpty { body.errors = all.map(ErrorBody.Detail.init) }
        let data = try JSONEncoder.kiosk.encode(body)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// The JSON shape of every error the Kiosk-defined APIs answer; `errors` lists every problem when the request had
/// several (a catalog file), the first of them also being `error`.
package struct ErrorBody: Codable, Sendable {
    package struct Detail: Codable, Sendable {
        package var code: String
        package var message: String
        package var field: String?
        package var fix: String?
        /// The product the problem concerns (catalog files).
        package var productId: String?
        /// The `SKError.Code` a StoreKit app sees, on the client protocol.
        package var skErrorCode: Int?
        package var requestId: String?

        package init(
            code: String, message: String, field: String? = nil, fix: String? = nil, skErrorCode: Int? = nil,
            requestId: String? = nil
        ) {
            self.code = code
            self.message = message
            self.field = field
            self.fix = fix
            self.skErrorCode = skErrorCode
            self.requestId = requestId
        }

        /// The detail of one error.
        package init(_ error: KioskError) {
            self.init(
                code: error.code.rawValue, message: error.message, field: error.field, fix: error.fix,
                skErrorCode: error.storeKitCode)
            productId = error.productId
        }
    }

    package var error: Detail
    package var errors: [Detail]?

    package init(error: Detail) {
        self.error = error
    }
}
