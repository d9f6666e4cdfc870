import Foundation
import KioskProtocol
import KioskTestSupport
import KioskTesting
import Testing

/// The merchant publishes its contract at `GET /openapi.yaml`; it names every route, is valid OpenAPI 3.1, and its
/// schemas say exactly which fields the running merchant's answers carry.
@Suite struct MerchantOpenAPIContractTests {

    static var file: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/KioskMerchant/Resources/merchant-openapi.yaml")
    }

    /// Every route the merchant mounts, as the contract templates it, with its method. Built from `MerchantPaths`,
    /// so a renamed path fails here.
    static var routes: [(path: String, method: String)] {
        let productList = MerchantPaths.productList(bundleId: "{bundleId}", version: 1)
        return [
            ("/health", "get"), ("/metrics", "get"), ("/openapi.yaml", "get"),
            (String(productList[..<(productList.lastIndex(of: "/") ?? productList.endIndex)]) + "/{list}", "get"),
            (MerchantPaths.orders, "post"),
            (MerchantPaths.order("{orderId}"), "get"),
            (MerchantPaths.transactions, "post"),
            (MerchantPaths.entitlements, "get"),
            (MerchantPaths.explain, "get"),
            (MerchantPaths.spend(balance: "{balance}"), "post"),
            (MerchantPaths.content(productId: "{productId}"), "get"),
            (MerchantPaths.content(productId: "{productId}") + "/files/{path}", "get"),
            (MerchantPaths.notifications, "post"),
            (MerchantPaths.adminEntitlements(userId: "{userId}"), "get"),
            (MerchantPaths.adminExplain(userId: "{userId}"), "get"),
            (MerchantPaths.adminProbe(appAccountToken: "{appAccountToken}"), "get"),
            (MerchantPaths.adminReconcile, "post"),
            (MerchantPaths.adminTokens, "post"),
        ]
    }

    /// The running merchant serves the contract, and it describes exactly the routes its router serves, each with
    /// its method; `MerchantPaths` (what KioskKit's `MerchantClient` calls) names the same routes.
    @Test func servedContractNamesEveryRoute() async throws {
        try await MerchantShop.with(.sqlite) { shop in
            try await shop.withMerchant(receivesNotifications: false) { merchant in
                let answer = try await merchant.request(.GET, "/openapi.yaml")
                #expect(answer.status == 200)
                #expect(answer.header("Content-Type")?.hasPrefix("application/yaml") == true)
                #expect(answer.text.hasPrefix("openapi: 3.1"))
                let source = try Data(contentsOf: Self.file)
                #expect(answer.body == source, "the served document is the source file")

                // A trailing `**` (a content file's path, which may hold slashes) is one parameter to OpenAPI.
                let served = Set(merchant.built.routes.map { $0.hasSuffix("/**") ? $0.dropLast(2) + "{path}" : $0 })
                let described = openAPIOperations(in: answer.text)
                #expect(served.count >= 16, "the router lists its routes: \(served.sorted())")
                #expect(served.subtracting(described).sorted() == [], "routes the contract does not describe")
                #expect(described.subtracting(served).sorted() == [], "described operations no route serves")
                let named = Set(Self.routes.map { "\($0.method.uppercased()) \($0.path)" })
                #expect(named == served, "MerchantPaths and the router disagree")
                for version in [1, 2] {
                    let name = try #require(
                        MerchantPaths.productList(bundleId: "x", version: version).split(separator: "/").last)
                    #expect(answer.text.contains(name), "the list parameter does not name \(name)")
                }
            }
        }
    }

    /// The contract is a valid OpenAPI 3.1 document (checked with openapi-spec-validator from PyPI).
    @Test(
        .enabled(
            if: TestEnvironment.runs(.python),
            "set KIOSK_TEST_PYTHON to a python with openapi-spec-validator (.ci/run does)"))
    func contractIsValidOpenAPI() async throws {
        let (status, output) = try await runProcess(
            try TestEnvironment.require(.python), ["-m", "openapi_spec_validator", Self.file.path])
        #expect(status == 0, "\(output)")
    }

    /// Real answers carry exactly the fields their schemas require (plus the optional ones that apply), with the
    /// types, formats and enum values the schemas give: a product list, an order before and after delivery, a
    /// refused delivery and a missing token, a delivery, entitlements with an entitlement and a balance, an
    /// explanation and an admin-issued token.
    @Test func answersMatchTheSchemas() async throws {
        let contract = Contract(try String(contentsOf: Self.file, encoding: .utf8))
        try await MerchantShop.with(.sqlite) { shop in
            try await shop.withMerchant(receivesNotifications: false) { merchant in
                let v1 = try await merchant.request(
                    .GET, MerchantPaths.productList(bundleId: MerchantShop.bundleId, version: 1))
                #expect(v1.status == 200)
                #expect(
                    (try JSONSerialization.jsonObject(with: v1.body) as? [Any])?.allSatisfy { $0 is String } == true)
                let v2 = try await merchant.request(
                    .GET, MerchantPaths.productList(bundleId: MerchantShop.bundleId, version: 2))
                #expect(v2.status == 200)
                contract.expect(v2.json, is: "MerchantProductList")
                for entry in v2.json["products"] as? [[String: Any]] ?? [] {
                    // Coins credit a balance; every other product of the shop unlocks an entitlement.
                    let coins = entry["productId"] as? String == MerchantShop.coins
                    contract.expect(
                        entry, is: "MerchantProductListEntry", with: coins ? ["balance", "amount"] : ["entitlement"])
                }

                let alice = merchant.userToken("alice")
                let created = try await merchant.request(
                    .POST, MerchantPaths.orders, json: ["productId": MerchantShop.coins], token: alice)
                try MerchantShop.expect(201, created)
                contract.expect(created.json, is: "MerchantOrder")
                let order = try created.decode(MerchantOrder.self)

                let refused = try await merchant.deliver("not-a-jws", for: "alice")
                expectRefused(refused, 400, "malformed_signed_data", field: "signedTransaction")
                contract.expect(refused.json, is: "Error")
                contract.expect(refused.json["error"], is: "ErrorDetail", with: ["field", "fix"])
                #expect(contract.text.contains("`malformed_signed_data`"), "the contract names the refusal's code")
                let anonymous = try await merchant.request(.GET, MerchantPaths.entitlements)
                expectRefused(anonymous, 401, "missing_user_token", field: "Authorization")
                #expect(anonymous.header("WWW-Authenticate") == "Bearer realm=\"kiosk-merchant\"")
                contract.expect(anonymous.json["error"], is: "ErrorDetail", with: ["field", "fix"])
                #expect(contract.text.contains("`missing_user_token`"))

                let device = try await shop.device()
                let coins = try await shop.buy(MerchantShop.coins, token: order.appAccountToken, on: device)
                let removeAds = try await shop.buy(MerchantShop.removeAds, token: nil, on: device)
                await device.close()
                let delivered = try await merchant.deliver(
                    coins.jwsRepresentation, orderId: order.orderId, for: "alice")
                try MerchantShop.expect(200, delivered)
                contract.expect(delivered.json, is: "MerchantDeliveryResponse")
                let deliveries = delivered.json["deliveries"] as? [[String: Any]] ?? []
                #expect(deliveries.count == 1)
                contract.expect(deliveries.first, is: "MerchantDelivery", with: ["orderId"])
                try MerchantShop.expect(200, try await merchant.deliver(removeAds.jwsRepresentation, for: "alice"))

                let stored = try await merchant.request(.GET, MerchantPaths.order(order.orderId), token: alice)
                contract.expect(stored.json, is: "MerchantOrder", with: ["transactionId"])
                #expect(stored.json["state"] as? String == "delivered")

                let owned = try await merchant.request(.GET, MerchantPaths.entitlements, token: alice)
                contract.expect(owned.json, is: "MerchantEntitlements")
                let entitlements = owned.json["entitlements"] as? [[String: Any]] ?? []
                let balances = owned.json["balances"] as? [[String: Any]] ?? []
                #expect(entitlements.count == 1 && balances.count == 1, "\(owned.text)")
                // A non-consumable's entitlement neither expires nor renews: only the required fields.
                contract.expect(entitlements.first, is: "MerchantEntitlement")
                contract.expect(balances.first, is: "MerchantBalance")

                let spent = try await merchant.request(
                    .POST, MerchantPaths.spend(balance: "coins"), json: ["amount": 10, "idempotencyKey": "k1"],
                    token: alice)
                contract.expect(spent.json, is: "MerchantSpendResponse")

                let explained = try await merchant.request(.GET, MerchantPaths.explain, token: alice)
                contract.expect(explained.json, is: "MerchantExplanation")
                let history = explained.json["history"] as? [[String: Any]] ?? []
                #expect(history.map { $0["kind"] as? String } == ["granted", "granted", "spent"], "\(history)")
                for entry in history.prefix(2) {
                    contract.expect(entry, is: "MerchantHistoryEntry", with: ["transactionId", "productId"])
                }
                contract.expect(history.last, is: "MerchantHistoryEntry")
                let admin = try await merchant.request(.GET, MerchantPaths.adminEntitlements(userId: "alice"))
                contract.expect(admin.json, is: "MerchantEntitlements")

                let token = try await merchant.request(.POST, MerchantPaths.adminTokens, json: ["userId": "bob"])
                #expect(token.status == 200)
                contract.expect(token.json, is: "MerchantTokenResponse")
                #expect((token.json["token"] as? String)?.hasPrefix("kmu1.") == true)
            }
        }
    }
}

