import Foundation

/// Something an import kept, changed or cannot use, in the user's terms: where in their file, which product, what,
/// and what to do if it matters.
public struct CatalogFileWarning: Codable, Sendable, Hashable, CustomStringConvertible {
    /// Stable snake_case code, e.g. `unknown_key_kept`, `locale_mapped`, `review_would_refuse`.
    public var code: String
    public var message: String
    /// The JSON path in the user's file, e.g. `subscriptionGroups[0].subscriptions[2].localizations[1].locale`.
    public var path: String?
    /// The product the warning concerns, if one.
    public var productId: String?
    public var fix: String?

    /// A warning.
    public init(code: String, message: String, path: String?, productId: String? = nil, fix: String? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.productId = productId
        self.fix = fix
    }

    public var description: String {
        var text = productId.map { "\($0): \(message)" } ?? message
        if let path { text += " (at \(path))" }
        if let fix { text += " Fix: \(fix)" }
        return text
    }
}

/// What reading a catalog file found besides its content: every error and every warning, each with its path in
/// the user's file. A reader goes on after a problem, so one import reports them all.
final class CatalogFileLog {
    let errorCode: ErrorCode
    private(set) var errors: [KioskError] = []
    private(set) var warnings: [CatalogFileWarning] = []

    init(errorCode: ErrorCode) {
        self.errorCode = errorCode
    }

    func error(_ message: String, at path: String, productId: String?, fix: String) {
        var error = KioskError(errorCode, message, field: path, fix: fix)
        error.productId = productId
        errors.append(error)
    }

    func add(_ error: KioskError, productId: String?) {
        var error = error
        error.productId = error.productId ?? productId
        errors.append(error)
    }

    func warning(_ code: String, _ message: String, at path: String?, productId: String?, fix: String? = nil) {
        warnings.append(CatalogFileWarning(code: code, message: message, path: path, productId: productId, fix: fix))
    }

    /// Throws every error found so far as one `KioskError`, in the order of their paths in the file (Xcode writes
    /// keys sorted, so that is the file's order): the first, with the rest as `additional`.
    func throwErrors() throws(KioskError) {
        let ordered = errors.sorted {
            Self.pathOrder($0.field ?? "").lexicographicallyPrecedes(Self.pathOrder($1.field ?? ""))
        }
        if let combined = KioskError.combined(ordered) { throw combined }
    }

    /// A sort key for a JSON path: its keys and indexes, indexes compared as numbers (`[2]` before `[10]`).
    static func pathOrder(_ path: String) -> [PathStep] {
        path.split(whereSeparator: { $0 == "." || $0 == "[" }).map { part in
            if part.hasSuffix("]"), let index = Int(part.dropLast()) { return .index(index) }
            return .key(String(part))
        }
    }

    /// One step of a JSON path, ordered keys by name and indexes by number.
    enum PathStep: Comparable {
        case index(Int)
        case key(String)
    }
}

/// One place in a JSON file being read: its value (nil when the key is absent), its path in the user's file, and
/// the product it belongs to. Reading a value of the wrong type records an error at this path and gives nil, so the
/// reader goes on and reports every problem.
struct FileNode {
    let value: JSONValue?
    let path: String
    let productId: String?
    let log: CatalogFileLog

    /// The root of a file.
    init(root: JSONValue, log: CatalogFileLog) {
        self.init(value: root, path: "", productId: nil, log: log)
    }

    private init(value: JSONValue?, path: String, productId: String?, log: CatalogFileLog) {
        self.value = value
        self.path = path
        self.productId = productId
        self.log = log
    }

    /// The value at `key` of this object.
    subscript(key: String) -> FileNode {
        var child: JSONValue?
        if case .object(let members) = value { child = members[key] }
        return FileNode(value: child, path: path.isEmpty ? key : "\(path).\(key)", productId: productId, log: log)
    }

    /// The same place, now known to belong to `productId`.
    func about(_ productId: String?) -> FileNode {
        FileNode(value: value, path: path, productId: productId ?? self.productId, log: log)
    }

    /// Absent, or `null`.
    var isMissing: Bool { value == nil || value == .null }

    /// The string here; nil (and an error) when it is missing and `required`, or not a string.
    func string(required: Bool = true) -> String? {
        switch value {
        case .string(let text): return text
        case nil, .null?:
            if required { missing("a string") }
            return nil
        default:
            wrongType("a string")
            return nil
        }
    }

    /// The integer here (a number with no fraction); nil (and an error) when it is missing and `required`, or not
    /// an integer.
    func integer(required: Bool = true) -> Int? {
        switch value {
        case .integer(let number): return number
        case .decimal(let number) where Self.isWhole(number) && abs(number) < 1e15:
            return NSDecimalNumber(decimal: number).intValue
        case nil, .null?:
            if required { missing("an integer") }
            return nil
        default:
            wrongType("an integer")
            return nil
        }
    }

    private static func isWhole(_ number: Decimal) -> Bool {
        var source = number
        var whole = Decimal()
        NSDecimalRound(&whole, &source, 0, .plain)
        return whole == number
    }

