import Foundation
import KioskTestSupport
import KioskTesting
import Testing

/// schemathesis (PyPI) fuzzes the store from its own OpenAPI document: requests built from every operation's schema,
/// its examples and their edge cases (out-of-range numbers, huge and odd strings, wrong types, missing fields), with
/// the admin token, against a store holding an app, products, a tester and purchases. No answer may be a server
/// error, each must have a status, content type and body the document declares, and the store must still answer
/// `/health` afterwards.
@Suite(
    .enabled(
        if: TestEnvironment.runs(.python),
        "set KIOSK_TEST_PYTHON to a python with schemathesis (.ci/run installs .ci/requirements.txt)"))
struct FuzzTests {
    @Test func schemathesisFindsEveryAnswerAsTheDocumentSaysIt() async throws {
        try await withTestStore { store in
            try await store.preparePurchaseCatalog()
            let token = try await store.signIn()
            #expect(try await store.pay(TestStore.coins, token: token).status == 200)
            // With the admin token everything but the client protocol and the arming of failures (which make client
            // calls answer 503 injected_failure on purpose); the OCSP POST takes DER
            // (application/ocsp-request), which schemathesis cannot generate. Then the client protocol, as a
            // signed-in tester, without the live updates streams: a stream it opens never ends (the store keeps it
            // alive), so each would hold a worker until its timeout; HostileInputTests covers their cursor.
            // (Apple's wire, which openapi.yaml leaves to Apple, has its own hostile-input tests.)
            var total = 0
            for (bearer, include, exclude, least) in [
                (store.adminToken, nil, "^/ocsp/\\{environment\\}$|storekit/v1/|/failures$", 2_000),
                (token, "storekit/v1/", "/updates$", 300),
            ] {
                let run = try await Schemathesis.run(
                    document: store.baseURL + "/openapi.yaml", headers: ["Authorization": "Bearer \(bearer)"],
                    includingPaths: include, excludingPaths: exclude)
                #expect(run.status == 0, "\(run.output)")
                let generated = try #require(run.generated, "\(run.output)")
                #expect(generated >= least, "\(run.output)")
                total += generated
            }
            print("FuzzTests: schemathesis sent \(total) requests to the store; every answer conformed")
            let health = try await store.request(.GET, "/health")
            #expect(health.status == 200, "\(health.text)")
        }
    }

    /// Apple's endpoints the store serves as Apple documents them (`Resources/AppleOpenAPI/apple-server-api.yaml`,
    /// written from Apple's documentation): `verifyReceipt` and the App Store Server API.
    static let appleDocument = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Resources/AppleOpenAPI/apple-server-api.yaml")

    /// Apple's document describes exactly the store's routes of `verifyReceipt` (the POST Apple documents) and the
    /// App Store Server API; the Retention Messaging API, another of Apple's APIs, has tests of its own.
    @Test func applesDocumentDescribesTheServedRoutes() async throws {
        let described = openAPIOperations(in: try String(contentsOf: Self.appleDocument, encoding: .utf8))
        let served = OpenAPIContractTests.appleOperations.filter {
            $0.contains(" /inApps/") && !$0.contains("/messaging/")
        }
        #expect(described.count == 18)
        #expect(described == served.union(["POST /verifyReceipt"]), "\(described.symmetricDifference(served))")
        try await withTestStore { store in
            let routes = Set(store.built.routes)
            #expect(described.subtracting(routes).sorted() == [], "described operations the store does not serve")
            let sandbox = Set(described.map { $0.replacingOccurrences(of: " /", with: " /sandbox/") })
            #expect(sandbox.subtracting(routes).sorted() == [], "operations the sandbox does not serve")
        }
    }

    /// schemathesis against the sandbox's `verifyReceipt` and App Store Server API from Apple's document, with a
    /// Server API token of the app, against a store with a purchase: no server error, and every answer's status,
    /// content type and body as Apple documents them. The per-key rate limit is lifted: it would answer 429s to a
    /// fuzzer, which is the limit working, not the endpoints.
    @Test func schemathesisFindsApplesEndpointsAsAppleDocumentsThem() async throws {
        try await withTestStore(serverAPIRequestsPerSecond: 1_000_000) { store in
            try await store.preparePurchaseCatalog()
            let token = try await store.signIn()
            #expect(try await store.pay(TestStore.coins, token: token).status == 200)
            let key = try await store.createServerAPIKey()
            let run = try await Schemathesis.run(
                document: Self.appleDocument.path,
                headers: ["Authorization": "Bearer \(try key.token(expiresIn: 1_200))"],
                baseURL: store.baseURL + "/sandbox")
            #expect(run.status == 0, "\(run.output)")
            let generated = try #require(run.generated, "\(run.output)")
            #expect(generated >= 300, "\(run.output)")
            print("FuzzTests: schemathesis sent \(generated) requests to Apple's endpoints; every answer conformed")
        }
    }

    /// schemathesis against the App Store Connect API's contract (Apple's own schemas), with an Admin team key: no
    /// server error, and every answer's status, content type and body as Apple's document declares them.
    @Test func schemathesisFindsEveryConnectAnswerAsApplesDocumentSaysIt() async throws {
        try await withTestStore { store in
            try await store.preparePurchaseCatalog()
            let created = try await store.request(.POST, "/admin/v1/api-keys", json: ["roles": ["ADMIN"]])
            let key = ConnectKey(
                id: try #require(created.json["keyId"] as? String),
                privateKeyPEM: try #require(created.json["privateKey"] as? String),
                issuer: try #require(created.json["issuerId"] as? String))
            let run = try await Schemathesis.run(
                document: store.baseURL + "/app-store-connect-openapi.json",
                headers: ["Authorization": "Bearer \(try key.token(now: Date(), lifetime: 1_200))"],
                baseURL: store.baseURL)
            #expect(run.status == 0, "\(run.output)")
            let generated = try #require(run.generated, "\(run.output)")
            #expect(generated >= 300, "\(run.output)")
            print("FuzzTests: schemathesis sent \(generated) App Store Connect API requests; every answer conformed")
        }
    }
}
