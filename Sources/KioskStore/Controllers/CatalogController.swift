import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskProtocol

/// `/admin/v1/apps/{bundleId}/catalog`: the whole catalog in and out, as Kiosk JSON or an Xcode `.storekit` file.
struct CatalogController {
    let catalog: CatalogService

    enum FileFormat: String {
        case json
        case storekit
    }

    func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.get(AdminRoutes.catalog.routerPath) { request, context in
            let bundleId = try context.parameters.require("bundleId")
            let format = try Self.format(request.uri.queryParameters.get("format")) ?? .json
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            let data: Data
            switch format {
            case .json:
                data = try await catalog.exportCatalog(bundleId: bundleId).encode()
                headers[.contentDisposition] = "attachment; filename=\"\(bundleId).catalog.json\""
            case .storekit:
                let storefront = try request.uri.queryParameters.get("storefront").map {
                    try CatalogRules.requireStorefront($0.uppercased(), field: "storefront")
                }
                data = try await catalog.exportStoreKit(bundleId: bundleId, storefront: storefront).encode()
                headers[.contentDisposition] = "attachment; filename=\"\(bundleId).storekit\""
            }
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
        }
        let imports = group.group().add(middleware: BodyLimitMiddleware(StoreBodyLimits.catalogImport))
        imports.post(AdminRoutes.catalog.routerPath) { request, context in
            let bundleId = try context.parameters.require("bundleId")
            let data = try await request.collectBody(context: context)
            let app = try await catalog.app(bundleId: bundleId)
            let file = try Self.file(data, format: try Self.format(request.uri.queryParameters.get("format")), of: app)
            return try await catalog.importCatalog(bundleId: bundleId, file: file)
        }
    }

    /// Reads a catalog file for `app`: Kiosk JSON or a `.storekit` file, as `format` says or as the content shows.
    static func file(_ data: Data, format: FileFormat?, of app: App) throws -> CatalogFileImport {
        switch format ?? detect(data) {
        case .json: try CatalogDocument.importing(data)
        case .storekit: try StoreKitConfiguration.importing(data, bundleId: app.bundleId, appName: app.name)
        }
    }

    private static func format(_ text: String?) throws -> FileFormat? {
        guard let text else { return nil }
        guard let format = FileFormat(rawValue: text.lowercased()) else {
            throw KioskError(
                .invalidFormat, "Unknown catalog format '\(text)'.", field: "format", fix: "Use 'json' or 'storekit'."
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