    /// The boolean here; nil (and an error) when it is missing and `required`, or not true or false.
    func bool(required: Bool = true) -> Bool? {
        switch value {
        case .bool(let flag): return flag
        case nil, .null?:
            if required { missing("true or false") }
            return nil
        default:
            wrongType("true or false")
            return nil
        }
    }

    /// The elements of the array here: none when absent or `null`; an error when it is not an array.
    func elements() -> [FileNode] {
        switch value {
        case .array(let items):
            return items.enumerated().map {
                FileNode(value: $0.element, path: "\(path)[\($0.offset)]", productId: productId, log: log)
            }
        case nil, .null?: return []
        default:
            wrongType("an array")
            return []
        }
    }

    /// Whether the value here is an object; records an error when it is something else.
    func requireObject() -> Bool {
        if case .object = value { return true }
        wrongType("an object")
        return false
    }

    /// The members of this object whose keys are not `known`: kept as read, each reported as a warning.
    func unknownMembers(known: Set<String>, what: String) -> [String: JSONValue] {
        guard case .object(let members) = value else { return [:] }
        let unknown = members.filter { !known.contains($0.key) }
        for key in unknown.keys.sorted() {
            log.warning(
                "unknown_key_kept",
                "Kiosk does not use '\(key)' in \(what); it is kept and written back on export.",
                at: self[key].path, productId: productId)
        }
        return unknown
    }

    func error(_ message: String, fix: String) {
        log.error(message, at: path, productId: productId, fix: fix)
    }

    func warning(_ code: String, _ message: String, fix: String? = nil) {
        log.warning(code, message, at: path, productId: productId, fix: fix)
    }

    private func missing(_ expected: String) {
        let key = path.split(separator: ".").last.map(String.init) ?? path
        if value == nil {
            error("'\(key)' is missing: expected \(expected).", fix: "Add '\(key)'.")
        } else {
            error("'\(key)' is null: expected \(expected).", fix: "Give '\(key)' a value.")
        }
    }

    private func wrongType(_ expected: String) {
        error("Expected \(expected), found \(Self.describe(value)).", fix: "Write \(expected) here.")
    }

    private static func describe(_ value: JSONValue?) -> String {
        switch value {
        case nil: "nothing"
        case .null?: "null"
        case .bool?: "true or false"
        case .integer?, .decimal?, .double?: "a number"
        case .string(let text)?: "the string \"\(text.prefix(40))\""
        case .array?: "an array"
        case .object?: "an object"
        }
    }
}

extension CatalogFileLog {
    /// Parses `data` as JSON for `fileKind`; broken syntax is an error naming the line and column.
    static func parse(_ data: Data, errorCode: ErrorCode, fileKind: String) throws(KioskError) -> JSONValue {
        if let failure = JSONSyntaxCheck.firstFailure(in: Array(data)) {
            throw KioskError(
                errorCode, "The \(fileKind) is not valid JSON: \(failure.message).",
                field: "line \(failure.line), column \(failure.column)", fix: "Correct the JSON syntax there.")
        }
        do {
            return try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw KioskError(
                errorCode, "The \(fileKind) could not be read: \(error).", fix: "Save it again as UTF-8 JSON.")
        }
    }
}

/// A catalog file ready to import: the document, what reading it warned about, and where each entry is in the
/// user's file, so problems found later (by the store's rules) point into the file the user has.
public struct CatalogFileImport: Sendable {
    public var document: CatalogDocument
    public var warnings: [CatalogFileWarning]
    /// Each entry's path in the file: `product:<id>` or `group:<reference name>` → `subscriptionGroups[0].subscriptions[2]`.
    public var sourcePaths: [String: String]
    /// The file's names for the catalog's fields where they differ (`.storekit`: `productId` → `productID`,
    /// `pricing` → `displayPrice`); a mapped field's inner path is dropped, as the file's shape differs there.
    public var fieldNames: [String: String]
    /// The `.storekit` file as read, kept by the store so an export writes back what the catalog does not model.
    public var storeKitFile: StoreKitConfiguration?

    /// An import of `document`.
    public init(
        document: CatalogDocument, warnings: [CatalogFileWarning], sourcePaths: [String: String],
        fieldNames: [String: String] = [:], storeKitFile: StoreKitConfiguration? = nil
    ) {
        self.document = document
        self.warnings = warnings
        self.sourcePaths = sourcePaths
        self.fieldNames = fieldNames
        self.storeKitFile = storeKitFile
    }

    /// The path in the user's file of `field` (a path within the entry, e.g. `localizations[1].displayName`) of
    /// the entry labelled `label` (`product:<id>`, `group:<name>`); `fallback` when the file does not say.
    public func path(of label: String, field: String?, fallback: String) -> String {
        let base = sourcePaths[label] ?? fallback
        guard let field, !field.isEmpty else { return base }
        let head = field.prefix { $0 != "." && $0 != "[" }
        if let renamed = fieldNames[String(head)] { return "\(base).\(renamed)" }
        return "\(base).\(field)"
    }
}
