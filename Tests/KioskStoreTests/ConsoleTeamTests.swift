import Foundation
import KioskCore
import KioskSQL
import KioskTesting
import Logging
import Testing

/// Console users: people who sign in with their own email and password, whose roles decide what they may read and
/// change, whose temporary password must be replaced, and whose sessions end when an Admin disables them or their
/// password changes. Over HTTP, redirects not followed.
@Suite struct ConsoleTeamTests {
    typealias Visitor = ConsoleTests.Visitor

    /// The temporary password on the page that shows it once.
    static func temporaryPassword(_ page: ConsoleTests.Page) -> String {
        guard let range = page.text.range(of: "id=\"temporary-password\" readonly value=\"") else { return "" }
        return String(page.text[range.upperBound...].prefix { $0 != "\"" })
    }

    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
    }

    @Test(arguments: TestDatabase.available)
    func aDeveloperSignsInChoosesAPasswordAndMayDoWhatTheirRolesAllow(database: TestDatabase) async throws {
        try await withStore(database) { store in
            let admin = Visitor(store)
            #expect(try await admin.get("/console/sign-in").text.contains("<details open"))
            _ = try await admin.signIn(as: "Ann")
            let csrf = try await admin.csrf("/console/team")
            let team = try await admin.get("/console/team").text
            #expect(team.contains("No one yet") && team.contains("Marketing <small>(reads only)</small>"), "\(team)")

            // The API's validation, at the field; nothing is created.
            let badEmail = try await admin.post("/console/team", "csrf=\(csrf)&email=dev&name=Dev&role_DEVELOPER=on")
            #expect(badEmail.status == 400 && badEmail.text.contains("id=\"email-error\""))
            let noRole = try await admin.post("/console/team", "csrf=\(csrf)&email=dev%40example.com&name=Dev")
            #expect(noRole.status == 400 && noRole.text.contains("id=\"roles-error\""))
            #expect(noRole.text.contains("value=\"dev@example.com\""), "the form keeps what was typed")

            let created = try await admin.post(
                "/console/team", "csrf=\(csrf)&email=Dev%40Example.com&name=Dev&role_DEVELOPER=on")
            let temporary = Self.temporaryPassword(created)
            #expect(created.status == 201 && temporary.count == 19, "four groups of four: \(temporary)")
            #expect(try await admin.get("/console/team").text.contains("dev@example.com"))
            #expect(!(try await admin.get("/console/sign-in").text.contains("<details open")))
            // The admin token does not sign in under a console user's email: the audit log could not tell them apart.
            let posing = try await Visitor(store).post(
                "/console/sign-in", "name=DEV%40example.com&token=\(store.adminToken)")
            #expect(posing.status == 400 && posing.text.contains("is a console user&#39;s email"), "\(posing.text)")

            // Signing in: a wrong password and an unknown email read the same.
            let dev = Visitor(store)
            let wrong = try await dev.post("/console/sign-in", "email=dev%40example.com&password=wrong-password")
            let unknown = try await dev.post("/console/sign-in", "email=nobody%40example.com&password=whatever1")
            #expect(wrong.status == 401 && unknown.status == 401 && dev.cookie == nil)
            #expect(wrong.text.contains("email or the password is not right"))
            #expect(unknown.text.contains("email or the password is not right"))
            let first = try await dev.post(
                "/console/sign-in", "email=dev%40example.com&password=\(Self.encoded(temporary))&next=%2Fconsole%2Fapps"
            )
            #expect(first.status == 303 && first.location == "/console/account")

            // Until they choose a password, every page leads back to the account page.
            #expect(try await dev.get("/console/apps").location == "/console/account")
            let account = try await dev.get("/console/account")
            #expect(account.text.contains("Choose your password") && account.text.contains("Developer"))
            let devCSRF = try await dev.csrf("/console/account")
            let temporaryField = Self.encoded(temporary)
            let differ = try await dev.post(
                "/console/account/password",
                "csrf=\(devCSRF)&currentPassword=\(temporaryField)&newPassword=correct-horse&confirmPassword=other-horse"
            )
            #expect(differ.status == 400 && differ.text.contains("id=\"confirmPassword-error\""))
            let wrongCurrent = try await dev.post(
                "/console/account/password",
                "csrf=\(devCSRF)&currentPassword=nope&newPassword=correct-horse&confirmPassword=correct-horse")
            #expect(wrongCurrent.status == 400 && wrongCurrent.text.contains("id=\"currentPassword-error\""))
            let oldCookie = dev.cookie
            let changed = try await dev.post(
                "/console/account/password",
                "csrf=\(devCSRF)&currentPassword=\(temporaryField)&newPassword=correct-horse&confirmPassword=correct-horse"
            )
            #expect(changed.status == 303 && changed.location == "/console" && dev.cookie != oldCookie)

            // The session from before the change has ended; the new one reads pages.
            let stale = Visitor(store)
            stale.cookie = oldCookie
            #expect(try await stale.get("/console/apps").location?.hasPrefix("/console/sign-in") == true)
            let overview = try await dev.get("/console")
            #expect(overview.status == 200 && overview.text.contains("Dev (Developer)"))
            let navigation = overview.text.components(separatedBy: "</nav>").first ?? ""
            for hidden in ["/console/money", "/console/keys", "/console/team", "/console/audit", "/console/agreements"]
            {
                #expect(!navigation.contains("href=\"\(hidden)\""), "a Developer's navigation has no \(hidden)")
                let refused = try await dev.get(hidden)
                #expect(refused.status == 403 && refused.text.contains("permission_denied"), "\(hidden)")
            }
            #expect(try await dev.get("/console/customers").text.contains("id=\"new-tester\""))

            // Pages show a form only to those who may send it; the shared secret only to catalog managers.
            try await store.createApp("com.example.coins", name: "Coins")
            let adminCSRFForSecret = try await admin.csrf("/console/apps/com.example.coins")
            _ = try await admin.post(
                "/console/apps/com.example.coins/shared-secret", "csrf=\(adminCSRFForSecret)")
            let devApp = try await dev.get("/console/apps/com.example.coins").text
            #expect(!devApp.contains("id=\"new-product\"") && !devApp.contains("id=\"shared-secret\""))
            #expect(devApp.contains("shown to Admins and App Managers"))
            let adminApp = try await admin.get("/console/apps/com.example.coins").text
            #expect(adminApp.contains("id=\"new-product\"") && adminApp.contains("id=\"shared-secret\""))

            // Changing the catalog is refused; the sandbox is theirs.
            let csrfNow = try await dev.csrf()
            let app = try await dev.post("/console/apps", "csrf=\(csrfNow)&bundleId=com.example.dev&name=Dev")
            #expect(app.status == 403 && app.text.contains("App Manager"))
            #expect(try await store.request(.GET, "/admin/v1/apps/com.example.dev").status == 404)
            let tester = try await dev.post(
                "/console/testers", "csrf=\(csrfNow)&email=t%40example.com&password=tester-pass&storefront=USA")
            #expect(tester.status == 303, "\(tester.text)")

            // A new role takes effect at the next request; disabling ends the session at once.
            let adminCSRF = try await admin.csrf("/console/team")
            let promoted = try await admin.post(
                "/console/team/dev@example.com",
                "csrf=\(adminCSRF)&role_DEVELOPER=on&role_FINANCE=on&state=enabled")
            #expect(promoted.status == 303)
            #expect(try await dev.get("/console/money").status == 200)
            _ = try await admin.post(
                "/console/team/dev@example.com", "csrf=\(adminCSRF)&role_DEVELOPER=on&state=disabled")
            #expect(try await dev.get("/console").location?.hasPrefix("/console/sign-in") == true)
            let disabled = try await Visitor(store).post(
                "/console/sign-in", "email=dev%40example.com&password=correct-horse")
            #expect(disabled.status == 403 && disabled.text.contains("disabled"))

            let audit = try await admin.get("/console/audit").text
            for action in [
                "console-user.create", "console-user.change-password", "console-user.update", "tester.create",
            ] {
                #expect(audit.contains(action), "\(action)")
            }
            #expect(audit.contains("dev@example.com"))
        }
    }

    /// An Admin cannot lock themselves out; another Admin's reset gives a new temporary password and ends the
    /// person's sessions.
    /// When the store cannot read its console users (its database fails under it), signing in answers the
    /// store's failure, never "the email or the password is not right", and counts as no attempt: after more
    /// failed reads than password checks may run at once, the same person signs in as soon as the store recovers.
    @Test func aDatabaseFailureAtSignInIsTheStoresFailureNotAWrongPassword() async throws {
        try await withTestStore { store in
            let created = try await store.request(
                .POST, "/admin/v1/console-users",
                json: ["email": "dev@example.com", "name": "Dev", "roles": ["DEVELOPER"], "password": "long-enough-1"])
            #expect(created.status == 201, "\(created.text)")
            let dev = Visitor(store)
            // A second connection to the store's database file, as an operator's would be.
            let elsewhere = try await DatabaseOpener.open(
                url: "sqlite://" + store.dataDirectory.appendingPathComponent("kiosk.sqlite").path, migrations: [],
                logger: Logger(label: "test"))
            try await elsewhere.withSession {
                try await $0.run("ALTER TABLE console_users RENAME TO console_users_away")
            }
            for _ in 0..<8 {
                let failed = try await dev.post("/console/sign-in", "email=dev%40example.com&password=long-enough-1")
                #expect(failed.status == 500, "\(failed.text)")
                #expect(!failed.text.contains("not right") && dev.cookie == nil, "\(failed.text)")
            }
            try await elsewhere.withSession {
                try await $0.run("ALTER TABLE console_users_away RENAME TO console_users")
            }
            try await elsewhere.close()
            let signedIn = try await dev.post("/console/sign-in", "email=dev%40example.com&password=long-enough-1")
            #expect(signedIn.status == 303 && dev.cookie != nil, "\(signedIn.text)")
        }
    }

    @Test func adminsCannotLockThemselvesOutAndResetsEndSessions() async throws {
        try await withTestStore { store in
            for (email, role) in [("boss@example.com", "ADMIN"), ("ops@example.com", "APP_MANAGER")] {
                let created = try await store.request(
                    .POST, "/admin/v1/console-users",
                    json: ["email": email, "name": "N", "roles": [role], "password": "long-enough-1"])
                #expect(created.status == 201 && created.json["temporaryPassword"] == nil)
            }
            let boss = Visitor(store)
            let ops = Visitor(store)
            #expect(
                try await boss.post("/console/sign-in", "email=boss%40example.com&password=long-enough-1").status == 303
            )
            #expect(
                try await ops.post("/console/sign-in", "email=ops%40example.com&password=long-enough-1").status == 303)
            let csrf = try await boss.csrf("/console/team")
            let selfDemotion = try await boss.post(
                "/console/team/boss@example.com", "csrf=\(csrf)&role_FINANCE=on&state=enabled")
            #expect(selfDemotion.status == 400 && selfDemotion.text.contains("own Admin role"))
            let reset = try await boss.post("/console/team/ops@example.com/reset-password", "csrf=\(csrf)")
            #expect(reset.status == 201 && Self.temporaryPassword(reset).count == 19)
            #expect(try await ops.get("/console").location?.hasPrefix("/console/sign-in") == true)
            let listed = try await store.request(.GET, "/admin/v1/console-users")
            let statuses = (listed.json["users"] as? [[String: Any]])?.map { "\($0["email"]!) \($0["status"]!)" }
            #expect(statuses == ["boss@example.com active", "ops@example.com invited"])
        }
    }

    /// Five wrong passwords for one email lock it for fifteen minutes on the store's clock, even against the right
    /// password; other emails are not affected.
    @Test func wrongPasswordsLockAnEmailForAWhile() async throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_790_000_000))
        try await withTestStore(clock: clock) { store in
            try await Self.addAnn(store)
            let visitor = Visitor(store)
            for _ in 0..<5 {
                #expect(
                    try await visitor.post("/console/sign-in", "email=ann%40example.com&password=wrong").status == 401)
            }
            let locked = try await visitor.post("/console/sign-in", "email=ANN%40example.com&password=right-password")
            #expect(locked.status == 429 && locked.text.contains("Too many wrong passwords"))
            #expect(try await visitor.post("/console/sign-in", "email=bo%40example.com&password=wrong").status == 401)
            clock.advance(by: 15 * 60 + 1)
            let later = try await visitor.post("/console/sign-in", "email=ann%40example.com&password=right-password")
            #expect(later.status == 303 && visitor.cookie != nil)
            // Sales reads money, nothing more.
            #expect(try await visitor.get("/console/money").status == 200)
            #expect(try await visitor.get("/console/keys").status == 403)
        }
    }

    /// Ann, a Sales console user whose password is `right-password`.
    static func addAnn(_ store: TestStore) async throws {
        let added = try await store.request(
            .POST, "/admin/v1/console-users",
            json: ["email": "ann@example.com", "name": "Ann", "roles": ["SALES"], "password": "right-password"])
        #expect(added.status == 201, "\(added.text)")
    }

    /// The current password on the account page is a credential check like sign-in's: five wrong ones lock it, even
    /// against the right one, so a session left open does not let anyone guess the password behind it.
    @Test func wrongCurrentPasswordsLockTheAccountPage() async throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_790_000_000))
        try await withTestStore(clock: clock) { store in
            try await Self.addAnn(store)
            let visitor = Visitor(store)
            #expect(
                try await visitor.post("/console/sign-in", "email=ann%40example.com&password=right-password").status
                    == 303)
            let csrf = try await visitor.csrf("/console/account")
            func change(_ current: String) async throws -> ConsoleTests.Page {
                try await visitor.post(
                    "/console/account/password",
                    "csrf=\(csrf)&currentPassword=\(current)&newPassword=new-passphrase&confirmPassword=new-passphrase")
            }
            for _ in 0..<5 {
                let wrong = try await change("wrong")
                #expect(wrong.status >= 400 && wrong.text.contains("current password is not right"), "\(wrong.status)")
            }
            let locked = try await change("right-password")
            #expect(locked.status == 403 && locked.text.contains("Too many wrong passwords"), "\(locked.text)")
            clock.advance(by: 15 * 60 + 1)
            #expect(try await change("right-password").status == 303)
        }
    }

    /// The admin API: hashes never leave the store, bodies are checked field by field, emails are case-blind.
    @Test(arguments: TestDatabase.available)
    func consoleUsersThroughTheAdminAPI(database: TestDatabase) async throws {
        try await withStore(database) { store in
            let created = try await store.request(
                .POST, "/admin/v1/console-users",
                json: ["email": "Fin@Example.com", "name": "Fin", "roles": ["FINANCE", "SALES"]])
            #expect(created.status == 201)
            #expect(created.json["email"] as? String == "fin@example.com")
            #expect(created.json["roles"] as? [String] == ["FINANCE", "SALES"])
            #expect(created.json["status"] as? String == "invited")
            #expect((created.json["temporaryPassword"] as? String)?.count == 19)
            let duplicate = try await store.request(
                .POST, "/admin/v1/console-users", json: ["email": "fin@example.com", "name": "Fin", "roles": ["SALES"]])
            #expect(duplicate.status == 409 && duplicate.errorCode == "duplicate_console_user")

            let refused: [([String: Any], String, String)] = [
                (["email": "fin", "name": "F", "roles": ["SALES"]], "invalid_email", "email"),
                (["email": "a@example.com", "name": "F", "roles": []], "missing_roles", "roles"),
                (["email": "a@example.com", "name": "F", "roles": ["OWNER"]], "invalid_value", "roles[0]"),
                (["email": "a@example.com", "name": "", "roles": ["SALES"]], "invalid_name", "name"),
                (
                    ["email": "a@example.com", "name": "F", "roles": ["SALES"], "password": "short"],
                    "password_too_short", "password"
                ),
                (["email": "a@example.com", "name": "F", "roles": ["SALES"], "admin": true], "unknown_field", "admin"),
            ]
            for (body, code, field) in refused {
                let answer = try await store.request(.POST, "/admin/v1/console-users", json: body)
                #expect(
                    answer.status == 400 && answer.errorCode == code && answer.errorField == field,
                    "\(body): \(answer.text)")
            }

            let disabled = try await store.request(
                .PATCH, "/admin/v1/console-users/FIN@example.com", json: ["disabled": true])
            #expect(disabled.json["status"] as? String == "disabled")
            let listed = try await store.request(.GET, "/admin/v1/console-users")
            #expect(!listed.text.contains("scrypt") && !listed.text.contains("passwordHash"))
            #expect((listed.json["users"] as? [[String: Any]])?.count == 1)
            let missing = try await store.request(
                .POST, "/admin/v1/console-users/\(String(repeating: "a", count: 400))@example.com/reset-password")
            #expect(missing.status == 404 && missing.errorCode == "console_user_not_found")
        }
    }
}

