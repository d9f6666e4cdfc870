import Foundation
import KioskCore

/// Kiosk's App Store Connect API contract: Apple's OpenAPI document cut down to the operations Kiosk serves
/// (`Resources/app-store-connect-openapi.json`, made by `scripts/derive-connect-openapi.py`). The store checks each
/// request's query parameters and body against it, and the tests check each answer against it, so what Kiosk accepts
/// and answers is what Apple's document says.
public struct ConnectContract: Sendable {
    /// One operation: `GET /v1/subscriptions/{id}`.
    public struct Operation: Sendable {
        public let method: String
        public let path: String
        /// Query parameters by name.
        let parameters: [String: Parameter]
        /// The request body's schema, when the operation takes one.
        let requestSchema: JSONValue?
        /// The answer's schema per HTTP status ("200", "201"); nil for an answer without a body.
        let responseSchemas: [String: JSONValue?]
    }

    /// A query parameter as the document defines it.
    struct Parameter: Sendable {
        let name: String
        /// The allowed values (of each item, for a comma-separated list).
        let allowed: [String]?
        let isList: Bool
        let isInteger: Bool
        let maximum: Int?
    }

    /// The document Kiosk serves, read once.
    public static let served: ConnectContract = {
        guard let url = Bundle.module.url(forResource: "app-store-connect-openapi", withExtension: "json"),
            let data = try? Data(contentsOf: url), let document = try? JSONValue(jsonData: data)
        else { fatalError("Resources/app-store-connect-openapi.json is missing from the KioskStore bundle") }
        return ConnectContract(document: document)
    }()

    /// Operations by `"METHOD path"`.
    public let operations: [String: Operation]
    private let schemas: [String: JSONValue]

    init(document: JSONValue) {
        schemas = document["components"]?["schemas"]?.objectValue ?? [:]
        var operations: [String: Operation] = [:]
        for (path, item) in document["paths"]?.objectValue ?? [:] {
            for method in ["get", "post", "patch", "delete"] {
                guard let operation = item[method] else { continue }
                var parameters: [String: Parameter] = [:]
                for parameter in operation["parameters"]?.arrayValue ?? [] where parameter["in"] == .string("query") {
                    guard let name = parameter["name"]?.stringValue else { continue }
                    let schema = parameter["schema"]
                    let isList = schema?["type"] == .string("array")
                    let valueSchema = isList ? schema?["items"] : schema
                    parameters[name] = Parameter(
                        name: name, allowed: valueSchema?["enum"]?.arrayValue?.compactMap(\.stringValue),
                        isList: isList, isInteger: valueSchema?["type"] == .string("integer"),
                        maximum: valueSchema?["maximum"]?.intValue)
                }
                var responses: [String: JSONValue?] = [:]
                for (status, response) in operation["responses"]?.objectValue ?? [:] {
                    responses[status] = response["content"]?["application/json"]?["schema"]
                }
                let key = "\(method.uppercased()) \(path)"
                operations[key] = Operation(
                    method: method.uppercased(), path: path, parameters: parameters,
                    requestSchema: operation["requestBody"]?["content"]?["application/json"]?["schema"],
                    responseSchemas: responses)
            }
        }
        self.operations = operations
    }

    /// The operation served as `method path`. The document lacking it is Kiosk's own mistake (a route registered
    /// without deriving the document again), answered as Apple's 500 rather than ending the store.
    func operation(_ method: String, _ path: String) throws -> Operation {
        guard let operation = operations["\(method) \(path)"] else {
            throw ConnectAPIError(
                status: .internalServerError, code: "UNEXPECTED_ERROR", title: "An unexpected error occurred.",
                detail: "\(method) \(path) is served but not in Kiosk's app-store-connect-openapi.json; add it to "
                    + "scripts/derive-connect-openapi.py and derive the document again.")
        }
        return operation
    }

    // MARK: Schemas

    /// Where `value` breaks `schema`, as JSON pointers with a reason; empty when it conforms.
    public func violations(of value: JSONValue, against schema: JSONValue, at pointer: String = "") -> [Violation] {
        var found: [Violation] = []
        check(value, schema, pointer, &found)
        return found
    }

    /// Where `body` breaks the schema of the answer `operation` gives with `status`; empty when it conforms.
    public func violations(ofAnswer body: JSONValue, to operation: Operation, status: Int) -> [Violation] {
        guard let entry = operation.responseSchemas[String(status)] else {
            return [Violation(pointer: "", reason: "the document lists no \(status) answer for this operation")]
        }
        guard let schema = entry else { return [] }
        return violations(of: body, against: schema)
    }

