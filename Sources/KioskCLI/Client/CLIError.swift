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
            guard let cut = key.lastIndex(where: { $0 == "." || $0 == "[" }) else { break }
            key = String(key[..<cut])
        }
        // An element of a list the command edits, whose last name is a flag's (`introductoryOffers[0].paymentMode`
        // → `--payment-mode`); not a file name or other text that merely ends in a word (`merchant.json`).
        guard generic.contains("[]"),
            generic.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._[]".contains($0)) })
        else { return nil }
        let last = generic.split(whereSeparator: { ".[]".contains($0) }).last.map(String.init)
        return last.flatMap { flags[$0] }
    }

    /// The API fields commands set with a flag of another name, when the command has that flag.
    private static let aliases = [
        "bundleId": "app", "productId": "product", "email": "tester", "identifier": "id", "customPrices": "price",
        "numberOfPeriods": "periods", "originalTransactionId": "transaction",
    ]

    /// The flags of a parsed command, by property name: each `@Option` and `@Flag` (in its option groups too) is
    /// its name in kebab case, ArgumentParser's default (`paymentMode` → `--payment-mode`), each `@Argument` as
    /// its usage shows it (`paymentId` → `<payment-id>`); the API's names for
    /// some (`bundleId` → `--app`, ``aliases``); and what the command and its groups name in ``FieldFlags``.
    static func flags(of command: Any) -> [String: String] {
        var names: [String] = []
        var arguments: [String] = []
        var named: [String: String] = [:]
        func collect(_ value: Any) {
            if let fields = value as? any FieldFlags {
                named.merge(type(of: fields).fieldFlags) { $1 }
            }
            for child in Mirror(reflecting: value).children {
                guard let label = child.label, label.hasPrefix("_") else { continue }
                let type = String(describing: Swift.type(of: child.value))
                if type.hasPrefix("Option<") || type.hasPrefix("Flag<") {
                    names.append(String(label.dropFirst()))
                } else if type.hasPrefix("Argument<") {
                    arguments.append(String(label.dropFirst()))
                } else if type.hasPrefix("OptionGroup<"),
                    let group = Mirror(reflecting: child.value).descendant("_parsedValue", "value")
                {
                    collect(group)
                }
            }
        }
        collect(command)
        var flags = flags(named: names)
        for (field, flag) in Self.flags(named: arguments) { flags[field] = "<\(flag.dropFirst(2))>" }
        for (field, name) in aliases where names.contains(name) && !names.contains(field) {
            flags[field] = "--" + name
        }
        if names.contains("tier") {
            flags["pricing"] = names.contains("price") ? "--tier/--price" : "--tier"
        }
        return flags.merging(named) { $1 }
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

/// A command or option group whose flags set API fields of other names, for the flags errors name
/// (`paidSubscriptionDurationInMonths` → `--paid-months`).
protocol FieldFlags {
    /// API field (or path, indexes written `[]`, or its last name) → the flag that sets it.
    static var fieldFlags: [String: String] { get }
}
