import Foundation
import HTTPTypes
import Hummingbird
import KioskCore
import NIOConcurrencyHelpers

/// What a page tells the operator about the action they just took, drawn by the layout at the top of the page: the
/// notice of what was done (carried across the redirect in a cookie the next page reads once), or the refusal that
/// re-drew the form's own page.
enum ConsoleFlash {
    /// The notice the page being drawn shows.
    @TaskLocal static var notice: ConsoleNotice?
    /// The refusal the page being drawn shows.
    @TaskLocal static var refusal: ConsoleRefusal?

    static let cookieName = "kiosk_notice"
    /// The longest notice text carried; a longer one is cut (a cookie holds about 4 KB).
    static let maxLength = 600

    /// The `Set-Cookie` value that carries `notice` to the next page (for a minute, to this console only).
    static func cookie(_ notice: ConsoleNotice, secure: Bool) -> String {
        var notice = notice
        if notice.text.count > maxLength { notice.text = String(notice.text.prefix(maxLength - 1)) + "…" }
        let json = (try? JSONEncoder().encode(notice)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        return ConsoleSessions.setCookie(cookieName, ConsoleForm.percentEncoded(json), maxAge: 60, secure: secure)
    }

    /// The `Set-Cookie` value that drops the notice once a page showed it.
    static func clearingCookie(secure: Bool) -> String {
        ConsoleSessions.setCookie(cookieName, "", maxAge: 0, secure: secure)
    }

    /// The notice a request's `Cookie` header carries; nil when none, or when it is not one this console wrote (its
    /// link must be a console path).
    static func notice(cookieHeader: String?) -> ConsoleNotice? {
        guard let cookieHeader else { return nil }
        for pair in cookieHeader.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == cookieName,
                parts[1].utf8.count <= 4096, let json = String(parts[1]).removingPercentEncoding,
                let notice = try? JSONDecoder().decode(ConsoleNotice.self, from: Data(json.utf8)),
                !notice.text.isEmpty, notice.text.count <= maxLength,
                !notice.text.unicodeScalars.contains(where: \.isControl),
                notice.link.map({ ConsoleController.safeNext($0.path) == $0.path && $0.text.count <= 200 }) ?? true
            else { continue }
            return notice
        }
        return nil
    }
}

/// What an action did, shown at the top of the page it returns to, with a link to the console's own form or page
/// for what to do next.
struct ConsoleNotice: Codable, Sendable {
    struct Link: Codable, Sendable {
        /// A console path.
        var path: String
        var text: String
    }

    var text: String
    var link: Link?

    init(_ text: String, link: Link? = nil) {
        self.text = text
        self.link = link
    }
}

/// A refused action, shown at the top of the page the form came from: what was wrong, what to do (with a link to
/// the console's own form for it, where there is one), and the code. An action throws one to name that link.
struct ConsoleRefusal: Error, Decodable, Sendable {
    var message: String
    var fix: String?
    var code: String?
    var link: ConsoleNotice.Link?
    /// The HTTP status the page is answered with.
    var status: Int

    init(_ error: KioskError, fix: String? = nil, link: ConsoleNotice.Link? = nil) {
        message = "Not done: \(error.message)"
        self.fix = fix ?? error.fix?.nonEmpty
        code = error.code.rawValue
        self.link = link
        status = Int(error.status.code)
    }
}

/// Draws a console page again from inside a request: the page a refused form came from, with the refusal at its
/// top. It holds the console's own routes (the store's other routes and middleware stay out), set once when they are
/// added.
final class ConsoleRedraw: Sendable {
    private let responder = NIOLockedValueBox<RouterResponder<KioskRequestContext>?>(nil)

    func set(_ responder: RouterResponder<KioskRequestContext>) { self.responder.withLockedValue { $0 = responder } }

    /// The page at `path` (a console path), as a GET of it by the same browser would draw it, showing `refusal`
    /// with its status; nil when that page cannot be drawn (then the caller shows the refusal on a page of its own).
    func page(
        _ path: String, refusal: ConsoleRefusal, after request: Request, context: KioskRequestContext
    ) async -> Response? {
        guard let responder = responder.withLockedValue({ $0 }) else { return nil }
        var head = HTTPRequest(method: .get, scheme: request.head.scheme, authority: request.head.authority, path: path)
        if let cookie = request.headers[.cookie] { head.headerFields[.cookie] = cookie }
        let response = try? await ConsoleFlash.$refusal.withValue(refusal) {
            try await responder.respond(
                to: Request(head: head, body: RequestBody(buffer: ByteBuffer())), context: context)
        }
        guard var response, response.status == .ok else { return nil }
        response.status = HTTPResponse.Status(code: refusal.status)
        return response
    }
}
