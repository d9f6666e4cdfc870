import Foundation
import Hummingbird
import KioskCore
import KioskHTTP

/// `/admin/v1/apps/{bundleId}/catalog`: the whole catalog in and out, as Kiosk JSON or an Xcode `.storekit` file.
struct CatalogController {
    let catalog: CatalogService

    enum FileFormat: String {
        case json
        case storekit
    }

    func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.get("apps/:bundleId/catalog") { request, context in
            let bundleId = try context.parameters.require("bundleId")
            let format = try Self.format(request.uri.queryParameters.get("format")) ?? .json
            let document = try await catalog.exportCatalog(bundleId: bundleId)
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            let data: Data
            switch format {
            case .json:
                data = document.encode()
                headers[.contentDisposition] = "attachment; filename=\"\(bundleId).catalog.json\""
            case .storekit:
                data = try StoreKitConfiguration(document: document).encode()
                headers[.contentDisposition] = "attachment; filename=\"\(bundleId).storekit\""
            }
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
        }
        let imports = group.group().add(middleware: BodyLimitMiddleware(StoreBodyLimits.catalogImport))
        imports.post("apps/:bundleId/catalog") { request, context in
            let bundleId = try context.parameters.require("bundleId")
            let data = try await request.collectBody(context: context)
            let app = try await catalog.app(bundleId: bundleId)
            let document: CatalogDocument
            var warnings: [String] = []
            switch try Self.format(request.uri.queryParameters.get("format")) ?? Self.detect(data) {
            case .json: document = try CatalogDocument.decode(from: data)
            case .storekit:
                let configuration = try StoreKitConfiguration.decode(from: data)
                document = try configuration.catalogDocument(bundleId: bundleId, appName: app.name)
                warnings = configuration.unsupportedContent
            }
            var summary = try await catalog.importCatalog(bundleId: bundleId, document: document)
            summary.warnings = warnings
            return summary
        }
    }

    private static func format(_ text: String?) throws -> FileFormat? {
        guard let text else { return nil }
        guard let format = FileFormat(rawValue: text.lowercased()) else {
            throw KioskError.invalid(
                "invalid_format", "Unknown catalog format '\(text)'.", field: "format", fix: "Use 'json' or 'storekit'."
            )
        }
        return format
    }

    /// A Kiosk catalog says `"format": "kiosk-catalog"`; anything else is read as a `.storekit` file.
    private static func detect(_ data: Data) -> FileFormat {
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        return object?["format"] == nil ? .storekit : .json
    }
}

extension CatalogImportSummary: ResponseEncodable {}
