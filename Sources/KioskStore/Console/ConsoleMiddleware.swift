import Foundation
import HTTPTypes
import Hummingbird
import KioskCore
import KioskHTTP
import MultipartKit

/// Every console response: headers that keep pages out of frames, caches and other origins' scripts, and errors
/// drawn as a page (with what to do) rather than the API's JSON.
struct ConsolePageMiddleware: RouterMiddleware {
    typealias Context = KioskRequestContext
    let renderer: ConsoleRenderer
    /// Whether cookies are sent over HTTPS only.
    let secure: Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        // The notice of the action that redirected here is shown once, by the page the browser then gets.
        let notice = request.method == .get ? ConsoleFlash.notice(cookieHeader: request.headers[.cookie]) : nil
        var response: Response
        do {
            response = try await ConsoleFlash.$notice.withValue(notice) { try await next(request, context) }
        } catch let error as KioskError {
            response = renderer.page(
                ErrorPage(error), title: "Something went wrong", section: "", session: context.consoleSession,
                status: error.status)
        } catch let error as HTTPError {
            response = renderer.page(
                ErrorPage(message: error.body ?? "\(error.status.reasonPhrase)", fix: "Use the navigation above."),
                title: error.status.reasonPhrase, section: "", session: context.consoleSession, status: error.status)
        }
        response.headers[.init("Content-Security-Policy")!] =
            "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
            + "frame-ancestors 'none'; "
            + "base-uri 'none'"
        response.headers[.init("X-Content-Type-Options")!] = "nosniff"
        response.headers[.init("Referrer-Policy")!] = "same-origin"
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        if notice != nil, !(300..<400).contains(response.status.code) {
            response.headers.append(HTTPField(name: .setCookie, value: ConsoleFlash.clearingCookie(secure: secure)))
        }
        return response
    }
}

/// Lets a console request through only with a valid session cookie (any other goes to the sign-in page, which
/// brings the operator back where they were), and only to what the session's roles allow (``ConsoleAccess``). A user
/// with a temporary password is sent to choose their own first.
struct ConsoleAuthMiddleware: RouterMiddleware {
    typealias Context = KioskRequestContext
    let sessions: ConsoleSessions
    let team: TeamService
    let renderer: ConsoleRenderer
    let clock: any KioskClock

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let path = request.uri.path
        guard
            let session = try await sessions.session(
                cookieHeader: request.headers[.cookie], now: clock.now(),
                user: { try await team.consoleUser(email: $0) }),
            try await team.consoleSessionsEnded(session.endKeys).map({ session.issuedAt > $0 }) ?? true
        else {
            let back = request.method == .get ? path : "/console"
            return Response.redirect(to: "/console/sign-in?next=" + ConsoleForm.percentEncoded(back), type: .normal)
        }
        var context = context
        context.consoleSession = session
        if session.mustChangePassword, !ConsoleAccess.allowedWithTemporaryPassword(path) {
            return Response.redirect(to: "/console/account", type: .normal)
        }
        if let needed = ConsoleAccess.permission(method: request.method, path: path),
            !session.permissions.contains(needed)
        {
            let roles = session.user?.roles.map(\.title).joined(separator: ", ") ?? ""
            return renderer.page(
                ErrorPage(
                    message: "Your roles (\(roles)) do not let you \(needed.summary).",
                    fix: "Ask an Admin to give you the \(needed.roles.map(\.title).joined(separator: " or ")) role "
                        + "on the Team page.",
                    code: "permission_denied"),
                title: "Not allowed", section: "", session: session, status: .forbidden)
        }
        return try await next(request, context)
    }
}

/// A posted console form (`application/x-www-form-urlencoded`), read only after its CSRF token is checked.
struct ConsoleForm: Sendable {
    /// The most fields a console form has.
    static let maxFields = 64

    let fields: [String: String]

    /// The field's value, trimmed; nil when absent or empty.
    subscript(_ name: String) -> String? {
        let value = fields[name]?.trimmingCharacters(in: .whitespacesAndNewlines)
        return value?.isEmpty == false ? value : nil
    }

