import Foundation
import KioskTestSupport
import KioskTesting
import Testing

/// schemathesis (PyPI) fuzzes the merchant from its own OpenAPI document, once with the admin token and once as a
/// user, against a merchant for a store with the shop's products: no answer may be a server error, each must have a
/// status, content type and body the document declares, and the merchant must still answer `/health` afterwards.
@Suite(
    .enabled(
        if: TestEnvironment.runs(.python),
        "set KIOSK_TEST_PYTHON to a python with schemathesis (.ci/run installs .ci/requirements.txt)"))
struct MerchantFuzzTests {
    @Test func schemathesisFindsEveryAnswerAsTheDocumentSaysIt() async throws {
        try await MerchantShop.with(.sqlite) { shop in
            try await shop.withMerchant(receivesNotifications: false) { merchant in
                var total = 0
                for token in [merchant.adminToken, merchant.userToken("alice")] {
                    let run = try await Schemathesis.run(
                        document: merchant.baseURL + "/openapi.yaml", headers: ["Authorization": "Bearer \(token)"])
                    #expect(run.status == 0, "\(run.output)")
                    let generated = try #require(run.generated, "\(run.output)")
                    #expect(generated >= 400, "\(run.output)")
                    total += generated
                }
                print("MerchantFuzzTests: schemathesis sent \(total) requests to the merchant, every answer conformed")
                let health = try await merchant.request(.GET, "/health")
                #expect(health.status == 200, "\(health.text)")
            }
        }
    }
}
