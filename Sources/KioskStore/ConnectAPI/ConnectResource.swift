import Foundation
import KioskCore

/// A JSON:API resource object as the App Store Connect API writes it: `type`, `id`, `attributes`, the
/// relationships Kiosk has, and `links.self`.
struct ConnectResource: Sendable {
    let type: String
    let id: String
    /// Attribute values by name; an absent one is not written.
    var attributes: [String: JSONValue]
    var relationships: [ConnectRelationship]

    init(type: String, id: String, attributes: [String: JSONValue?], relationships: [ConnectRelationship] = []) {
        self.type = type
        self.id = id
        self.attributes = attributes.compactMapValues { $0 }
        self.relationships = relationships
    }

    /// `{"type", "id"}`: how a relationship points at this resource.
    var linkage: JSONValue { .object(["type": .string(type), "id": .string(id)]) }

    /// The API's path of this resource: `/v1/subscriptions/6400-com.example.pro`.
    var path: String { "\(Self.versionPrefix(of: type))/\(type)/\(id)" }

    /// `/v2` for the resources Apple moved to version 2 (in-app purchases), `/v1` for the rest.
    static func versionPrefix(of type: String) -> String { type == "inAppPurchases" ? "/v2" : "/v1" }
}

extension [ConnectResource] {
    /// The resource whose id is `id`; Apple's 404 for a `type` that does not exist otherwise.
    func named(_ id: String, type: String) throws -> ConnectResource {
        guard let resource = first(where: { $0.id == id }) else { throw ConnectAPIError.notFound(type, id) }
        return resource
    }
}

/// A relationship of a resource and the resources it holds, built with the resource.
struct ConnectRelationship: Sendable {
    enum Related: Sendable {
        case one(ConnectResource?)
        case many([ConnectResource])
    }

    let name: String
    let related: Related
}

/// Writes JSON:API documents: sparse fieldsets (`fields[type]`), `include` with `limit[relationship]`, links, and
/// cursor paging (`limit`, `cursor`, `meta.paging`).
struct ConnectDocumentWriter {
    let query: ConnectQuery
    /// The scheme and host requests came to, such as `http://127.0.0.1:8080`; links are absolute, as Apple's.
    let base: String
    /// The request's path and query, for `links.self`.
    let selfLink: String

    /// `{"data": resource, "included": […], "links": {"self"}}`.
    func single(_ resource: ConnectResource) -> JSONValue {
        var included = IncludedResources()
        var document: [String: JSONValue] = [
            "data": render(resource, included: &included), "links": .object(["self": .string(base + selfLink)]),
        ]
        if !included.resources.isEmpty { document["included"] = .array(included.resources) }
        return .object(document)
    }

    /// One page of `resources` (all of them, in order), with `links.next` and `meta.paging`; `filter[…]` and
    /// `sort` apply first, except the filters named in `handledFilters`, which the caller applied.
    func page(_ resources: [ConnectResource], handledFilters: Set<String> = []) throws -> JSONValue {
        let (page, paging, links) = try paged(selected(resources, handledFilters: handledFilters))
        var included = IncludedResources()
        var document: [String: JSONValue] = [
            "data": .array(page.map { render($0, included: &included) }), "links": links, "meta": paging,
        ]
        if !included.resources.isEmpty { document["included"] = .array(included.resources) }
        return .object(document)
    }

    /// One page of linkages (`{"type", "id"}`), for `…/relationships/name`.
    func linkagePage(_ resources: [ConnectResource]) throws -> JSONValue {
        let (page, paging, links) = try paged(selected(resources, handledFilters: []))
        return .object(["data": .array(page.map(\.linkage)), "links": links, "meta": paging])
    }

    /// `{"data": {"type", "id"}, "links": {"self"}}`, for a to-one `…/relationships/name`.
    func linkage(_ resource: ConnectResource) -> JSONValue {
        .object(["data": resource.linkage, "links": .object(["self": .string(base + selfLink)])])
    }

    /// The resources `filter[…]` keeps, in the order `sort` asks. `filter[name]` keeps those whose attribute (or,
    /// for `filter[id]`, id; for a relationship, the related resource's id) is one of the values;
    /// `filter[relationship.name]` those with a related resource whose attribute is. A resource without that
    /// attribute or relationship (Kiosk has no app versions) is not kept.
    private func selected(_ resources: [ConnectResource], handledFilters: Set<String>) -> [ConnectResource] {
        var kept = resources
        for (parameter, values) in query.filters where !handledFilters.contains(parameter) {
            let wanted = Set(values)
            let path = parameter.split(separator: ".", maxSplits: 1).map(String.init)
            kept = kept.filter { resource in
                if path.count == 2 {
                    return Self.related(resource, path[0]).contains {
                        Self.text(of: $0, path[1]).map(wanted.contains) ?? false
                    }
                }
                if resource.relationships.contains(where: { $0.name == path[0] }) {
                    return Self.related(resource, path[0]).contains { wanted.contains($0.id) }
                }
                return Self.text(of: resource, path[0]).map(wanted.contains) ?? false
            }
        }
        let keys = (query.list("sort") ?? []).map { key in
            key.hasPrefix("-") ? (name: String(key.dropFirst()), descending: true) : (name: key, descending: false)
        }
        if !keys.isEmpty {
            kept.sort { first, second in
                for key in keys {
                    let (a, b) = (Self.text(of: first, key.name) ?? "", Self.text(of: second, key.name) ?? "")
                    if a != b { return key.descending ? a > b : a < b }
                }
                return false
            }
        }
        return kept
    }

