import Foundation
import Hummingbird
import KioskCore
import KioskHTTP

/// One request to an App Store Connect API catalog operation, its query already checked against the contract.
struct ConnectCall: Sendable {
    let request: Request
    let context: KioskRequestContext
    let operation: ConnectContract.Operation
    let query: ConnectQuery
    let key: TeamAPIKey
    /// `http://host:port` as the client addressed the store; links in answers start with it.
    let base: String

    /// The `{id}` path parameter.
    var id: String { context.parameters.get("id") ?? "" }

    /// Writes this request's answer documents.
    var writer: ConnectDocumentWriter {
        ConnectDocumentWriter(query: query, base: base, selfLink: request.uri.description)
    }

    /// The request body, checked against the operation's schema: JSON that breaks it is Apple's 409 with a pointer
    /// to the first place it breaks; a body that is not JSON is 422.
    func body() async throws -> ConnectBody {
        let data = try await request.collectBody(context: context)
        guard let value = try? JSONValue(jsonData: data), case .object = value else {
            throw ConnectAPIError(
                status: .unprocessableContent, code: "ENTITY_UNPROCESSABLE",
                title: "The request entity is not valid.", detail: "The request body must be a JSON:API document.")
        }
        if let schema = operation.requestSchema,
            let first = ConnectContract.served.violations(of: value, against: schema).first
        {
            throw ConnectAPIError.entity(
                first.reason == "is required" ? "ENTITY_ERROR.ATTRIBUTE.REQUIRED" : "ENTITY_ERROR.ATTRIBUTE.INVALID",
                "The value at '\(first.pointer)' \(first.reason).", pointer: first.pointer)
        }
        let body = ConnectBody(data: value["data"] ?? .null, included: value["included"]?.arrayValue ?? [])
        if operation.method == "PATCH", body.data["id"]?.stringValue != id {
            throw ConnectAPIError.entity(
                "ENTITY_ERROR.ID.INVALID", "The id in the body is not the id in the path, '\(id.prefix(80))'.",
                pointer: "/data/id")
        }
        return body
    }
}

/// The `data` (and `included`) of a request body.
struct ConnectBody: Sendable {
    let data: JSONValue
    /// Resources created with this one (`${local-id}` ids), such as a promotional offer's prices.
    let included: [JSONValue]

    /// `data.attributes.name`; nil when absent or null.
    func attribute(_ name: String) -> JSONValue? {
        guard let value = data["attributes"]?[name], value != .null else { return nil }
        return value
    }

    func string(_ name: String) -> String? { attribute(name)?.stringValue }

    /// The id a to-one relationship points at (`data.relationships.name.data.id`).
    func relationship(_ name: String) -> String? {
        data["relationships"]?[name]?["data"]?["id"]?.stringValue
    }
}

/// What a catalog operation answers: a document with its status, or 204; and what the audit log records.
struct ConnectAnswer: Sendable {
    var status: HTTPResponse.Status = .ok
    var document: JSONValue?
    /// A `text/csv` body, for the operations whose answer is a file (one-time offer codes).
    var csv: String?
    /// The audit log's action and target, such as `("product.create", "com.example.app/pro.monthly")`.
    var audit: (action: String, target: String)?

    static func ok(_ document: JSONValue) -> ConnectAnswer { ConnectAnswer(document: document) }

    static func created(_ document: JSONValue, audit: (String, String)) -> ConnectAnswer {
        ConnectAnswer(status: .created, document: document, audit: audit)
    }

    static func changed(_ document: JSONValue, audit: (String, String)) -> ConnectAnswer {
        ConnectAnswer(document: document, audit: audit)
    }

    static func deleted(audit: (String, String)) -> ConnectAnswer {
        ConnectAnswer(status: .noContent, audit: audit)
    }

    static func file(csv: String) -> ConnectAnswer { ConnectAnswer(csv: csv) }

    func response() throws -> Response {
        var headers = HTTPFields()
        if let csv {
            headers[.contentType] = "text/csv"
            return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: csv)))
        }
        guard let document else { return Response(status: status, headers: headers) }
        headers[.contentType] = "application/json"
        let data = try JSONEncoder.connect.encode(document)
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}

extension JSONEncoder {
    /// Answers of the App Store Connect API: slashes unescaped, keys sorted (a stable body for tests and diffs).
    static let connect: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}

/// Registers catalog operations under `/v1` and `/v2`: each checks the key's roles (App Manager or Admin to change
/// the catalog), its query against the contract, and turns Kiosk's catalog errors into Apple's; each change goes in
/// the audit log under the key's name.
struct ConnectRouter {
    let v1: RouterGroup<KioskRequestContext>
    let v2: RouterGroup<KioskRequestContext>
    let team: TeamService
    let clock: any KioskClock
    let scheme: String

