import Foundation
import Hummingbird
import KioskCore
import Mustache
import NIOCore

/// A console page's values, typed: one struct per template, whose stored properties are the names its template
/// uses (Mustache reads them through `Mirror`). Text a template tests with `{{#name}}…{{/name}}` is optional, nil
/// when there is none: to Mustache an empty string is a true section, while nil is false and renders as nothing.
///
/// A view is `Decodable` only so the template test can build a full sample of it (every optional given, every list
/// one element long) and check that every name its template uses resolves.
protocol ConsoleView: Decodable {
    /// The template in `Resources/console` that draws the page, without its `.mustache`.
    static var template: String { get }
}

/// What the layout draws around every page: the title, the navigation, the signed-in operator and the sign-out form.
struct ConsoleLayout: Decodable {
    /// One entry of the navigation.
    struct Section: Decodable {
        var path: String
        var name: String
        var current: Bool
    }

    var title: String
    /// The session's CSRF token, which every form posts; nil on the sign-in page.
    var csrf: String?
    /// The signed-in operator, as the header shows them; nil on the sign-in page.
    var actor: String?
    var signedIn: Bool
    /// `{{#can.manageCatalog}}…{{/can.manageCatalog}}` shows a form only to those it would not refuse.
    var can: ConsolePermissions
    var nav: [Section]
    /// What the operator's last action did, shown at the top of the page.
    var notice: ConsoleNotice?
    /// The refusal of the form this page was drawn again for, shown at the top of the page.
    var refusal: ConsoleRefusal?

    /// The layout of a page titled `title`, in the navigation's `section`, for `session` (nil on the sign-in page).
    init(title: String, section: String, session: ConsoleSession?) {
        self.title = title
        csrf = session?.csrfToken
        actor = session?.signature
        signedIn = session != nil
        let permissions = session?.permissions ?? []
        can = ConsolePermissions(permissions)
        notice = ConsoleFlash.notice
        refusal = ConsoleFlash.refusal
        // Until a temporary password is replaced, no page but the account page opens: the navigation shows none.
        let sections = session?.mustChangePassword == true ? [] : ConsoleRenderer.sections
        nav = sections.filter { entry in
            ConsoleAccess.permission(method: .get, path: entry.path).map(permissions.contains) ?? true
        }.map { entry in
            Section(path: entry.path, name: entry.name, current: entry.name == section)
        }
    }
}

/// Whether the session holds each ``ConsolePermission``, by its name, for the templates' `can.…`.
struct ConsolePermissions: Decodable {
    var manageTeam: Bool
    var manageKeys: Bool
    var readAuditLog: Bool
    var manageAgreements: Bool
    var readSales: Bool
    var manageCatalog: Bool
    var useSandbox: Bool
    var resendNotifications: Bool
    var refundCustomers: Bool

    init(_ permissions: Set<ConsolePermission>) {
        manageTeam = permissions.contains(.manageTeam)
        manageKeys = permissions.contains(.manageKeys)
        readAuditLog = permissions.contains(.readAuditLog)
        manageAgreements = permissions.contains(.manageAgreements)
        readSales = permissions.contains(.readSales)
        manageCatalog = permissions.contains(.manageCatalog)
        useSandbox = permissions.contains(.useSandbox)
        resendNotifications = permissions.contains(.resendNotifications)
        refundCustomers = permissions.contains(.refundCustomers)
    }
}

/// An `<option>` of a list: its value, and whether it is the one chosen.
struct ConsoleOption: Decodable {
    var value: String
    var selected = false
}

/// A storefront to choose, by its code.
struct ConsoleStorefrontOption: Decodable {
    var code: String
    var selected: Bool

    /// Every storefront, `selected` chosen.
    static func all(selected: String) -> [ConsoleStorefrontOption] {
        Storefront.all.map { ConsoleStorefrontOption(code: $0.code, selected: $0.code == selected) }
    }
}

extension String {
    /// The text, or nil when it is empty, for a value a template tests with `{{#name}}…{{/name}}`.
    var nonEmpty: String? { isEmpty ? nil : self }
}

/// What a page's template reads: the layout's values and the page's own, as one object. The layout's come first,
/// so a page's value can never stand in for one of them (and the template test refuses a page that tries).
struct ConsolePageContext<View: ConsoleView>: CustomReflectable {
    let layout: ConsoleLayout
    let view: View

    var customMirror: Mirror {
        Mirror(self, children: Array(Mirror(reflecting: layout).children) + Array(Mirror(reflecting: view).children))
    }
}

/// Renders the console's pages from the Mustache templates in `Resources/console` (HTML-escaped by default). Every
/// page template extends `layout`, which draws the navigation, the signed-in operator and the sign-out form.
struct ConsoleRenderer: Sendable {
    let library: MustacheLibrary

    /// Loads the templates shipped with the store.
    static func load() async throws -> ConsoleRenderer {
        ConsoleRenderer(library: try await MustacheLibrary(directory: try folder()))
    }

    /// Where the build keeps the console's templates and its stylesheet.
    static func folder() throws -> String {
        guard let folder = Bundle.module.resourceURL?.appendingPathComponent("console").path else {
            throw KioskError(.consoleMissing, "The console's templates are missing from the build.")
        }
        return folder
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

    /// The page `view`, titled `title` inside the layout, for `session` (nil on the sign-in page).
    func page<View: ConsoleView>(
        _ view: View, title: String, section: String, session: ConsoleSession?, status: HTTPResponse.Status = .ok
    ) -> Response {
        guard let html = html(view, layout: ConsoleLayout(title: title, section: section, session: session)) else {
            // A build without the page's template is the store's own failure, never a page that worked.
            return Response(
                status: .internalServerError,
                body: .init(
                    byteBuffer: ByteBuffer(
                        string: "The console's template '\(View.template)' is missing from this build of the store.")))
        }
        var response = Response(status: status, body: .init(byteBuffer: ByteBuffer(string: html)))
        response.headers[.contentType] = "text/html; charset=utf-8"
        return response
    }

    /// `view` drawn by its template inside `layout`; nil when the build has no such template.
    func html<View: ConsoleView>(_ view: View, layout: ConsoleLayout) -> String? {
        library.render(ConsolePageContext(layout: layout, view: view), withTemplate: View.template)
    }

    /// The navigation, in the order a newcomer walks it; each person sees the sections their roles may read.
    static let sections: [(path: String, name: String)] = [
        ("/console", "Overview"), ("/console/apps", "Apps"), ("/console/agreements", "Agreements"),
        ("/console/customers", "Customers"), ("/console/sandbox", "Sandbox"),
        ("/console/notifications", "Notifications"), ("/console/checks", "Checks"),
        ("/console/money", "Money"), ("/console/subscriptions", "Subscriptions"),
        ("/console/keys", "Keys"), ("/console/team", "Team"),
        ("/console/audit", "Audit log"), ("/console/health", "Health"),
    ]
}
