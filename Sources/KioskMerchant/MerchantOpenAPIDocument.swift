import Foundation
import Hummingbird

/// The OpenAPI description of the merchant's API, served at `/openapi.yaml`.
enum MerchantOpenAPIDocument {
    static func response() throws -> Response {
        guard let url = Bundle.module.url(forResource: "merchant-openapi", withExtension: "yaml") else {
            throw HTTPError(.notFound, message: "merchant-openapi.yaml is not bundled with this build")
        }
        var headers = HTTPFields()
        headers[.contentType] = "application/yaml"
        return Response(
            status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: try Data(contentsOf: url))))
    }
}
