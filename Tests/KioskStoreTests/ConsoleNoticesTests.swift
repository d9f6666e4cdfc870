import AsyncHTTPClient
import Foundation
import KioskCore
import KioskTesting
import NIOCore
import Testing

/// Every console action answers on the page it returns to: what was done in a notice at the top (shown once), and a
/// refusal drawn at the top of the form's own page with its status — never a dead-end page. Notices say what really
/// happened (a notification not sent is "not sent") and link to the console's own forms, not to the CLI.
@Suite struct ConsoleNoticesTests {
    static let customer = "/console/customers/sandbox/tester%40example.com"

    @Test func anActionsNoticeIsShownOnceOnThePageItReturnsTo() async throws {
        try await withTestStore { store in
            let visitor = ConsoleTests.Visitor(store)
            _ = try await visitor.signIn()
            let made = try await visitor.post(
                "/console/apps", "bundleId=com.example.notice&name=Notice&csrf=\(try await visitor.csrf())")
            #expect(made.status == 303 && made.location == "/console/apps/com.example.notice")
            #expect(visitor.noticeCookie != nil, "the notice rides the redirect in a cookie")

            let page = try await visitor.get("/console/apps/com.example.notice")
            Self.expectNotice(page, "Created the app Notice (com.example.notice).")
            #expect(visitor.noticeCookie == nil, "the page that showed the notice drops its cookie")
            let again = try await visitor.get("/console/apps/com.example.notice")
            #expect(again.status == 200 && !again.text.contains(#"id="notice""#), "shown once")
        }
    }

    @Test func aRefundSaysItsNotificationWasNotSentAndLinksToTheFormThatSetsAURL() async throws {
        try await withTestStore { store in
            try await store.preparePurchaseCatalog()
            let coins = try #require(
                try await store.pay(TestStore.coins, token: try await store.signIn()).transactionId)
            let visitor = ConsoleTests.Visitor(store)
            _ = try await visitor.signIn()
            let csrf = try await visitor.csrf()
            let refund = "/console/testers/tester%40example.com/transactions/\(coins)/refund"
            let refunded = try await visitor.post(
                refund, "bundleId=\(TestStore.bundleId)&csrf=\(csrf)&back=\(Self.customer)")
            #expect(refunded.status == 303, "\(refunded.text)")
            let page = try await visitor.get(try #require(refunded.location))
            Self.expectNotice(
                page,
                "Refunded USD 0.99 of transaction \(coins) (\(TestStore.coins)). REFUND was not sent: "
                    + "\(TestStore.bundleId) has no sandbox notification URL; once one is set, resend it from "
                    + "Notifications. <a href=\"/console/apps/\(TestStore.bundleId)#notification-urls\">")

            // A refusal draws the customer's page again, the refusal at its top, with the refusal's status.
            let unknown = try await visitor.post(
                "/console/testers/tester%40example.com/transactions/999999/refund",
                "bundleId=\(TestStore.bundleId)&csrf=\(csrf)&back=\(Self.customer)")
            Self.expectRefusal(unknown, status: 404, on: "tester@example.com", saying: "Not done: ")
        }
    }

