import Foundation
import KioskCore
import Testing

@Suite("Account and app validation")
struct AccountValidationTests {
    // Proves a console password follows OWASP ASVS level 2: 12 characters or more, not the email or its name part,
    // not a common word dressed up with digits or punctuation, not digits alone or a repeated character.
    @Test(
        arguments: [
            ("correct-horse", nil), ("four unrelated words", nil), ("Password24!", "password_too_short"),
            ("Password2024!", "password_too_common"), ("123456789012", "password_too_common"),
            ("qwertyuiop12", "password_too_common"), ("aaaaaaaaaaaa", "password_too_common"),
            ("ababababababab", "password_too_common"), ("dee.veloper-2026", "password_contains_email"),
            ("my DEE.VELOPER@example.com", "password_contains_email"), ("short", "password_too_short"),
        ] as [(String, String?)])
    func consolePasswords(_ password: String, _ code: String?) {
        let errors = CatalogValidator.validateConsolePassword(
            password, email: "Dee.Veloper@example.com", field: "newPassword")
        #expect(errors.map(\.code.rawValue) == (code.map { [$0] } ?? []), "\(password)")
        #expect(errors.allSatisfy { $0.field == "newPassword" && $0.fix?.isEmpty == false })
    }

    // Proves ordinary addresses, plus-tags, subdomains and a 254-character address are accepted.
    @Test(arguments: [
        "tester@example.com", "first.last+iap@mail.example.co.uk", "a@b.cn", "o'neil_1@x-y.io",
        String(repeating: "a", count: 64) + "@" + String(repeating: "b", count: 63) + "."
            + String(repeating: "c", count: 63) + "." + String(repeating: "d", count: 57) + ".com",
    ])
    func emailAccepted(_ email: String) {
        #expect(email.count <= 254)
        #expect(CatalogValidator.validateEmail(email) == [])
    }

    // Proves addresses without one @, with spaces, bad dots, no domain dot or a bad TLD are refused.
    @Test(arguments: [
        "", "tester", "tester@", "@example.com", "a@@example.com", "a@b@example.com", "te ster@example.com",
        "tester@example", ".tester@example.com", "tester.@example.com", "te..ster@example.com", "tester@-x.com",
        "tester@example..com", "tester@example.c", "tester@example.c0m", "tëster@example.com",
        "a@" + String(repeating: "b", count: 250) + ".com",
    ])
    func emailRefused(_ email: String) throws {
        let error = try #require(CatalogValidator.validateEmail(email, field: "tester.email").first)
        #expect(error.code == .invalidEmail)
        #expect(error.field == "tester.email")
        #expect(error.fix != nil)
    }

    // Proves notification URLs must be absolute http or https URLs with a host.
    @Test(arguments: [
        ("https://example.com/apple", true), ("http://127.0.0.1:9000/n", true), ("HTTPS://EXAMPLE.COM", true),
        ("ftp://example.com", false), ("/relative/path", false), ("example.com/path", false), ("https://", false),
        ("", false), ("not a url", false), ("mailto:a@example.com", false),
    ])
    func notificationURL(text: String, valid: Bool) {
        let errors = CatalogValidator.validateNotificationURL(text)
        #expect(codes(errors) == (valid ? [] : ["invalid_notification_url"]))
    }

    // Proves an app's bundle id, name and every notification URL are checked, each at its own path.
    @Test func app() {
        let epoch = Date(timeIntervalSince1970: 0)
        var app = App(
            id: 1, bundleId: "com.example.app", name: "Example", productionNotificationURLs: ["https://e.com/p"],
            sandboxNotificationURLs: ["https://e.com/s"], createdAt: epoch, updatedAt: epoch)
        #expect(CatalogValidator.validate(app: app) == [])
        app.bundleId = "example"
        app.name = String(repeating: "n", count: 31)
        app.sandboxNotificationURLs.append("ftp://e.com")
        #expect(
            CatalogValidator.validate(app: app).map { "\($0.code)@\($0.field ?? "")" } == [
                "invalid_bundle_id@app.bundleId", "invalid_app_name@app.name",
                "invalid_notification_url@app.sandboxNotificationURLs[1]",
            ])
    }

    private func codes(_ errors: [KioskError]) -> [String] { errors.map(\.code.rawValue) }
}