    /// A place where a value breaks its schema.
    public struct Violation: Sendable, Hashable, CustomStringConvertible {
        /// A JSON pointer, such as `/data/attributes/name`.
        public let pointer: String
        public let reason: String
        public var description: String { "\(pointer.isEmpty ? "/" : pointer): \(reason)" }
    }

    private func resolved(_ schema: JSONValue) -> JSONValue {
        guard let reference = schema["$ref"]?.stringValue else { return schema }
        let name = String(reference.split(separator: "/").last ?? "")
        return schemas[name].map(resolved) ?? .object([:])
    }

    private func check(_ value: JSONValue, _ schema: JSONValue, _ pointer: String, _ found: inout [Violation]) {
        let schema = resolved(schema)
        if value == .null {
            if schema["nullable"] != .bool(true) && schema["type"] != nil {
                found.append(Violation(pointer: pointer, reason: "is null"))
            }
            return
        }
        if let choices = schema["oneOf"]?.arrayValue {
            checkOneOf(value, choices, discriminator: schema["discriminator"], pointer, &found)
            return
        }
        if let allowed = schema["enum"]?.arrayValue, !allowed.contains(value) {
            let names = allowed.compactMap(\.stringValue).joined(separator: ", ")
            found.append(Violation(pointer: pointer, reason: "is not one of \(names)"))
            return
        }
        switch schema["type"]?.stringValue {
        case "object":
            guard case .object(let members) = value else {
                found.append(Violation(pointer: pointer, reason: "is not an object"))
                return
            }
            for name in schema["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] where members[name] == nil {
                found.append(Violation(pointer: "\(pointer)/\(name)", reason: "is required"))
            }
            let properties = schema["properties"]?.objectValue ?? [:]
            for (name, member) in members {
                if let property = properties[name] { check(member, property, "\(pointer)/\(name)", &found) }
            }
        case "array":
            guard case .array(let items) = value else {
                found.append(Violation(pointer: pointer, reason: "is not an array"))
                return
            }
            if let itemSchema = schema["items"] {
                for (index, item) in items.enumerated() { check(item, itemSchema, "\(pointer)/\(index)", &found) }
            }
        case "string":
            if value.stringValue == nil { found.append(Violation(pointer: pointer, reason: "is not a string")) }
        case "integer":
            if value.intValue == nil { found.append(Violation(pointer: pointer, reason: "is not an integer")) }
        case "number":
            switch value {
            case .integer, .decimal, .double: break
            default: found.append(Violation(pointer: pointer, reason: "is not a number"))
            }
        case "boolean":
            if case .bool = value {} else { found.append(Violation(pointer: pointer, reason: "is not a boolean")) }
        default: break
        }
    }

    private func checkOneOf(
        _ value: JSONValue, _ choices: [JSONValue], discriminator: JSONValue?, _ pointer: String,
        _ found: inout [Violation]
    ) {
        if let property = discriminator?["propertyName"]?.stringValue,
            let mapping = discriminator?["mapping"]?.objectValue
        {
            guard let kind = value[property]?.stringValue, let reference = mapping[kind] else {
                found.append(Violation(pointer: "\(pointer)/\(property)", reason: "names no allowed type"))
                return
            }
            check(value, .object(["$ref": reference]), pointer, &found)
            return
        }
        var closest: [Violation]?
        for choice in choices {
            let violations = violations(of: value, against: choice, at: pointer)
            if violations.isEmpty { return }
            if closest.map({ violations.count < $0.count }) ?? true { closest = violations }
        }
        found.append(contentsOf: closest ?? [])
    }
}

extension JSONValue {
    /// Reads JSON text; numbers keep ``JSONValue``'s precision rules.
    init(jsonData data: Data) throws {
        self = try JSONDecoder().decode(JSONValue.self, from: data)
    }

    subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { members[key] } else { nil }
    }

    var objectValue: [String: JSONValue]? {
        if case .object(let members) = self { members } else { nil }
    }

    var arrayValue: [JSONValue]? {
        if case .array(let items) = self { items } else { nil }
    }

    var intValue: Int? {
        if case .integer(let value) = self { value } else { nil }
    }

    var boolValue: Bool? {
        if case .bool(let value) = self { value } else { nil }
    }
}