/// What these tests read of the contract, without a YAML library. It relies on the layout the file keeps: path
/// keys at indent 2 with their methods at indent 4; schemas under `components/schemas` at indent 4, each with
/// `required: [a, b]` on one line at indent 6 and its property names at indent 8 under `properties:`, whose
/// `type`, `format` and `enum: [a, b]` are at indent 10.
struct Contract {
    struct Property {
        var type: String?
        var format: String?
        var values: [String]?
        var reference: Bool = false
    }

    struct Schema {
        var required: Set<String> = []
        var properties: [String: Property] = [:]
    }

    let text: String
    /// Each path and its methods.
    var paths: [String: Set<String>] = [:]
    var schemas: [String: Schema] = [:]

    init(_ text: String) {
        self.text = text
        var section = ""
        var path: String?
        var schema: String?
        var property: String?
        var inProperties = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let content = line.drop { $0 == " " }
            guard !content.isEmpty, !content.hasPrefix("#") else { continue }
            let indent = line.count - content.count
            if indent == 0 { section = String(content) }
            if section == "paths:" {
                if indent == 2, content.hasSuffix(":") {
                    let key = String(content.dropLast())
                    path = key
                    paths[key] = []
                } else if indent == 4, let path, content.hasSuffix(":"), content != "parameters:" {
                    paths[path]?.insert(String(content.dropLast()))
                }
            }
            guard section == "components:" else { continue }
            if indent == 2 {
                // Only `schemas:` is read; "" until its first schema.
                schema = content == "schemas:" ? "" : nil
                property = nil
                inProperties = false
                continue
            }
            guard schema != nil else { continue }
            let (key, value) = Self.split(content)
            switch indent {
            case 4:
                schema = key
                schemas[key] = Schema()
                inProperties = false
            case 6:
                inProperties = key == "properties"
                if key == "required", let schema { schemas[schema]?.required = Set(Self.list(value)) }
            case 8 where inProperties:
                property = key
                if let schema { schemas[schema]?.properties[key] = Property() }
            case 10 where inProperties:
                guard let schema, let property else { break }
                switch key {
                case "type": schemas[schema]?.properties[property]?.type = value
                case "format": schemas[schema]?.properties[property]?.format = value
                case "enum": schemas[schema]?.properties[property]?.values = Self.list(value)
                case "const": schemas[schema]?.properties[property]?.values = [value]
                case "$ref": schemas[schema]?.properties[property]?.reference = true
                default: break
                }
            default:
                break
            }
        }
    }

    /// Expects `json` to be an object with exactly the schema's required fields plus `optional`, each of the
    /// type, format and value the schema gives.
    func expect(
        _ json: Any?, is name: String, with optional: Set<String> = [],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let schema = schemas[name] else {
            Issue.record("merchant-openapi.yaml has no schema \(name)", sourceLocation: sourceLocation)
            return
        }
        #expect(!schema.required.isEmpty, "\(name) requires nothing", sourceLocation: sourceLocation)
        guard let object = json as? [String: Any] else {
            Issue.record("not a JSON object for \(name): \(String(describing: json))", sourceLocation: sourceLocation)
            return
        }
        #expect(
            Set(object.keys) == schema.required.union(optional),
            "\(name): the answer has \(object.keys.sorted()); the schema requires \(schema.required.sorted())",
            sourceLocation: sourceLocation)
        for (key, value) in object {
            guard let property = schema.properties[key] else {
                Issue.record("\(name) has no property \(key)", sourceLocation: sourceLocation)
                continue
            }
            #expect(
                Self.matches(value, property), "\(name).\(key) = \(value) does not match \(property)",
                sourceLocation: sourceLocation)
        }
    }

    private static func matches(_ value: Any, _ property: Property) -> Bool {
        if property.reference { return value is [String: Any] }
        let typed: Bool =
            switch property.type {
            case "string": value is String
            case "integer": value is Int || value is Int64
            case "boolean": value is Bool
            case "array": value is [Any]
            case "object": value is [String: Any]
            default: false
            }
        guard typed else { return false }
        if let values = property.values, !values.contains("\(value)") { return false }
        switch property.format {
        case "date-time": return (value as? String).flatMap(ISO8601DateFormatter().date(from:)) != nil
        case "uuid": return (value as? String).flatMap(UUID.init(uuidString:)) != nil
        default: return true
        }
    }

    private static func split(_ content: Substring) -> (String, String) {
        guard let colon = content.firstIndex(of: ":") else { return (String(content), "") }
        return (
            String(content[..<colon]),
            content[content.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        )
    }

    /// `[a, b, 'c']` as its items.
    private static func list(_ value: String) -> [String] {
        value.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).split(separator: ",")
            .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " '\"")) }
    }
}
