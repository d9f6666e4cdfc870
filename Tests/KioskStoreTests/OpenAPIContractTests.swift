import Foundation
import KioskProtocol
import KioskStore
import KioskTestSupport
import KioskTesting
import Testing

@Suite struct OpenAPIContractTests {
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/KioskStore/Resources/openapi.yaml")

    /// Apple's wire, which Apple documents and `openapi.yaml` leaves to Apple: `verifyReceipt` (a POST; other
    /// methods answer its status 21000) and the App Store Server API's endpoints, in production and under `/sandbox`,
    /// and the App Store Connect API's operations.
    static let appleOperations: Set<String> = {
        let verifyReceipt = ["GET", "POST", "PUT", "DELETE", "PATCH"].map { "\($0) /verifyReceipt" }
        let serverAPI = [
            "GET /inApps/v1/transactions/{transactionId}", "GET /inApps/v1/history/{transactionId}",
            "GET /inApps/v2/history/{transactionId}", "GET /inApps/v1/subscriptions/{transactionId}",
            "GET /inApps/v1/lookup/{orderId}", "POST /inApps/v1/notifications/test",
            "GET /inApps/v1/notifications/test/{testNotificationToken}", "POST /inApps/v1/notifications/history",
            "GET /inApps/v2/refund/lookup/{transactionId}", "PUT /inApps/v1/transactions/consumption/{transactionId}",
            "PUT /inApps/v2/transactions/consumption/{transactionId}",
            "PUT /inApps/v1/subscriptions/extend/{originalTransactionId}", "POST /inApps/v1/subscriptions/extend/mass",
            "GET /inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}",
            "PUT /inApps/v1/transactions/{transactionId}/appAccountToken",
            "GET /inApps/v1/transactions/appTransactions/{transactionId}",
            "POST /inApps/v1/transactions/{transactionId}/finish",
            // Apple's Retention Messaging API.
            "PUT /inApps/v1/messaging/image/{imageIdentifier}", "DELETE /inApps/v1/messaging/image/{imageIdentifier}",
            "GET /inApps/v1/messaging/image/list", "PUT /inApps/v1/messaging/message/{messageIdentifier}",
            "DELETE /inApps/v1/messaging/message/{messageIdentifier}", "GET /inApps/v1/messaging/message/list",
            "PUT /inApps/v1/messaging/default/{productId}/{locale}",
            "GET /inApps/v1/messaging/default/{productId}/{locale}",
            "DELETE /inApps/v1/messaging/default/{productId}/{locale}", "PUT /inApps/v1/messaging/realtime/url",
            "GET /inApps/v1/messaging/realtime/url", "DELETE /inApps/v1/messaging/realtime/url",
        ]
        let production = verifyReceipt + serverAPI
        // Apple serves the performance test in the sandbox only.
        let sandboxOnly = [
            "POST /sandbox/inApps/v1/messaging/performanceTest",
            "GET /sandbox/inApps/v1/messaging/performanceTest/result/{requestId}",
        ]
        // The App Store Connect API has a contract of its own (ConnectCatalogTests).
        let connectAPI = Array(ConnectContract.served.operations.keys)
        return Set(
            production + production.map { $0.replacingOccurrences(of: " /", with: " /sandbox/") } + sandboxOnly
                + connectAPI)
    }()

    /// The store serves its OpenAPI contract (the source file, byte for byte), and it describes exactly the routes
    /// the store's router serves beside Apple's wire, each with its method: a route added without its description,
    /// or a description left behind by a removed route, fails here; so does a route of Apple's that is missing. The
    /// console's pages are not part of the contract.
    @Test func servedContractDescribesExactlyTheRoutes() async throws {
        try await withTestStore { store in
            let answer = try await store.request(.GET, "/openapi.yaml")
            #expect(answer.status == 200)
            #expect(answer.text.hasPrefix("openapi: 3.1"))
            let source = try Data(contentsOf: Self.file)
            #expect(answer.body == source, "the served document is the source file")

            // A trailing `**` (the OCSP GET, whose base64 request may hold slashes) is one parameter to OpenAPI.
            let served = Set(
                store.built.routes.map { $0.hasSuffix("/**") ? $0.dropLast(2) + "{request}" : $0 })
            // The console's HTML pages (and `/`, which redirects to it) are for people, not an API: ConsoleTests and
            // ConsoleBrowserTests cover them.
            let kiosks = served.subtracting(Self.appleOperations).filter { route in
                !route.contains(" /console") && route != "GET /"
            }
            let described = openAPIOperations(in: answer.text)
            #expect(kiosks.count > 60, "the router lists its routes: \(served.sorted())")
            #expect(kiosks.subtracting(described).sorted() == [], "routes openapi.yaml does not describe")
            #expect(described.subtracting(kiosks).sorted() == [], "described operations no route serves")
            #expect(Self.appleOperations.subtracting(served).sorted() == [], "Apple's endpoints the store lacks")
        }
    }

    /// The routes every client builds its paths from (`AdminRoutes`, `TestControlRoutes`) are exactly the console
    /// API's and the test controls' routes the store serves: a route the store drops, or one a client lists that
    /// nobody serves, fails here.
    @Test func sharedRoutesAreTheServedOnes() async throws {
        try await withTestStore { store in
            let bases = [KioskRoute.API.admin.rawValue + "/", KioskRoute.API.testControls.rawValue + "/"]
            let served = Set(
                store.built.routes.compactMap { route -> String? in
                    let path = String(route.split(separator: " ", maxSplits: 1)[1])
                    return bases.contains(where: path.hasPrefix) ? path : nil
                })
            let shared = (AdminRoutes.all + TestControlRoutes.all).map { route in
                route.description.split(separator: "/", omittingEmptySubsequences: false).map { segment in
                    segment.hasPrefix(":") ? "{\(segment.dropFirst())}" : String(segment)
                }.joined(separator: "/")
            }
            #expect(Set(shared).count == shared.count, "a route listed twice: \(shared.sorted())")
            #expect(Set(shared).subtracting(served).sorted() == [], "shared routes the store does not serve")
            #expect(served.subtracting(shared).sorted() == [], "served routes missing from the shared lists")
        }
    }

    /// A route's path escapes each value as one segment, and its query each name and value.
    @Test func routePathsEscapeTheirValues() {
        #expect(
            AdminRoutes.product.path("com.example.app", "a b/c") == "/admin/v1/apps/com.example.app/products/a%20b%2Fc")
        #expect(
            TestControlRoutes.transactions.path("com.example.app", query: ["tester": "a+b@example.com", "x": "1&2"])
                == "/sandbox/test/v1/apps/com.example.app/transactions?tester=a%2Bb@example.com&x=1%262")
        #expect(TestControlRoutes.clock.path() == "/sandbox/test/v1/clock")
    }

    /// An action the transaction test controls do not know is a clear 404, not a bare route miss.
    @Test func unknownTransactionActionIsNamed() async throws {
        try await withTestStore { store in
            try await store.createApp()
            let answer = try await store.request(
                .POST, "/sandbox/test/v1/apps/com.example.app/transactions/2000000000000001/refnud", json: [:],
                token: .some(store.adminToken))
            #expect(answer.status == 404, "\(answer.text)")
            #expect(answer.errorCode == "unknown_action" && answer.errorField == "action", "\(answer.text)")
            #expect(answer.errorFix?.contains("request-refund") == true, "\(answer.text)")
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
}
