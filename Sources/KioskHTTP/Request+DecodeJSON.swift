import Foundation
import Hummingbird
import KioskCore

/// A request body some of whose keys hold text other than one line (a JWS, a base64 receipt).
package protocol TextRuledBody: Decodable {
    /// The rule of each key (at any depth) whose strings are not one-line text (``TextRule/line``).
    static var textRules: [String: TextRule] { get }
}

extension Request {
    /// Decodes a JSON body, turning every problem into a `KioskError` that names the field.
    package func decodeJSON<T: Decodable>(as type: T.Type, context: some RequestContext) async throws -> T {
        let data = try await collectBody(context: context)
        return try JSONBody.decode(type, from: data)
    }
}

/// Decoding of Kiosk API bodies with errors people can act on. Decoding is strict: a key the type's `Decodable`
/// conformance never asks for is refused (``StrictJSONDecoding``), so a misspelt key is an error, not lost data.
package enum JSONBody {
    package static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        guard !data.isEmpty else {
            throw KioskError(.missingBody, "The request needs a JSON object body.", fix: "Send a JSON object.")
        }
        if let failure = JSONSyntaxCheck.firstFailure(in: Array(data)) {
            throw KioskError(
                .invalidJson, "The request body is not valid JSON: \(failure.message).",
                field: "line \(failure.line), column \(failure.column)", fix: "Correct the JSON syntax there.")
        }
        guard let object = try? JSONSerialization.jsonObject(with: data), let fields = object as? [String: Any] else {
            throw KioskError(
                .invalidJson, "The request body is not a JSON object.",
                fix: "Send a JSON object such as {\"name\": \"…\"} with Content-Type: application/json.")
        }
        let rules = (T.self as? any TextRuledBody.Type)?.textRules ?? [:]
        if let problem = firstTextProblem(in: fields, rules: rules) { throw problem }
        do {
            return try StrictJSONDecoding.decode(type, from: data, parsed: fields, using: .kiosk)
        } catch let unknown as StrictJSONDecoding.UnknownKey {
            throw KioskError(
                .unknownField, "Unknown field '\(unknown.path)'.", field: unknown.path,
                fix: unknown.meant.map { "Did you mean '\($0)'?" }
                    ?? "Use only these fields there: \(unknown.accepted.joined(separator: ", ")).")
        } catch let error as DecodingError {
            // Foundation's decoder reports a number an integer field cannot hold (0.5, 1e300, 2^63) as invalid JSON
            // at no field; the body is valid JSON, so the first such number is the field to name.
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty,
                let field = firstNonIntegerNumber(in: fields)
            {
                throw KioskError(
                    .invalidValue, "The field '\(field)' must be a whole number from -2^63 to 2^63-1.",
                    field: field, fix: "Send '\(field)' as a whole number in range.")
            }
            throw KioskError(decoding: error)
        }
    }

    /// The path of the first number in `value`, in key order, that is not a whole number an `Int64` holds.
    private static func firstNonIntegerNumber(in value: Any) -> String? {
        JSONTreeWalk.first(in: value) { value, path, _ in
            guard let number = value as? NSNumber else { return nil }
            switch String(cString: number.objCType) {
            case "d", "f":
                // A double as large as 2^63 came from a literal beyond Int64 (JSONSerialization reads those as doubles).
                let value = number.doubleValue
                return Int64(exactly: value) == nil || abs(value) >= 0x1p63 ? path : nil
            case "Q": return number.uint64Value > UInt64(Int64.max) ? path : nil
            default: return nil
            }
        }
    }

    /// The refusal of the first string in `value`, in key order, that breaks its key's rule.
    private static func firstTextProblem(in value: Any, rules: [String: TextRule]) -> KioskError? {
        JSONTreeWalk.first(in: value) { value, path, key in
            guard let text = value as? String else { return nil }
            return (key.flatMap { rules[$0] } ?? .line).problem(in: text, field: path)
        }
    }
}

extension KioskError {
    /// A `KioskError` naming the JSON path a `DecodingError` points at.
    package init(decoding error: DecodingError) {
        let path = CatalogFileCoding.path
        switch error {
        case .keyNotFound(let key, let context):
            let field = path(context.codingPath + [key])
            self = KioskError(.missingField, "The field '\(field)' is required.", field: field, fix: "Add '\(field)'.")
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            let field = path(context.codingPath)
            self = KioskError(
                .invalidType, "The field '\(field)' must be \(CatalogFileCoding.describe(type)).", field: field,
                fix: "Send '\(field)' as \(CatalogFileCoding.describe(type)).")
        case .dataCorrupted(let context):
            let field = path(context.codingPath)
            self = KioskError(
                .invalidValue, "The field '\(field)' has an invalid value: \(context.debugDescription).",
                field: field.isEmpty ? nil : field,
                fix: context.debugDescription.contains(" is not one of ")
                    ? "Send one of the values the message lists." : "Correct the value of '\(field)'.")
        @unknown default:
            self = KioskError(.invalidJson, "The request body could not be read.")
        }
    }
}
