import Foundation
import Hummingbird

/// The OpenAPI description of Kiosk's own APIs, served at `/openapi.yaml`.
enum OpenAPIDocument {
    static func response() throws -> Response {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml") else {
            throw HTTPError(.notFound, message: "openapi.yaml is not bundled with this build")
        }
        var headers = HTTPFields()
        headers[.contentType] = "application/yaml"
        return Response(
            status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: try Data(contentsOf: url))))
    }
}
