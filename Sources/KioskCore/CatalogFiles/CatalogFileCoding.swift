import Foundation

/// Shared machinery of the catalog file formats: strict decoding (unknown keys and unknown enum values are
/// errors with their JSON path), translation of decoding failures into `KioskError`s that name the path or the
/// line and column, and stable pretty-printed encoding.
package enum CatalogFileCoding {
    /// A coding key for any string or index, used to list the keys an object really has.
    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int?

        init(stringValue: String) {
            self.stringValue = stringValue
            intValue = nil
        }

        init(intValue: Int) {
            stringValue = String(intValue)
            self.intValue = intValue
        }
    }

    /// Writes members kept as read (keys a reader did not know) into the object being encoded; the caller's own
    /// keys, written after, win.
    static func encode(_ extras: [String: JSONValue], to encoder: any Encoder) throws {
        guard !extras.isEmpty else { return }
        var container = encoder.container(keyedBy: AnyKey.self)
        for (key, value) in extras { try container.encode(value, forKey: AnyKey(stringValue: key)) }
    }

    /// Decodes a string-backed enum, naming the allowed values when the file has another one.
    static func decodeEnum<Value: RawRepresentable & CaseIterable, Key: CodingKey>(
        _ type: Value.Type, in container: KeyedDecodingContainer<Key>, forKey key: Key
    ) throws -> Value where Value.RawValue == String {
        let text = try container.decode(String.self, forKey: key)
        guard let value = Value(rawValue: text) else {
            let allowed = Value.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container, debugDescription: "'\(text)' is not one of \(allowed)")
        }
        return value
    }

    /// Renders a coding path as `products[2].localizations[0].locale`.
    package static func path(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text
    }

    /// Decodes `type` from `data`, turning every failure into a `KioskError` with `code` that names the
    /// JSON path of the problem, or the line and column of a syntax error.
    package static func decode<Value: Decodable>(
        _ type: Value.Type, from data: Data, code: ErrorCode, fileKind: String, fix: String
    ) throws(KioskError) -> Value {
        if let failure = JSONSyntaxCheck.firstFailure(in: Array(data)) {
            throw KioskError(
                code, "The \(fileKind) is not valid JSON: \(failure.message).",
                field: "line \(failure.line), column \(failure.column)", fix: "Correct the JSON syntax there.")
        }
        do {
            return try StrictJSONDecoding.decode(type, from: data, using: JSONDecoder())
        } catch let unknown as StrictJSONDecoding.UnknownKey {
            throw kioskError(unknown, code: code, fileKind: fileKind, fix: fix)
        } catch let error as DecodingError {
            throw kioskError(error, code: code, fileKind: fileKind, fix: fix)
        } catch let error as KioskError {
            throw error
        } catch {
            throw KioskError(code, "The \(fileKind) could not be read: \(error).", fix: fix)
        }
    }

    /// Translates an unknown key into a `KioskError` whose `field` is its JSON path.
    static func kioskError(_ unknown: StrictJSONDecoding.UnknownKey, code: ErrorCode, fileKind: String, fix: String)
        -> KioskError
    {
        KioskError(
            code,
            "Invalid value in the \(fileKind): unknown key '\(unknown.key)' (known keys here: "
                + "\(unknown.accepted.joined(separator: ", "))).",
            field: unknown.path, fix: unknown.meant.map { "Did you mean '\($0)'? \(fix)" } ?? fix)
    }

    /// Translates a `DecodingError` into a `KioskError` whose `field` is the JSON path of the problem.
    static func kioskError(_ error: DecodingError, code: ErrorCode, fileKind: String, fix: String) -> KioskError {
        switch error {
        case .typeMismatch(let type, let context):
            return KioskError(
                code, "Wrong type in the \(fileKind): expected \(describe(type)).", field: path(context.codingPath),
                fix: fix)
        case .valueNotFound(let type, let context):
            return KioskError(
                code, "Missing value in the \(fileKind): expected \(describe(type)) but found null.",
                field: path(context.codingPath), fix: fix)
        case .keyNotFound(let key, let context):
            return KioskError(
                code, "The \(fileKind) lacks the required key '\(key.stringValue)'.",
                field: path(context.codingPath + [key]), fix: "Add '\(key.stringValue)'. \(fix)")
        case .dataCorrupted(let context):
            return KioskError(
                code, "Invalid value in the \(fileKind): \(context.debugDescription).", field: path(context.codingPath),
                fix: fix)
        @unknown default:
            return KioskError(code, "The \(fileKind) could not be read: \(error).", fix: fix)
        }
    }

    /// How a JSON type is named to people: "a string", "an integer", …
    package static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Int.Type, is Int64.Type: "an integer"
        case is [Any].Type: "an array"
        case is [String: Any].Type: "an object"
        default: "\(type)"
        }
    }

    /// Pretty-printed, key-sorted JSON: the same value always gives the same bytes.
    static func encode<Value: Encodable>(_ value: Value) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            return try encoder.encode(value)
        } catch {
            // The catalog types hold only strings, integers, booleans, arrays and objects, which always encode.
            preconditionFailure("catalog file encoding failed: \(error)")
        }
    }
}
