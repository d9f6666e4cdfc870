import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskSigning

/// `/ocsp/{environment}`: the OCSP responder the signing certificates name in their AuthorityInformationAccess
/// extension (RFC 6960 appendix A): `POST` with `Content-Type: application/ocsp-request` and a DER OCSPRequest
/// body, or `GET /ocsp/{environment}/{base64 of the DER request, URL-encoded}`. Answers are
/// `application/ocsp-response`; a request that cannot be read is answered with OCSP's `malformedRequest`.
struct OCSPController {
    static let requestContentType = "application/ocsp-request"
    static let responseContentType = "application/ocsp-response"
    let status: CertificateStatusService

    func addRoutes(to router: Router<KioskRequestContext>) {
        router.post("ocsp/:environment") { request, context in
            let environment = try request.environment(context.parameters.get("environment"))
            let contentType = request.headers[.contentType]?.split(separator: ";").first
                .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard contentType == Self.requestContentType else {
                throw KioskError(
                    .unsupportedMediaType,
                    "An OCSP request must be sent with Content-Type: \(Self.requestContentType), not \(contentType ?? "none").",
                    field: "Content-Type",
                    fix: "POST the DER OCSPRequest with Content-Type: \(Self.requestContentType).")
            }
            // OCSP requests are a few hundred bytes: one larger than the limit is not one (`malformedRequest`).
            do {
                return try await answer(
                    Array(try await request.collectBody(context: context)), environment: environment)
            } catch let error as KioskError where error.kind == .tooLarge {
                return try await answer([], environment: environment)
            }
        }
        router.get("ocsp/:environment/**") { request, context in
            let environment = try request.environment(context.parameters.get("environment"))
            // The request is everything after the environment, percent-decoded; base64 may itself hold '/'.
            let prefix = "/ocsp/\(context.parameters.get("environment") ?? "")/"
            let encoded = request.uri.path.hasPrefix(prefix) ? String(request.uri.path.dropFirst(prefix.count)) : ""
            let text = encoded.removingPercentEncoding ?? encoded
            let der = Data(base64Encoded: text).map(Array.init) ?? []
            return try await answer(der, environment: environment)
        }
    }

    private func answer(_ requestDER: [UInt8], environment: StoreEnvironment) async throws -> Response {
        let der = try await status.respond(to: requestDER, environment: environment)
        var headers = HTTPFields()
        headers[.contentType] = Self.responseContentType
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: der)))
    }
}
