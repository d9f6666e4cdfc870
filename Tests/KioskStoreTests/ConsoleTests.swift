import AsyncHTTPClient
import Crypto
import Foundation
import KioskCore
import KioskSigning
import KioskTesting
import NIOCore
import NIOHTTP1
import Testing

/// The console's safety over HTTP, redirects not followed: sign-in and its cookie, CSRF tokens, session expiry on
/// the store's clock, sign-out, hostile forms and escaping. (The pages themselves are driven in a real browser by
/// ConsoleBrowserTests.)
@Suite struct ConsoleTests {
    struct Page {
        var status: Int
        var headers: HTTPHeaders
        var text: String
        var location: String? { headers.first(name: "Location") }
    }

    /// A browser-like client that keeps the console's cookies and does not follow redirects.
    final class Visitor: @unchecked Sendable {
        let store: TestStore
        let http = HTTPClient(
            eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
        /// The session cookie (`name=value`).
        var cookie: String?
        /// The cookie that carries an action's notice to the next page (`name=value`).
        var noticeCookie: String?

        init(_ store: TestStore) { self.store = store }

        func get(_ path: String) async throws -> Page { try await send(.GET, path, form: nil) }

        func post(_ path: String, _ form: String) async throws -> Page { try await send(.POST, path, form: form) }

        /// Posts `parts` as `multipart/form-data`, as a browser sends a form that uploads a file.
        func postMultipart(_ path: String, _ parts: [(name: String, filename: String?, text: String)]) async throws
            -> Page
        {
            let boundary = "----kiosk\(UUID().uuidString.prefix(8))"
            var body = ""
            for part in parts {
                let filename = part.filename.map { "; filename=\"\($0)\"" } ?? ""
                body += "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(part.name)\"\(filename)\r\n"
                body += (part.filename == nil ? "" : "Content-Type: application/octet-stream\r\n") + "\r\n"
                body += part.text + "\r\n"
            }
            body += "--\(boundary)--\r\n"
            return try await send(.POST, path, form: body, contentType: "multipart/form-data; boundary=\(boundary)")
        }

        func send(
            _ method: HTTPMethod, _ path: String, form: String?,
            contentType: String = "application/x-www-form-urlencoded", headers: [(String, String)] = []
        ) async throws -> Page {
            var request = HTTPClientRequest(url: store.baseURL + path)
            request.method = method
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            let cookies = [cookie, noticeCookie].compactMap { $0 }
            if !cookies.isEmpty { request.headers.add(name: "Cookie", value: cookies.joined(separator: "; ")) }
            if let form {
                request.headers.add(name: "Content-Type", value: contentType)
                request.body = .bytes(ByteBuffer(string: form))
            }
            let response = try await http.execute(request, timeout: .seconds(120))
            let body = try await response.body.collect(upTo: 8 << 20)
            for set in response.headers["Set-Cookie"] {
                guard let pair = set.split(separator: ";").first else { continue }
                let value = pair.hasSuffix("=") ? nil : String(pair)
                if pair.hasPrefix("kiosk_notice=") { noticeCookie = value } else { cookie = value }
            }
            return Page(status: Int(response.status.code), headers: response.headers, text: String(buffer: body))
        }

        /// The CSRF token of the page at `path`.
        func csrf(_ path: String = "/console") async throws -> String {
            let text = try await get(path).text
            guard let range = text.range(of: "name=\"csrf\" value=\"") else { return "" }
            return String(text[range.upperBound...].prefix { $0 != "\"" })
        }

        func signIn(as name: String = "Ann") async throws -> Page {
            try await post("/console/sign-in", "name=\(name)&token=\(store.adminToken)&next=%2Fconsole%2Fapps")
        }

        deinit { try? http.syncShutdown() }
    }

