import Foundation

/// An error the CLI prints as `error: …` with where and what to do, then exits non-zero.
struct CLIError: Error, CustomStringConvertible {
    var message: String
    var field: String?
    var fix: String?
    var code: String?
    var status: Int?
    /// The product the error concerns (catalog files).
    var productId: String?
    /// Further problems the store reported with this one (a catalog file's), printed after it.
    var others: [CLIError] = []
    /// The store's answer, printed as is under `--json`.
    var answerBody: Data?

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
                var productId: String?
            }
            var error: Detail
            var errors: [Detail]?
        }
        if let body = try? JSONDecoder().decode(Body.self, from: answer.body) {
            let errors = (body.errors ?? [body.error]).map { detail in
                var error = CLIError(
                    message: detail.message, field: detail.field, fix: detail.fix, code: detail.code,
                    status: answer.status)
                error.productId = detail.productId
                return error
            }
            self = errors[0]
            others = Array(errors.dropFirst())
        } else {
            let text = String(decoding: answer.body, as: UTF8.self)
            self.init(
                message: "The store answered HTTP \(answer.status)\(text.isEmpty ? "" : ": \(text)")",
                status: answer.status)
        }
        answerBody = answer.body
    }

    var description: String {
        var lines: [String] = []
        if !others.isEmpty { lines.append("\(others.count + 1) problems:") }
        for error in [self] + others {
            lines.append("error: \(error.productId.map { "\($0): " } ?? "")\(error.message)")
            if let field = error.field { lines.append("  at:  \(field)") }
            if let fix = error.fix { lines.append("  fix: \(fix)") }
        }
        return lines.joined(separator: "\n")
    }

    /// This error (and the others) with `field` given as the flag that sets it, `--reference-name (referenceName)`.
    /// A field matches a key of `flags` exactly or by its longest prefix, indexes ignored (`localizations[].locale`).
    func naming(flags: [String: String]) -> CLIError {
        guard !flags.isEmpty else { return self }
        var named = self
        if let field, let flag = Self.flag(for: field, in: flags) { named.field = "\(flag) (\(field))" }
        named.others = others.map { $0.naming(flags: flags) }
        return named
    }

    private static func flag(for field: String, in flags: [String: String]) -> String? {
        let generic = field.replacingOccurrences(of: #"\[[0-9]+\]"#, with: "[]", options: .regularExpression)
        var key = generic
        while true {
            if let flag = flags[key] { return flag }
            guard let cut = key.lastIndex(where: { $0 == "." || $0 == "[" }) else { return nil }
            key = String(key[..<cut])
        }
    }

    /// The flags of fields whose flag is the field's name in kebab case (`firstName` → `--first-name`).
    static func flags(named fields: [String]) -> [String: String] {
        Dictionary(
            uniqueKeysWithValues: fields.map { field in
                let kebab = field.reduce(into: "") { text, character in
                    if character.isUppercase { text += "-" + character.lowercased() } else { text.append(character) }
                }
                return (field, "--" + kebab)
            })
    }
}
