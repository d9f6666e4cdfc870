/// The operations an OpenAPI document's `paths:` section describes, as `METHOD /path/{parameter}` (the form
/// Hummingbird's router lists its routes in), read from the YAML layout Kiosk's documents use: paths indented two
/// spaces under `paths:`, their methods four.
///
/// ```swift
/// let described = openAPIOperations(in: try String(contentsOf: file, encoding: .utf8))
/// #expect(Set(store.built.routes) == described)
/// ```
public func openAPIOperations(in document: String) -> Set<String> {
    let methods: Set<String> = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
    var operations: Set<String> = []
    var inPaths = false
    var path: String?
    for line in document.split(separator: "\n", omittingEmptySubsequences: false) {
        let content = line.drop { $0 == " " }
        guard !content.isEmpty, !content.hasPrefix("#") else { continue }
        let indent = line.count - content.count
        if indent == 0 {
            inPaths = content == "paths:"
            continue
        }
        guard inPaths, content.hasSuffix(":") else { continue }
        let key = String(content.dropLast())
        if indent == 2 {
            path = key
        } else if indent == 4, let path, methods.contains(key) {
            operations.insert("\(key.uppercased()) \(path)")
        }
    }
    return operations
}