    @Test func signInSetsAStrictHttpOnlyCookieAndSessionsEndOnTheStoresClock() async throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_790_000_000))
        try await withTestStore(clock: clock) { store in
            let visitor = Visitor(store)
            let stranger = try await visitor.get("/console/apps")
            #expect(stranger.status == 303 && stranger.location == "/console/sign-in?next=/console/apps")
            #expect(try await visitor.get("/").location == "/console")

            let wrong = try await visitor.post("/console/sign-in", "name=Ann&token=nope")
            #expect(wrong.status == 401 && wrong.text.contains("not the admin token") && visitor.cookie == nil)
            let signedIn = try await visitor.signIn()
            #expect(signedIn.status == 303 && signedIn.location == "/console/apps")
            let setCookie = signedIn.headers.first(name: "Set-Cookie") ?? ""
            for attribute in ["HttpOnly", "SameSite=Strict", "Path=/console", "Max-Age=28800"] {
                #expect(setCookie.contains(attribute), "\(setCookie)")
            }
            #expect(!setCookie.contains("Secure"), "plain HTTP: a Secure cookie would never come back")
            let page = try await visitor.get("/console/apps")
            #expect(page.status == 200 && page.text.contains("<h1>Apps</h1>"))
            // No script, frame, plugin or foreign resource may run or load; forms post only to the store.
            for (header, value) in [
                (
                    "Content-Security-Policy",
                    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
                        + "frame-ancestors 'none'; base-uri 'none'"
                ),
                ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "same-origin"),
            ] {
                #expect(page.headers.first(name: header) == value, "\(header)")
            }
            #expect(page.headers.first(name: "Cache-Control") == "no-store")

            // Eight hours on the store's clock end the session.
            clock.advance(by: 8 * 3600 - 1)
            #expect(try await visitor.get("/console/apps").status == 200)
            clock.advance(by: 1)
            let expired = try await visitor.get("/console/apps")
            #expect(expired.status == 303 && expired.location == "/console/sign-in?next=/console/apps")
        }
    }

    /// "Sign out everywhere" ends every session of that person, in every browser, and none begun after it.
    @Test func signingOutEverywhereEndsEverySessionOfThatPerson() async throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_790_000_000))
        try await withTestStore(clock: clock) { store in
            let laptop = Visitor(store)
            let phone = Visitor(store)
            let bob = Visitor(store)
            for visitor in [laptop, phone] { _ = try await visitor.signIn(as: "Ann") }
            _ = try await bob.signIn(as: "Bob")
            clock.advance(by: 1)
            let ended = try await phone.post(
                "/console/account/sign-out-everywhere", "csrf=\(try await phone.csrf("/console/account"))")
            #expect(ended.status == 303 && ended.location == "/console/sign-in")
            #expect(try await laptop.get("/console").status == 303, "Ann's other browser is signed out")
            #expect(try await bob.get("/console").status == 200, "Bob's session is his own")
            clock.advance(by: 1)
            _ = try await laptop.signIn(as: "Ann")
            #expect(try await laptop.get("/console").status == 200, "a session begun afterwards works")
            let audit = try await bob.get("/console/audit").text
            #expect(audit.contains("<td><code>sign-out-everywhere</code></td>"), "\(audit)")
        }
    }

    /// Whoever reads the database (a backup, a read replica, a DBA) has the session secret and the admin token's hash,
    /// but not the identity key, which stays outside it: a cookie signed with the two alone is no session, an hour's
    /// or ten years'.
    @Test func theDatabaseAloneCannotForgeASession() async throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_790_000_000))
        try await withTestStore(clock: clock) { store in
            let secret = try await store.built.context.database.transaction { tx in
                try await tx.setting("console_session_secret")
            }
            let key = SymmetricKey(
                data: SHA256.hash(
                    data: Data("\(try #require(secret))|\(SecretGenerator.sha256Hex(store.adminToken))".utf8)))
            func cookie(expiry: Int64, key: SymmetricKey) -> String {
                let subject = Data("token:Mallory".utf8).map { String(format: "%02x", $0) }.joined()
                let fields = "\(expiry).00112233445566778899aabbccddeeff.\(subject)"
                let mac = Data(HMAC<SHA256>.authenticationCode(for: Data(fields.utf8), using: key))
                return "kiosk_console=\(fields).\(mac.map { String(format: "%02x", $0) }.joined())"
            }
            let forger = Visitor(store)
            let now: Int64 = 1_790_000_000
            for expiry in [now + 3600, now + 10 * 365 * 86_400] {
                forger.cookie = cookie(expiry: expiry, key: key)
                let page = try await forger.get("/console/keys")
                #expect(page.status == 303 && page.location?.hasPrefix("/console/sign-in") == true, "\(expiry)")
            }
        }
    }

    @Test func formsNeedTheirSessionsCSRFTokenAndSignOutEndsTheSession() async throws {
        try await withTestStore { store in
            let ann = Visitor(store)
            let bob = Visitor(store)
            _ = try await ann.signIn(as: "Ann")
            _ = try await bob.signIn(as: "Bob")
            let annsToken = try await ann.csrf()
            #expect(annsToken.count == 64)

            let none = try await ann.post("/console/apps", "bundleId=com.example.a&name=A")
            #expect(none.status == 403 && none.text.contains("not sent from a page of this console session"))
            let bobs = try await ann.post("/console/apps", "bundleId=com.example.a&name=A&csrf=\(try await bob.csrf())")
            #expect(bobs.status == 403)
            #expect(try await store.request(.GET, "/admin/v1/apps/com.example.a").status == 404)
            let made = try await ann.post("/console/apps", "bundleId=com.example.a&name=A&csrf=\(annsToken)")
            #expect(made.status == 303 && made.location == "/console/apps/com.example.a")
            let audit = try await ann.get("/console/audit").text
            #expect(
                audit.contains("<td>Ann (admin token)</td><td><code>app.create</code></td><td>com.example.a</td>"),
                "the audit log marks what was done with the admin token: \(audit)")

            let annsCookie = ann.cookie
            let signedOut = try await ann.post("/console/sign-out", "csrf=\(annsToken)")
            #expect(
                signedOut.status == 303 && signedOut.headers.first(name: "Set-Cookie")?.contains("Max-Age=0") == true)
            #expect(try await ann.get("/console").status == 303)
            // The old cookie, kept or copied, opens nothing: signing out ended the session in the store.
            ann.cookie = annsCookie
            let replayed = try await ann.get("/console")
            #expect(replayed.status == 303 && replayed.location?.hasPrefix("/console/sign-in") == true)
            #expect(
                try await ann.post("/console/apps", "bundleId=com.example.b&name=B&csrf=\(annsToken)").status == 303)
            #expect(try await store.request(.GET, "/admin/v1/apps/com.example.b").status == 404)
            #expect(try await bob.get("/console").status == 200, "one operator signing out leaves the other's session")
        }
    }

    /// A purchase the app made under Ask to Buy waits on the tester's page until approved there; then it is
    /// charged and on the timeline with its JWS decoded, and can be refunded and the refund reversed.
    @Test func askToBuyIsApprovedFromTheTestersPage() async throws {
        try await withTestStore { store in
            try await store.preparePurchaseCatalog(testerSettings: ["askToBuy": true])
            let token = try await store.signIn()
            let deferred = try await store.pay(TestStore.coins, token: token)
            #expect(deferred.json["state"] as? String == "deferred", "\(deferred.text)")
            let visitor = Visitor(store)
            _ = try await visitor.signIn()
            let page = "/console/customers/sandbox/\(TestStore.testerEmail)"
            let waiting = try await visitor.get(page).text
            let marker = "/console/testers/tester%40example.com/payments/"
            let start = try #require(waiting.range(of: marker), "\(waiting)")
            let paymentId = String(waiting[start.upperBound...].prefix { $0 != "\"" })
            let approved = try await visitor.post(
                marker + paymentId,
                "csrf=\(try await visitor.csrf(page))&bundleId=\(TestStore.bundleId)&decision=approve&back=\(page)")
            #expect(approved.status == 303, "\(approved.text)")
            let after = try await visitor.get(page).text
            #expect(!after.contains(marker) && after.contains(TestStore.coins), "\(after)")
            #expect(after.contains("&quot;transactionReason&quot; : &quot;PURCHASE&quot;"), "the JWS payload, decoded")

            // Refund it, then take the refund back, from the same page (a consumable cannot be revoked: it is
            // never shared with a family).
            #expect(!after.contains("Revoke (Family Sharing)"))
            let transaction = try #require(after.range(of: "id=\"transaction-")).upperBound
            let transactionId = String(after[transaction...].prefix { $0 != "\"" })
            let controls = "/console/testers/tester%40example.com/transactions/\(transactionId)/"
            let form = "csrf=\(try await visitor.csrf(page))&bundleId=\(TestStore.bundleId)&back=\(page)"
            // The customer asks Apple for a refund (the app's server is asked about consumption), it is declined;
            // then a quarter of the price is refunded, and the refund reversed.
            let asked = try await visitor.post(controls + "request-refund", form + "&consumptionReason=LEGAL")
            #expect(asked.status == 303, "\(asked.text)")
            #expect(try await visitor.post(controls + "decline-refund", form).status == 303)
            let notSent = try await visitor.post(controls + "refund", form + "&percentage=101")
            #expect(notSent.status == 400 && notSent.text.contains("invalid_percentage"))
            #expect(try await visitor.post(controls + "refund", form + "&percentage=x").text.contains("invalid_number"))
            #expect(try await visitor.post(controls + "refund", form + "&percentage=25&reason=1").status == 303)
            let refunded = try await visitor.get(page).text
            #expect(refunded.contains("Reverse refund") && refunded.contains("(prorated)"), "\(refunded)")
            #expect(refunded.contains("&quot;revocationType&quot; : &quot;REFUND_PRORATED&quot;"))
            #expect(refunded.contains("&quot;revocationReason&quot; : 1"))
            let sent = try await store.request(
                .GET, "/sandbox/test/v1/apps/\(TestStore.bundleId)/notifications", token: store.adminToken)
            let types = (sent.json["notifications"] as? [[String: Any]] ?? []).compactMap {
                $0["notificationType"] as? String
            }
            for type in ["CONSUMPTION_REQUEST", "REFUND_DECLINED", "REFUND"] {
                #expect(types.contains(type), "\(types)")
            }
            #expect(try await visitor.post(controls + "reverse-refund", form).status == 303)
            #expect(!(try await visitor.get(page).text.contains("class=\"bad\">refunded")))
            #expect(try await visitor.post(controls + "explode", form).status == 404)
            let audit = try await visitor.get("/console/audit").text
            for action in [
                "test.payment-decision", "test.request-refund", "test.decline-refund", "test.refund",
                "test.reverse-refund",
            ] {
                #expect(audit.contains(action), "\(action)")
            }
        }
    }

    /// Support finds a customer by what they or the merchant's server have: email, transaction id or the app
    /// account token the app sent; anything else finds no one.
    @Test(arguments: TestDatabase.available)
    func customersAreFoundByWhatSupportHasAtHand(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            let token = try await store.signIn()
            let appAccountToken = UUID()
            let paid = try await store.client(
                .POST, "/payments", token: token,
                json: [
                    "productId": TestStore.coins, "quantity": 1, "idempotencyKey": "k1",
                    "appAccountToken": appAccountToken.uuidString,
                ])
            let transactionId = try #require(paid.transactionId, "\(paid.text)")
            let visitor = Visitor(store)
            _ = try await visitor.signIn()
            for query in [TestStore.testerEmail, transactionId, appAccountToken.uuidString] {
                let found = try await visitor.get("/console/customers?q=\(query)").text
                #expect(found.contains(">\(TestStore.testerEmail)</a></td><td>sandbox</td>"), "\(query)")
            }
            let nobody = try await visitor.get("/console/customers?q=\(UUID().uuidString)").text
            #expect(nobody.contains("id=\"no-match\""))
        }
    }

    /// The Buy form charges once however often it is sent (a double click, a retried post): the key drawn into the
    /// page makes the repeats answer the first purchase; the next page draws a new key, and buys again.
    @Test func theBuyFormChargesOncePerPage() async throws {
        try await withTestStore { store in
            try await store.preparePurchaseCatalog()
            let visitor = Visitor(store)
            _ = try await visitor.signIn()
            let page = "/console/customers/sandbox/\(TestStore.testerEmail)"
            func form() async throws -> String {
                let text = try await visitor.get(page).text
                let start = try #require(text.range(of: "name=\"idempotencyKey\" value=\"")).upperBound
                let key = String(text[start...].prefix { $0 != "\"" })
                return "csrf=\(try await visitor.csrf(page))&idempotencyKey=\(key)&back=\(page)"
                    + "&product=\(TestStore.bundleId)+\(TestStore.coins)"
            }
            let buy = "/console/testers/tester%40example.com/purchases"
            let once = try await form()
            for _ in 0..<3 { #expect(try await visitor.post(buy, once).status == 303) }
            let transactions =
                "/sandbox/test/v1/apps/\(TestStore.bundleId)/transactions?tester=\(TestStore.testerEmail)"
            func count() async throws -> Int {
                let listed = try await store.request(.GET, transactions, token: store.adminToken)
                return (listed.json["transactions"] as? [[String: Any]])?.count ?? -1
            }
            #expect(try await count() == 1, "one charge for three posts of one form")
            #expect(try await visitor.post(buy, try await form()).status == 303)
            #expect(try await count() == 2, "a freshly drawn form buys again")
        }
    }

    @Test func hostileFormsAndTextsAreRefusedOrEscaped() async throws {
        try await withTestStore { store in
            let visitor = Visitor(store)
            // After sign-in, only a console path may follow: never another site.
            for next in ["https://evil.example", "//evil.example", "/console/../admin", "/\\evil.example"] {
                let page = try await visitor.post(
                    "/console/sign-in",
                    "name=Ann&token=\(store.adminToken)&next=\(next.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")"
                )
                #expect(page.location == "/console" || page.location?.hasPrefix("/console/") == true, "\(next)")
                #expect(page.location?.contains("evil") != true && page.location?.contains("..") != true, "\(next)")
            }
            #expect(try await visitor.post("/console/sign-in", "name=%01bad&token=x").status == 400)
            // A sign-in form another site sent (login CSRF) is refused before the token is even read.
            let fromElsewhere = Visitor(store)
            for site in ["cross-site", "same-site"] {
                let refused = try await fromElsewhere.send(
                    .POST, "/console/sign-in", form: "name=Eve&token=\(store.adminToken)",
                    headers: [("Sec-Fetch-Site", site)])
                #expect(
                    refused.status == 403 && refused.text.contains("cross_site_form") && fromElsewhere.cookie == nil)
            }
            // A browser that sends no Sec-Fetch-Site still names the form's origin: another one is refused too.
            for origin in [
                "http://evil.example", "null", store.baseURL.replacingOccurrences(of: "127.0.0.1", with: "localhost"),
            ] {
                let refused = try await fromElsewhere.send(
                    .POST, "/console/sign-in", form: "name=Eve&token=\(store.adminToken)", headers: [("Origin", origin)]
                )
                #expect(
                    refused.status == 403 && refused.text.contains("cross_site_form") && fromElsewhere.cookie == nil,
                    "\(origin)")
            }
            let ownOrigin = try await Visitor(store).send(
                .POST, "/console/sign-in", form: "name=Eve&token=\(store.adminToken)",
                headers: [("Origin", store.baseURL)])
            #expect(ownOrigin.status == 303, "the store's own origin signs in")
            let sameOrigin = try await fromElsewhere.send(
                .POST, "/console/sign-in", form: "name=Eve&token=\(store.adminToken)",
                headers: [("Sec-Fetch-Site", "same-origin")])
            #expect(sameOrigin.status == 303 && fromElsewhere.cookie != nil)
            #expect(
                try await visitor.post("/console/sign-in", "name=\(String(repeating: "a", count: 65))&token=x").status
                    == 400)
            let csrf = try await visitor.csrf()
            let broken = try await visitor.post("/console/apps", "csrf=\(csrf)&bundleId=%zz")
            #expect(broken.status == 400 && broken.text.contains("could not be read"))
            let huge = try await visitor.post(
                "/console/apps", "csrf=\(csrf)&name=" + String(repeating: "x", count: 2 << 20))
            #expect(huge.status == 413)

            let script = "<script>alert(1)</script>"
            let made = try await visitor.post(
                "/console/apps",
                "csrf=\(csrf)&bundleId=com.example.x&name=\(script.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")"
            )
            #expect(made.status == 303, "\(made.text)")
            let apps = try await visitor.get("/console/apps").text
            #expect(!apps.contains(script) && apps.contains("&lt;script&gt;"), "names are escaped")
            let nul = try await visitor.get("/console/customers?q=a%00b")
            #expect(nul.status == 400 && nul.text.contains("<!doctype html>"), "a NUL in a query is refused as a page")
            let missing = try await visitor.get("/console/apps/com.example.none")
            #expect(
                missing.status == 404 && missing.text.contains("<!doctype html>")
                    && missing.text.contains("com.example.none"))
        }
    }
}