/// A role that only reads (Marketing) changes nothing anywhere: every form route the console serves, found from the
/// router rather than listed by hand, refuses its post with 403, except the person's own password and sign-out. A
/// page added later without its access rule is covered too, since the console fails closed for changes.
@Suite struct ConsoleReadOnlyRoleTests {
    @Test func aReadOnlyRoleIsRefusedEveryChange() async throws {
        try await withTestStore { store in
            _ = try await store.request(
                .POST, "/admin/v1/console-users",
                json: ["email": "ads@example.com", "name": "Ads", "roles": ["MARKETING"], "password": "long-enough-1"])
            let visitor = ConsoleTests.Visitor(store)
            #expect(
                try await visitor.post("/console/sign-in", "email=ads%40example.com&password=long-enough-1").status
                    == 303)
            let csrf = try await visitor.csrf()
            let posts = store.built.routes.compactMap { route -> String? in
                let parts = route.split(separator: " ")
                guard parts.first == "POST", let path = parts.last, path.hasPrefix("/console/") else { return nil }
                // Every parameter filled with a harmless value: the refusal must come before any lookup.
                return path.split(separator: "/").map { $0.hasPrefix("{") ? "x" : String($0) }.joined(separator: "/")
            }
            let open: Set<String> = [
                "/console/sign-in", "/console/sign-out", "/console/account/password",
                "/console/account/sign-out-everywhere",
            ]
            #expect(posts.count > 30, "\(posts)")
            for path in posts where !open.contains("/" + path.drop { $0 == "/" }) {
                let answer = try await visitor.post("/" + path.drop { $0 == "/" }, "csrf=\(csrf)")
                #expect(answer.status == 403 && answer.text.contains("permission_denied"), "\(path): \(answer.status)")
            }
        }
    }
}

