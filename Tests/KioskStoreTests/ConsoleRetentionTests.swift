import Foundation
import KioskCore
import KioskTesting
import Testing

/// The console's Retention page over HTTP: what an app uploaded through Apple's Retention Messaging API, with its
/// review state; App Review's approve and reject forms; the images served for review; retention offers; what a
/// subscriber who tapped Cancel saw. Text from the developer is escaped.
@Suite struct ConsoleRetentionTests {
    @Test func anOperatorReviewsUploadsAndSeesCancellations() async throws {
        try await withTestStore { store in
            try await store.prepareSubscriptionCatalog()
            let key = try await store.createServerAPIKey()
            let image = RetentionMessagingTests.image
            let message = RetentionMessagingTests.message
            #expect(
                try await store.inApps(
                    .PUT, "/inApps/v1/messaging/image/\(image)", key: key, body: TestPNG.fullSize, sandbox: false
                ).status == 200)
            #expect(
                try await store.serverAPI(
                    .PUT, "/inApps/v1/messaging/message/\(message)", key: key,
                    json: TestStore.retentionMessage(header: "<b>Stay</b>", image: image), sandbox: false
                ).status == 200)

            let visitor = ConsoleTests.Visitor(store)
            _ = try await visitor.signIn()
            let path = "/console/apps/\(TestStore.bundleId)/retention?environment=production"
            let page = try await visitor.get(path)
            #expect(page.status == 200, "\(page.text)")
            #expect(page.text.contains(message))
            #expect(page.text.contains("&lt;b&gt;Stay&lt;/b&gt;"), "developer text is escaped")
            #expect(!page.text.contains("<b>Stay</b>"))
            #expect(page.text.contains("PENDING"))
            #expect(page.text.contains("/console/apps/\(TestStore.bundleId)/retention/images/production/\(image)"))
            let png = try await visitor.get("/console/apps/\(TestStore.bundleId)/retention/images/production/\(image)")
            #expect(png.status == 200 && png.headers.first(name: "Content-Type") == "image/png")

            let csrf = try await visitor.csrf(path)
            let approved = try await visitor.post(
                "/console/apps/\(TestStore.bundleId)/retention/review",
                "csrf=\(csrf)&environment=production&kind=message&identifier=\(message)&state=APPROVED")
            #expect(approved.status == 303 || approved.status == 302, "\(approved.text)")
            #expect(approved.location == "/console/apps/\(TestStore.bundleId)/retention?environment=production")
            let rejected = try await visitor.post(
                "/console/apps/\(TestStore.bundleId)/retention/review",
                "csrf=\(csrf)&environment=production&kind=image&identifier=\(image)&state=REJECTED")
            #expect(rejected.status == 303 || rejected.status == 302, "\(rejected.text)")
            let list = try await store.serverAPI(.GET, "/inApps/v1/messaging/message/list", key: key, sandbox: false)
            #expect(
                (list.json["messageIdentifiers"] as? [[String: String]])?.first?["messageState"] == "APPROVED")
            let images = try await store.serverAPI(.GET, "/inApps/v1/messaging/image/list", key: key, sandbox: false)
            #expect((images.json["imageIdentifiers"] as? [[String: String]])?.first?["imageState"] == "REJECTED")
            let refused = try await visitor.post(
                "/console/apps/\(TestStore.bundleId)/retention/review",
                "csrf=\(csrf)&environment=production&kind=message&identifier=\(message)&state=MAYBE")
            #expect(refused.status == 400 && refused.text.contains("is not a review state"), "\(refused.text)")

            let offer = try await visitor.post(
                "/console/apps/\(TestStore.bundleId)/retention/offers",
                "csrf=\(csrf)&productId=\(TestStore.monthly)&identifier=stay&referenceName=Stay&paymentMode=free_trial"
                    + "&period=P1M&periods=1")
            #expect(offer.status == 303 || offer.status == 302, "\(offer.text)")
            let sandboxPage = try await visitor.get("/console/apps/\(TestStore.bundleId)/retention")
            #expect(sandboxPage.text.contains("free_trial, 1 × P1M"), "\(sandboxPage.text)")

            let bought = try await store.pay(TestStore.monthly, token: try await store.signIn())
            let original = try #require(bought.transactionId)
            let cancelled = try await store.request(
                .POST, "/sandbox/test/v1/apps/\(TestStore.bundleId)/subscriptions/\(original)",
                json: ["action": "auto-renew-off"], token: .some(store.adminToken))
            #expect(cancelled.status == 200, "\(cancelled.text)")
            let afterCancel = try await visitor.get("/console/apps/\(TestStore.bundleId)/retention")
            #expect(afterCancel.text.contains("retention-offer"), "\(afterCancel.text)")
            #expect(afterCancel.text.contains("cancelled"), "\(afterCancel.text)")
            #expect(
                afterCancel.text.contains("the retention offer stay of \(TestStore.monthly)"), "\(afterCancel.text)")
        }
    }
}
