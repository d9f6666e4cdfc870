import Foundation
import Hummingbird
import KioskCore
import Mustache
import NIOCore

/// Renders the console's pages from the Mustache templates in `Resources/console` (HTML-escaped by default). Every
/// page template extends `layout`, which draws the navigation, the signed-in operator and the sign-out form.
struct ConsoleRenderer: Sendable {
    let library: MustacheLibrary

    /// Loads the templates shipped with the store.
    static func load() async throws -> ConsoleRenderer {
        guard let folder = Bundle.module.resourceURL?.appendingPathComponent("console").path else {
            throw KioskError(.consoleMissing, "The console's templates are missing from the build.")
        }
        return ConsoleRenderer(library: try await MustacheLibrary(directory: folder))
    }

    /// A file of the console's own (`console.css`), served under `/console/`.
    static func asset(_ name: String, contentType: String) throws -> Response {
        guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "console"),
            let data = try? Data(contentsOf: url)
        else { throw KioskError(.notFound, "No file \(name).") }
        var response = Response(status: .ok, body: .init(byteBuffer: ByteBuffer(bytes: data)))
        response.headers[.contentType] = contentType
        response.headers[.cacheControl] = "max-age=300"
        return response
    }

    /// The page `template` with `values`, inside the layout, for `session` (nil on the sign-in page).
    func page(
        _ template: String, title: String, section: String, values: [String: Any] = [:], session: ConsoleSession?,
        status: HTTPResponse.Status = .ok
    ) -> Response {
        var context = values
        context["title"] = title
        context["csrf"] = session?.csrfToken ?? ""
        context["actor"] = session?.signature ?? ""
        context["signedIn"] = session != nil
        let permissions = session?.permissions ?? []
        // `{{#can.manageCatalog}}…{{/can.manageCatalog}}` shows a form only to those it would not refuse.
        context["can"] = Dictionary(uniqueKeysWithValues: permissions.map { ($0.rawValue, true) })
        // Until a temporary password is replaced, no page but the account page opens: the navigation shows none.
        let sections = session?.mustChangePassword == true ? [] : Self.sections
        context["nav"] = sections.filter { entry in
            ConsoleAccess.permission(method: .get, path: entry.path).map(permissions.contains) ?? true
        }.map { entry in
            ["path": entry.path, "name": entry.name, "current": entry.name == section]
        }
        guard let html = library.render(Self.withoutEmptyTexts(context), withTemplate: template) else {
            // A build without the page's template is the store's own failure, never a page that worked.
            return Response(
                status: .internalServerError,
                body: .init(
                    byteBuffer: ByteBuffer(
                        string: "The console's template '\(template)' is missing from this build of the store.")))
        }
        var response = Response(status: status, body: .init(byteBuffer: ByteBuffer(string: html)))
        response.headers[.contentType] = "text/html; charset=utf-8"
        return response
    }

    /// `value` without its empty strings, at any depth: to Mustache an empty string is a true section, while a
    /// missing key is false and renders as nothing, which is what every `{{#error}}…{{/error}}` means.
    static func withoutEmptyTexts(_ value: Any) -> Any {
        switch value {
        case let dictionary as [String: Any]:
            return dictionary.filter { ($0.value as? String)?.isEmpty != true }.mapValues(withoutEmptyTexts)
        case let array as [[String: Any]]:
            return array.map(withoutEmptyTexts)
        default:
            return value
        }
    }

    /// The navigation, in the order a newcomer walks it; each person sees the sections their roles may read.
    static let sections: [(path: String, name: String)] = [
        ("/console", "Overview"), ("/console/apps", "Apps"), ("/console/agreements", "Agreements"),
        ("/console/customers", "Customers"), ("/console/sandbox", "Sandbox"),
        ("/console/notifications", "Notifications"), ("/console/checks", "Checks"),
        ("/console/money", "Money"), ("/console/keys", "Keys"), ("/console/team", "Team"),
        ("/console/audit", "Audit log"), ("/console/health", "Health"),
    ]
}