extension ConsoleTeamTests {
    /// A temporary password signs in for 72 hours on the store's clock, then no more: the page says when it expired
    /// and what to do; the Team page and the admin API show the expiry; a reset gives 72 new hours.
    @Test(arguments: TestDatabase.available)
    func temporaryPasswordsExpireAfter72Hours(database: TestDatabase) async throws {
        let start = Date(timeIntervalSince1970: 1_790_000_000)
        let clock = ManualClock(start)
        try await withTestStore(engine: database, clock: clock) { store in
            let created = try await store.request(
                .POST, "/admin/v1/console-users",
                json: ["email": "dev@example.com", "name": "Dev", "roles": ["DEVELOPER"]])
            #expect(created.status == 201, "\(created.text)")
            let temporary = try #require(created.json["temporaryPassword"] as? String)
            let expiry = start.addingTimeInterval(72 * 3600)
            #expect(
                created.json["temporaryPasswordExpiresAt"] as? String == ISO8601DateFormatter().string(from: expiry))
            let admin = Visitor(store)
            _ = try await admin.signIn(as: "Ann")
            #expect(try await admin.get("/console/team").text.contains("invited (temporary password until "))

            clock.set(expiry.addingTimeInterval(-1))
            let inTime = Visitor(store)
            let signedIn = try await inTime.post(
                "/console/sign-in", "email=dev%40example.com&password=\(Self.encoded(temporary))")
            #expect(signedIn.status == 303 && signedIn.location == "/console/account", "\(signedIn.text.prefix(300))")

            clock.set(expiry)
            let late = Visitor(store)
            let refused = try await late.post(
                "/console/sign-in", "email=dev%40example.com&password=\(Self.encoded(temporary))")
            #expect(refused.status == 403, "\(refused.text.prefix(300))")
            #expect(refused.text.contains("Your temporary password expired at"), "\(refused.text)")
            #expect(refused.text.contains("Ask an Admin to reset your password"), "\(refused.text)")
            #expect(late.cookie == nil, "no session was started")
            // Three days on, the first session has long ended: the Admin signs in again.
            _ = try await admin.signIn(as: "Ann")
            #expect(try await admin.get("/console/team").text.contains("temporary password expired: reset it"))

            let csrf = try await admin.csrf("/console/team")
            let reset = try await admin.post("/console/team/dev@example.com/reset-password", "csrf=\(csrf)")
            let fresh = Self.temporaryPassword(reset)
            #expect(reset.status == 201 && fresh.count == 19)
            let listed = try await store.request(.GET, "/admin/v1/console-users")
            let user = (listed.json["users"] as? [[String: Any]])?.first { $0["email"] as? String == "dev@example.com" }
            #expect(
                user?["temporaryPasswordExpiresAt"] as? String
                    == ISO8601DateFormatter().string(from: expiry.addingTimeInterval(72 * 3600)))
            let again = try await Visitor(store).post(
                "/console/sign-in", "email=dev%40example.com&password=\(Self.encoded(fresh))")
            #expect(again.status == 303, "the reset password signs in: \(again.text.prefix(300))")
        }
    }
}