    @Test func resendingWithoutANotificationURLLinksToTheAppsForm() async throws {
        try await withTestStore { store in
            try await store.preparePurchaseCatalog()
            _ = try #require(try await store.pay(TestStore.coins, token: try await store.signIn()).transactionId)
            let listed = try await store.request(
                .GET, "/sandbox/test/v1/apps/\(TestStore.bundleId)/notifications", token: .some(store.adminToken))
            let uuid = try #require(
                (listed.json["notifications"] as? [[String: Any]])?.first?["notificationUUID"] as? String,
                "\(listed.text)")
            let visitor = ConsoleTests.Visitor(store)
            _ = try await visitor.signIn()
            let back = "/console/notifications?app=\(TestStore.bundleId)%26environment=sandbox"
            let refused = try await visitor.post(
                "/console/notifications/\(TestStore.bundleId)/\(uuid)/resend",
                "csrf=\(try await visitor.csrf())&back=\(back)")
            Self.expectRefusal(refused, status: 409, on: "Notifications", saying: "has no sandbox notification URL")
            #expect(
                refused.text.contains(#"<a href="/console/apps/\#(TestStore.bundleId)#notification-urls">"#),
                "\(refused.text)")
            #expect(!refused.text.contains("kiosk apps update"), "the console names its own form, not the CLI")
        }
    }

    @Test func reviewButtonsFollowTheStateAndARefusalSaysItInWords() async throws {
        try await withTestStore { store in
            try await store.preparePurchaseCatalog()
            let visitor = ConsoleTests.Visitor(store)
            _ = try await visitor.signIn()
            let product = "/console/apps/\(TestStore.bundleId)/products/\(TestStore.coins)"
            let csrf = try await visitor.csrf(product)
            let submitted = try await visitor.post(
                "\(product)/review", "action=submit&csrf=\(csrf)&back=\(product)")
            #expect(submitted.status == 303, "\(submitted.text)")
            let page = try await visitor.get(product)
            Self.expectNotice(page, "\(TestStore.coins) was submitted for review; it is now Waiting for Review.")
            Self.expectReviewButtons(page.text, ["approve", "reject"])

            let again = try await visitor.post("\(product)/review", "action=submit&csrf=\(csrf)&back=\(product)")
            Self.expectRefusal(
                again, status: 409, on: TestStore.coins,
                saying: "Not done: A product that is Waiting for Review cannot be submitted for review; it can be "
                    + "edited, approved or rejected.")
            #expect(!again.text.contains("metadata_changed"), "no internal event names")
        }
    }

    // MARK: Checks

    static func expectNotice(_ page: ConsoleTests.Page, _ text: String) {
        #expect(page.status == 200)
        #expect(page.text.contains(#"<div class="notice" role="status" id="notice"><p>"#), "\(page.text)")
        #expect(page.text.contains(text.replacingOccurrences(of: "'", with: "&#39;")), "\(page.text)")
    }

    /// The refused form's own page (its heading contains `heading`), answered with `status`, the refusal at its top.
    static func expectRefusal(_ page: ConsoleTests.Page, status: Int, on heading: String, saying text: String) {
        #expect(page.status == status, "\(page.text)")
        let top = page.text.range(
            of: #"</h1>\s*<div class="error" role="alert" id="refusal"><p>"#, options: .regularExpression)
        #expect(top != nil, "the refusal sits right under the page's heading: \(page.text)")
        #expect(page.text.contains(text), "\(page.text)")
        let title = page.text.range(of: "<h1>[^<]*</h1>", options: .regularExpression).map { page.text[$0] } ?? ""
        #expect(title.contains(heading), "the form's own page, not an error page: \(title)")
    }

    /// The review form offers exactly `actions`.
    static func expectReviewButtons(_ html: String, _ actions: [String]) {
        let shown = html.components(separatedBy: #"name="action" value=""#).dropFirst().map {
            String($0.prefix { $0 != "\"" })
        }
        #expect(shown == actions, "\(html)")
    }
}

extension ConsoleNoticesTests {
    /// A form whose bytes are not UTF-8 (a Latin-1 "é" in a name, as an old client may send) is refused whole and
    /// says why, for urlencoded and multipart bodies alike, instead of storing the name with a replacement
    /// character.
    @Test func formsThatAreNotUTF8AreRefusedWhole() async throws {
        try await withTestStore { store in
            let visitor = ConsoleTests.Visitor(store)
            _ = try await visitor.signIn(as: "Ann")
            let csrf = try await visitor.csrf("/console/apps")
            let cookie = try #require(visitor.cookie)
            var urlencoded = Data("csrf=\(csrf)&bundleId=com.example.cafe&name=Caf".utf8)
            urlencoded.append(0xE9)
            let boundary = "kiosk-boundary"
            var multipart = Data(
                "--\(boundary)\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n\(csrf)\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"bundleId\"\r\n\r\ncom.example.cafe\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nCaf"
                    .utf8)
            multipart.append(0xE9)
            multipart.append(Data("\r\n--\(boundary)--\r\n".utf8))
            for (body, type) in [
                (urlencoded, "application/x-www-form-urlencoded"),
                (multipart, "multipart/form-data; boundary=\(boundary)"),
            ] {
                var request = HTTPClientRequest(url: store.baseURL + "/console/apps")
                request.method = .POST
                request.headers.add(name: "Cookie", value: cookie)
                request.headers.add(name: "Content-Type", value: type)
                request.body = .bytes(ByteBuffer(bytes: body))
                let answer = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
                let text = String(buffer: try await answer.body.collect(upTo: 1 << 20))
                #expect(answer.status.code == 400, "\(type): \(text.prefix(300))")
                #expect(text.contains("The form holds bytes that are not UTF-8 text, so nothing in it was saved."))
            }
            let apps = try await store.request(.GET, "/admin/v1/apps")
            #expect(!apps.text.contains("com.example.cafe"), "\(apps.text)")
        }
    }
}