    /// Serves `method path` (Apple's spelling, `/v1/subscriptions/{id}`) with `handle`.
    func add(
        _ method: HTTPRequest.Method, _ path: String,
        _ handle: @escaping @Sendable (ConnectCall) async throws -> ConnectAnswer
    ) {
        let group = path.hasPrefix("/v2/") ? v2 : v1
        let pattern = path.dropFirst(4).replacingOccurrences(of: "{id}", with: ":id")
        let (team, clock, scheme) = (team, clock, scheme)
        group.on(RouterPath(pattern), method: method) { request, context in
            let key = try context.requireTeamKey()
            // The document is read at the first request that needs it, not at start: it is 0.8 MB of JSON, and
            // holding it parsed is the largest part of an idle store's own memory. `ConnectCatalogTests` checks that
            // every route registered here is one of its operations.
            let operation = try ConnectContract.served.operation(method.rawValue, path)
            if method != .get, !key.changesCatalog {
                throw ConnectAPIError.forbidden(
                    "The API key in use does not allow this request: changing the catalog takes the Admin or App "
                        + "Manager role; this key has \(key.roles.map(\.title).joined(separator: ", ")).")
            }
            let call = ConnectCall(
                request: request, context: context, operation: operation,
                query: try ConnectQuery(request, operation: operation), key: key,
                base: "\(scheme)://\(request.head.authority ?? "localhost")")
            let answer: ConnectAnswer
            do {
                answer = try await handle(call)
            } catch let error as KioskError {
                throw ConnectAPIError(catalogError: error).asRelationshipError(creating: method == .post)
            } catch let error as ConnectAPIError {
                throw error.asRelationshipError(creating: method == .post)
            }
            if let audit = answer.audit {
                try await team.recordAudit(
                    AuditEntry(
                        at: clock.now(), actor: "API key \(key.name) (\(key.id))", action: audit.action,
                        target: audit.target))
            }
            return try answer.response()
        }
    }
}

extension ConnectRouter {
    /// Serves a relationship both ways Apple does: `owner/{id}/name`, the related resources (a page, or one), and
    /// `owner/{id}/relationships/name`, their linkage only. `handledFilters` are the `filter[…]` that `related`
    /// applied itself. A to-one relationship that holds nothing is 404, as for a resource that does not exist.
    func addRelated(
        _ owner: String, _ name: String, handledFilters: Set<String> = [],
        _ related: @escaping @Sendable (ConnectCall) async throws -> ConnectRelationship.Related
    ) {
        add(.get, "\(owner)/{id}/\(name)") { call in
            switch try await related(call) {
            case .many(let resources): return .ok(try call.writer.page(resources, handledFilters: handledFilters))
            case .one(let resource?): return .ok(call.writer.single(resource))
            case .one(nil): throw Self.holdsNothing(name, call)
            }
        }
        add(.get, "\(owner)/{id}/relationships/\(name)") { call in
            switch try await related(call) {
            case .many(let resources): return .ok(try call.writer.linkagePage(resources))
            case .one(let resource?): return .ok(call.writer.linkage(resource))
            case .one(nil): throw Self.holdsNothing(name, call)
            }
        }
    }

    private static func holdsNothing(_ name: String, _ call: ConnectCall) -> ConnectAPIError {
        ConnectAPIError(
            status: .notFound, code: "NOT_FOUND", title: "The specified resource does not exist",
            detail: "'\(call.id.prefix(80))' has no \(name).")
    }
}

extension ConnectAPIError {
    /// A POST names what it relates to only in its body, so what it names and does not exist is Apple's 409
    /// `ENTITY_ERROR.RELATIONSHIP.INVALID`, not a 404 (which would say the path does not exist).
    func asRelationshipError(creating: Bool) -> ConnectAPIError {
        guard creating, status == .notFound else { return self }
        return .entity("ENTITY_ERROR.RELATIONSHIP.INVALID", detail, pointer: "/data/relationships")
    }

    /// A catalog rule's refusal as Apple answers it: an invalid value is 409 `ENTITY_ERROR.ATTRIBUTE.INVALID`, a
    /// conflict 409 `ENTITY_ERROR`, a missing thing 404 `NOT_FOUND`.
    init(catalogError error: KioskError) {
        let detail = [error.message, error.fix].compactMap { $0 }.joined(separator: " ")
        switch error.kind {
        case .notFound:
            self.init(
                status: .notFound, code: "NOT_FOUND", title: "The specified resource does not exist", detail: detail)
        case .forbidden, .unauthorized:
            self = .forbidden(detail)
        case .conflict:
            self = .entity("ENTITY_ERROR", detail)
        case .invalidInput, .tooLarge:
            self = .entity("ENTITY_ERROR.ATTRIBUTE.INVALID", detail)
        case .unavailable:
            self.init(
                status: .serviceUnavailable, code: "UNEXPECTED_ERROR", title: "The service is unavailable.",
                detail: detail)
        }
    }
}
