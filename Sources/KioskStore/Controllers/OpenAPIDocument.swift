import Foundation
import Hummingbird

/// The store's OpenAPI contracts, served as they are bundled: Kiosk's own APIs at `/openapi.yaml`, and the part of
/// Apple's App Store Connect API Kiosk serves at `/app-store-connect-openapi.json`.
enum OpenAPIDocument: String, CaseIterable {
    case kiosk = "openapi.yaml"
    case appStoreConnect = "app-store-connect-openapi.json"

    func response() throws -> Response {
        let name = rawValue.split(separator: ".")
        guard let url = Bundle.module.url(forResource: String(name[0]), withExtension: String(name[1])) else {
            throw HTTPError(.notFound, message: "\(rawValue) is not bundled with this build")
        }
        var headers = HTTPFields()
        headers[.contentType] = self == .kiosk ? "application/yaml" : "application/json"
        return Response(
            status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: try Data(contentsOf: url))))
    }
}