    /// The resources the relationship `name` holds; none when the resource has no such relationship.
    private static func related(_ resource: ConnectResource, _ name: String) -> [ConnectResource] {
        switch resource.relationships.first(where: { $0.name == name })?.related {
        case .one(let one?): [one]
        case .many(let many): many
        case .one(nil), nil: []
        }
    }

    /// An attribute (or the id) as text, for filtering and sorting.
    private static func text(of resource: ConnectResource, _ name: String) -> String? {
        if name == "id" { return resource.id }
        switch resource.attributes[name] {
        case .string(let text): return text
        case .integer(let number): return String(number)
        case .bool(let flag): return String(flag)
        default: return nil
        }
    }

    private func paged(_ resources: [ConnectResource]) throws -> ([ConnectResource], JSONValue, JSONValue) {
        let offset = try query.offset()
        let limit = query.limit
        let page = Array(resources.dropFirst(offset).prefix(limit))
        var paging: [String: JSONValue] = ["total": .integer(resources.count), "limit": .integer(limit)]
        var links: [String: JSONValue] = ["self": .string(base + selfLink)]
        if offset + limit < resources.count {
            let cursor = ConnectQuery.cursor(offset: offset + limit)
            paging["nextCursor"] = .string(cursor)
            links["next"] = .string(base + Self.replacingCursor(in: selfLink, with: cursor))
        }
        if offset > 0 { links["first"] = .string(base + Self.replacingCursor(in: selfLink, with: nil)) }
        return (page, .object(["paging": .object(paging)]), .object(links))
    }

    /// `path?…&cursor=…` with the cursor replaced (or removed, for nil).
    private static func replacingCursor(in link: String, with cursor: String?) -> String {
        var components = URLComponents(string: link) ?? URLComponents()
        var items = (components.queryItems ?? []).filter { $0.name != "cursor" }
        if let cursor { items.append(URLQueryItem(name: "cursor", value: cursor)) }
        components.queryItems = items.isEmpty ? nil : items
        return components.string ?? link
    }

    /// The resource as `fields[type]` asks, adding what `include` names to `included`.
    private func render(_ resource: ConnectResource, included: inout IncludedResources) -> JSONValue {
        let fields = query.list("fields[\(resource.type)]").map(Set.init)
        var object: [String: JSONValue] = [
            "type": .string(resource.type), "id": .string(resource.id),
            "links": .object(["self": .string(base + resource.path)]),
        ]
        let attributes = resource.attributes.filter { fields?.contains($0.key) ?? true }
        if !attributes.isEmpty { object["attributes"] = .object(attributes) }
        var relationships: [String: JSONValue] = [:]
        for relationship in resource.relationships where fields?.contains(relationship.name) ?? true {
            var entry: [String: JSONValue] = [
                "links": .object([
                    "self": .string(base + resource.path + "/relationships/" + relationship.name),
                    "related": .string(base + resource.path + "/" + relationship.name),
                ])
            ]
            if query.includes(relationship.name) {
                switch relationship.related {
                case .one(let related):
                    entry["data"] = related?.linkage ?? .null
                    if let related { included.add(renderIncluded(related)) }
                case .many(let related):
                    let limit = query.includedLimit(relationship.name)
                    let shown = related.prefix(limit)
                    entry["data"] = .array(shown.map(\.linkage))
                    entry["meta"] = .object([
                        "paging": .object(["total": .integer(related.count), "limit": .integer(limit)])
                    ])
                    for item in shown { included.add(renderIncluded(item)) }
                }
            }
            relationships[relationship.name] = .object(entry)
        }
        if !relationships.isEmpty { object["relationships"] = .object(relationships) }
        return .object(object)
    }

    /// An included resource: its fields as `fields[type]` asks, its relationships as links only.
    private func renderIncluded(_ resource: ConnectResource) -> JSONValue {
        var plain = resource
        plain.relationships = []
        var ignored = IncludedResources()
        return render(plain, included: &ignored)
    }

    /// `included`, each resource once.
    private struct IncludedResources {
        private(set) var resources: [JSONValue] = []
        private var seen: Set<String> = []

        mutating func add(_ resource: JSONValue) {
            let key = "\(resource["type"]?.stringValue ?? "")/\(resource["id"]?.stringValue ?? "")"
            if seen.insert(key).inserted { resources.append(resource) }
        }
    }
}
