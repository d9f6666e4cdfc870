import Foundation
import Hummingbird

/// A request's query parameters, checked against its operation in ``ConnectContract``: a parameter the operation
/// does not define, a value outside its enumeration, or a `limit` above its maximum is Apple's 400 before the
/// handler runs.
struct ConnectQuery: Sendable {
    /// Values by parameter name, lists split at commas.
    private let values: [String: [String]]

    /// The number of resources a page holds when the request sets no `limit`.
    static let defaultLimit = 50
    /// The number of related resources `include` adds per relationship when no `limit[name]` says otherwise.
    static let defaultIncludedLimit = 10

    init(_ request: Request, operation: ConnectContract.Operation) throws {
        var values: [String: [String]] = [:]
        for (key, value) in request.uri.queryParameters {
            let name = String(key).removingPercentEncoding ?? String(key)
            let text = String(value)
            // Apple's document leaves out `cursor`, which every list's `links.next` carries.
            if name == "cursor", operation.parameters["limit"] != nil {
                guard values[name] == nil else {
                    throw ConnectAPIError.invalid(name, text, reason: "The parameter is given more than once.")
                }
                values[name] = [text]
                continue
            }
            guard let parameter = operation.parameters[name] else {
                throw ConnectAPIError(
                    status: .badRequest, code: "PARAMETER_ERROR.ILLEGAL",
                    title: "A parameter was provided that is not allowed for this request.",
                    detail: "The parameter '\(name.prefix(60))' can not be used with this request.")
            }
            guard values[name] == nil else {
                throw ConnectAPIError.invalid(name, text, reason: "The parameter is given more than once.")
            }
            let items =
                parameter.isList
                ? text.split(separator: ",", omittingEmptySubsequences: false).map(String.init) : [text]
            for item in items {
                if let allowed = parameter.allowed, !allowed.contains(item) {
                    throw ConnectAPIError.invalid(
                        name, item, allowed: allowed.count <= 30 ? allowed : [])
                }
                if parameter.isInteger {
                    guard let number = Int(item), number >= 1 else {
                        throw ConnectAPIError.invalid(name, item, reason: "It must be a whole number of at least 1.")
                    }
                    if let maximum = parameter.maximum, number > maximum {
                        throw ConnectAPIError.invalid(name, item, reason: "It must be at most \(maximum).")
                    }
                }
            }
            values[name] = items
        }
        self.values = values
    }

    /// The values of a list parameter (`include`, `fields[subscriptions]`, `filter[productId]`); nil when absent.
    func list(_ name: String) -> [String]? { values[name] }

    /// The `filter[name]` parameters, by the name inside the brackets.
    var filters: [(name: String, values: [String])] {
        values.compactMap { name, values in
            guard name.hasPrefix("filter["), name.hasSuffix("]") else { return nil }
            return (String(name.dropFirst("filter[".count).dropLast()), values)
        }.sorted { $0.name < $1.name }
    }

    /// The value of a single-valued parameter (`sort`, `cursor`); nil when absent.
    func value(_ name: String) -> String? { values[name]?.first }

    /// `limit` (checked against the operation's maximum), or the default page size.
    var limit: Int { value("limit").flatMap { Int($0) } ?? Self.defaultLimit }

    /// `limit[relationship]`, or how many related resources `include` adds by default.
    func includedLimit(_ relationship: String) -> Int {
        value("limit[\(relationship)]").flatMap { Int($0) } ?? Self.defaultIncludedLimit
    }

    /// Whether `include` names `relationship`.
    func includes(_ relationship: String) -> Bool { list("include")?.contains(relationship) ?? false }

    /// Where the page starts: `cursor` as Apple writes it, base64 of `{"offset":"N"}`; 0 without one.
    func offset() throws -> Int {
        guard let cursor = value("cursor") else { return 0 }
        guard cursor.count <= 200, let data = Data(base64Encoded: Self.padded(cursor)),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let text = object["offset"] as? String, let offset = Int(text), offset >= 0, offset <= 1_000_000
        else { throw ConnectAPIError.invalid("cursor", cursor, reason: "It is not a cursor this API gave out.") }
        return offset
    }

    /// The cursor of the page starting at `offset`.
    static func cursor(offset: Int) -> String {
        Data(#"{"offset":"\#(offset)"}"#.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
    }

    private static func padded(_ base64: String) -> String {
        base64 + String(repeating: "=", count: (4 - base64.count % 4) % 4)
    }
}
