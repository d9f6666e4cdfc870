import Foundation

/// An error the CLI prints as `error: …` with where and what to do, then exits non-zero.
struct CLIError: Error, CustomStringConvertible {
    var message: String
    var field: String?
    var fix: String?
    var code: String?
    var status: Int?

    init(message: String, field: String? = nil, fix: String? = nil, code: String? = nil, status: Int? = nil) {
        self.message = message
        self.field = field
        self.fix = fix
        self.code = code
        self.status = status
    }

    /// The error a non-2xx store answer carries (`{"error": {code, message, field, fix}}`).
    init(answer: AdminClient.Answer) {
        struct Body: Decodable {
            struct Detail: Decodable {
                var code: String
                var message: String
                var field: String?
                var fix: String?
            }
            var error: Detail
        }
        if let body = try? JSONDecoder().decode(Body.self, from: answer.body) {
            self.init(
                message: body.error.message, field: body.error.field, fix: body.error.fix, code: body.error.code,
                status: answer.status)
        } else {
            let text = String(decoding: answer.body, as: UTF8.self)
            self.init(
                message: "The store answered HTTP \(answer.status)\(text.isEmpty ? "" : ": \(text)")",
                status: answer.status)
        }
    }

    var description: String {
        var lines = ["error: \(message)"]
        if let field { lines.append("  at:  \(field)") }
        if let fix { lines.append("  fix: \(fix)") }
        return lines.joined(separator: "\n")
    }
}