    /// Reads the form of `request`, URL-encoded or `multipart/form-data` (a form that uploads a file). With a
    /// session, the form must carry that session's `csrf` token.
    static func read(_ request: Request, context: KioskRequestContext) async throws -> ConsoleForm {
        // Browsers say where a form was sent from; one sent from another site is refused before it is read. This
        // also covers sign-in, which has no session (and so no CSRF token) yet: no site can sign a visitor in to an
        // account of its choosing.
        let site = request.headers[.init("Sec-Fetch-Site")!]
        // A browser that sends no Sec-Fetch-Site (older ones, some privacy modes) still sends Origin with a POST.
        let foreign =
            site.map { ["cross-site", "same-site"].contains($0) }
            ?? request.headers[.origin].map { !Self.isOrigin($0, of: request) } ?? false
        if foreign {
            throw KioskError(
                .crossSiteForm, "This form was sent from another site, so it was refused.",
                fix: "Open the console at its own address and send the form from there.")
        }
        let body = try await request.collectBody(context: context)
        let contentType = request.headers[.contentType] ?? ""
        let form: ConsoleForm
        if contentType.lowercased().hasPrefix("multipart/form-data") {
            form = try parseMultipart(body, contentType: contentType)
        } else {
            guard let text = String(validating: body, as: UTF8.self) else { throw notUTF8 }
            form = try parse(text)
        }
        if let session = context.consoleSession {
            guard let token = form.fields["csrf"], AdminAuthMiddleware.constantTimeEquals(token, session.csrfToken)
            else {
                throw KioskError(
                    .csrfTokenInvalid, "This form was not sent from a page of this console session, so it was refused.",
                    fix: "Go back, reload the page and send the form again.")
            }
        }
        return form
    }

    /// Whether `origin` (an `Origin` header) is the console's own: the host the request was sent to, and its port
    /// when the request names one (a proxy that passes `$host` drops it). "null" (a sandboxed or local page) is no
    /// origin of the console's.
    static func isOrigin(_ origin: String, of request: Request) -> Bool {
        guard let url = URLComponents(string: origin), let scheme = url.scheme, let host = url.host,
            let authority = request.head.authority,
            let requested = URLComponents(string: "\(scheme)://\(authority)"), let requestedHost = requested.host,
            host.lowercased() == requestedHost.lowercased()
        else { return false }
        let defaultPort = scheme == "https" ? 443 : 80
        return requested.port.map { $0 == (url.port ?? defaultPort) } ?? true
    }

    /// A whole number typed into a form field; nil when the field was left empty.
    static func integer(_ text: String?, field: String) throws -> Int? {
        guard let text else { return nil }
        guard let number = Int(text) else {
            throw KioskError(
                .invalidNumber, "'\(text.prefix(20))' is not a whole number.", field: field,
                fix: "Type digits only, such as 25.")
        }
        return number
    }

    /// Parses `name=value&…`, percent-decoding both halves (`+` is a space).
    static func parse(_ text: String) throws -> ConsoleForm {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let halves = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard fields.count < maxFields,
                let name = decode(halves[0]), let value = halves.count == 2 ? decode(halves[1]) : ""
            else {
                throw KioskError(
                    .invalidForm, "The form could not be read.", fix: "Send the form from the console's page.")
            }
            fields[name] = value
        }
        return ConsoleForm(fields: fields)
    }

    /// Parses a `multipart/form-data` body (MultipartKit): each part's name and its text; a file's text is its
    /// content read as UTF-8.
    static func parseMultipart(_ body: Data, contentType: String) throws -> ConsoleForm {
        let unreadable = KioskError(
            .invalidForm, "The form could not be read.", fix: "Send the form from the console's page.")
        guard
            let boundary = contentType.split(separator: ";").lazy
                .map({ $0.trimmingCharacters(in: .whitespaces) })
                .first(where: { $0.lowercased().hasPrefix("boundary=") })?.dropFirst("boundary=".count)
                .trimmingCharacters(in: CharacterSet(charactersIn: "\"")),
            (1...70).contains(boundary.utf8.count)
        else { throw unreadable }
        var fields: [String: String] = [:]
        var name: String?
        var value = ByteBuffer()
        var tooMany = false
        var notText = false
        let parser = MultipartParser(boundary: boundary)
        parser.onHeader = { header, text in
            guard header.lowercased() == "content-disposition" else { return }
            name = MultipartPart(headers: ["Content-Disposition": text], body: ByteBuffer()).name
        }
        parser.onBody = { chunk in value.writeBuffer(&chunk) }
        parser.onPartComplete = {
            if let name {
                tooMany = tooMany || fields.count >= maxFields
                guard let text = String(validating: value.readableBytesView, as: UTF8.self) else {
                    notText = true
                    return
                }
                fields[name] = text
            }
            name = nil
            value.clear()
        }
        do { try parser.execute(Array(body)) } catch { throw unreadable }
        if notText { throw notUTF8 }
        // A body cut short (no closing delimiter) would lose its last part without a word: refuse it whole.
        guard !tooMany, body.range(of: Data("--\(boundary)--".utf8)) != nil else { throw unreadable }
        return ConsoleForm(fields: fields)
    }

    /// A form whose bytes are not UTF-8 text: refused whole, never stored with replacement characters.
    static let notUTF8 = KioskError(
        .invalidForm, "The form holds bytes that are not UTF-8 text, so nothing in it was saved.",
        fix: "Send the form from the console's page; for a file, save it as UTF-8 first.")

    private static func decode(_ text: Substring) -> String? {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }

    /// `text` made safe for a query value.
    static func percentEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(.init(charactersIn: "-._~/"))) ?? ""
    }
}
