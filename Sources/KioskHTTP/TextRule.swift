import Hummingbird
import KioskCore

/// What a string in a Kiosk JSON body may hold. Every string is checked before the body is decoded, so no field
/// carries a NUL, a control character or a megabyte further in.
package struct TextRule: Sendable {
    /// The most Unicode scalars the string may have.
    package var maxLength: Int
    /// Whether tabs and line breaks are allowed; no other control character ever is.
    package var multiline: Bool

    /// Names, ids, URLs and other one-line text: at most 4,096 characters, no control characters.
    package static let line = TextRule(maxLength: 4096, multiline: false)
    /// A document carried as text (PEM, base64, a JWS): line breaks allowed, as long as the body limit allows.
    package static let document = TextRule(maxLength: .max, multiline: true)

    /// The refusal of `text` at `field`: 400 `invalid_character` or `text_too_long`; nil when it is fine.
    package func problem(in text: String, field: String) -> KioskError? {
        var length = 0
        for scalar in text.unicodeScalars {
            length += 1
            if length > maxLength {
                return KioskError(
                    .textTooLong, "The field '\(field)' is longer than \(maxLength) characters.", field: field,
                    fix: "Send at most \(maxLength) characters.")
            }
            if scalar.isControl, !(multiline && [9, 10, 13].contains(scalar.value)) {
                return KioskError(
                    .invalidCharacter, "The field '\(field)' contains the control character U+\(scalar.hexCode).",
                    field: field,
                    fix: multiline
                        ? "Remove it; only tabs and line breaks are allowed."
                        : "Remove it; this field is one line of text.")
            }
        }
        return nil
    }
}

/// Refuses a request whose query string holds a control character (percent-encoded, as `%00`) or a value longer
/// than ``TextRule/line`` allows, naming the parameter: 400 `invalid_character` / `text_too_long`, before any
/// handler reads it (a NUL would otherwise reach the database, which PostgreSQL refuses).
package struct QueryTextMiddleware<Context: RequestContext>: RouterMiddleware {
    package init() {}

    package func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        for (name, value) in request.uri.queryParameters {
            let field = String(name)
            if let problem = TextRule.line.problem(in: field, field: field)
                ?? TextRule.line.problem(in: String(value), field: field)
            {
                throw problem
            }
        }
        return try await next(request, context)
    }
}
