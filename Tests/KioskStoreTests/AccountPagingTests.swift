import Foundation
import KioskTesting
import Testing

/// Testers and customer accounts list a page at a time: the admin API with `limit` and `offset` (as products do),
/// the console's customers page 100 testers at a time, keeping the search in its links.
@Suite struct AccountPagingTests {
    @Test(arguments: TestDatabase.available)
    func testersAndAccountsListAPageAtATime(database: TestDatabase) async throws {
        try await withTestStore(engine: database) { store in
            // 101 testers, eight at a time: each password is hashed with scrypt.
            let emails = (0...100).map { String(format: "tester%03d@example.com", $0) }
            for batch in stride(from: 0, to: emails.count, by: 8) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for email in emails[batch..<min(batch + 8, emails.count)] {
                        group.addTask { try await store.createTester(email) }
                    }
                    try await group.waitForAll()
                }
            }

            let first = try await store.request(.GET, "/admin/v1/testers?limit=40")
            let firstEmails = (first.json["testers"] as? [[String: Any]])?.compactMap { $0["email"] as? String }
            #expect(firstEmails == Array(emails.prefix(40)), "\(first.text.prefix(300))")
            #expect(first.json["total"] as? Int == 101 && first.json["nextOffset"] as? Int == 40)
            let last = try await store.request(.GET, "/admin/v1/testers?limit=40&offset=80")
            let lastEmails = (last.json["testers"] as? [[String: Any]])?.compactMap { $0["email"] as? String }
            #expect(lastEmails == Array(emails.suffix(21)), "\(last.text.prefix(300))")
            #expect(last.json["nextOffset"] == nil && last.json["total"] as? Int == 101)
            let whole = try await store.request(.GET, "/admin/v1/testers")
            #expect((whole.json["testers"] as? [[String: Any]])?.count == 101 && whole.json["total"] == nil)

            let accounts = try await store.request(.GET, "/admin/v1/accounts?limit=10")
            #expect((accounts.json["accounts"] as? [[String: Any]])?.isEmpty == true, "\(accounts.text)")
            #expect(accounts.json["total"] as? Int == 0 && accounts.json["nextOffset"] == nil)
            for (query, field) in [("?offset=5", "offset"), ("?limit=1001", "limit"), ("?limit=5&offset=x", "offset")] {
                for path in ["/admin/v1/testers", "/admin/v1/accounts"] {
                    let refused = try await store.request(.GET, path + query)
                    let error = refused.json["error"] as? [String: Any]
                    #expect(refused.status == 400, "\(path)\(query): \(refused.text)")
                    #expect(error?["code"] as? String == "invalid_value" && error?["field"] as? String == field)
                }
            }

            let visitor = ConsoleTests.Visitor(store)
            _ = try await visitor.signIn(as: "Ann")
            let page = try await visitor.get("/console/customers").text
            #expect(page.components(separatedBy: "<li><a href=\"/console/customers/sandbox/").count - 1 == 100)
            #expect(page.contains("Testers 1–100 of 101."), "\(page)")
            #expect(page.contains("<a href=\"/console/customers?page=2#testers\">Next page</a>"))
            let second = try await visitor.get("/console/customers?page=2").text
            #expect(second.contains(">tester100@example.com<") && second.contains("Testers 101–101 of 101."))
            #expect(second.contains("<a href=\"/console/customers?page=1#testers\">Previous page</a>"))
            let searched = try await visitor.get("/console/customers?q=a%20b%26c").text
            #expect(searched.contains("<a href=\"/console/customers?q=a%20b%26c&amp;page=2#testers\">Next page</a>"))

            let overview = try await visitor.get("/console").text
            #expect(overview.contains("<p>101 sandbox tester(s)."), "the overview counts the testers")
        }
    }
}
