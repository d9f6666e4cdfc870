import Foundation
import KioskTestSupport
import KioskTesting
import Testing

@Suite struct OpenAPIContractTests {

    /// The store serves its OpenAPI contract, and the console, the client protocol in both environments and the
    /// sandbox test controls are described in it.
    @Test func servedContractNamesEveryRoute() async throws {
        try await withTestStore { store in
            let answer = try await store.request(.GET, "/openapi.yaml")
            #expect(answer.status == 200)
            #expect(answer.text.hasPrefix("openapi: 3.1"))
            for path in [
                "/admin/v1/apps:", "/admin/v1/apps/{bundleId}/products:", "/admin/v1/apps/{bundleId}/catalog:",
                "/admin/v1/testers:", "/admin/v1/agreements/paid-apps:", "/admin/v1/certificates/{environment}/root:",
                "/admin/v1/apps/{bundleId}/keys:", "/health:", "/metrics:",
                "/admin/v1/accounts:", "/admin/v1/accounts/{email}:",
                "/storekit/v1/sessions:", "/storekit/v1/payments:", "/storekit/v1/queue/{sequence}/finish:",
                "/storekit/v1/updates:", "/sandbox/storekit/v1/sessions:", "/sandbox/storekit/v1/payments:",
                "/sandbox/storekit/v1/updates:", "/sandbox/storekit/v1/restore:",
                "/sandbox/test/v1/apps/{bundleId}/purchases:",
                "/sandbox/test/v1/apps/{bundleId}/payments/{paymentId}/{decision}:",
                "/sandbox/test/v1/apps/{bundleId}/failures:",
                "/admin/v1/certificates/{environment}/revocations:", "/ocsp/{environment}:",
                "/ocsp/{environment}/{request}:",
            ] {
                // Paths are keys at the start of a line, so `/storekit/v1/…` cannot match inside `/sandbox/storekit/v1/…`.
                #expect(answer.text.contains("\n  " + path + "\n"), "openapi.yaml does not describe \(path)")
            }
        }
    }

    /// The contract is a valid OpenAPI 3.1 document (checked with openapi-spec-validator from PyPI).
    @Test(
        .enabled(
            if: TestEnvironment.runs(.python),
            "set KIOSK_TEST_PYTHON to a python with openapi-spec-validator (.ci/run does)"))
    func contractIsValidOpenAPI() async throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/KioskStore/Resources/openapi.yaml")
        let (status, output) = try await runProcess(
            try TestEnvironment.require(.python), ["-m", "openapi_spec_validator", file.path])
        #expect(status == 0, "\(output)")
    }
}
