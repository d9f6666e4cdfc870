import Foundation
import KioskCore
import KioskTestSupport
import KioskTesting
import NIOHTTP1
import Testing

/// The Paid Apps agreement's business details over HTTP, on both engines: products stay unavailable until the terms,
/// a legal entity, a bank account and tax information are all on file; numbers are kept and answered masked; mistyped
/// or hostile details are refused at their field and change nothing.
@Suite struct AgreementTests {
    /// The sample agreement's three parts, to send one at a time.
    static func part(_ name: String) -> Any { SampleAgreement.json[name] ?? [:] }

    /// What a products request for the coins answers: the ids offered.
    static func offered(_ store: TestStore, token: String) async throws -> [String] {
        let answer = try await store.client(.POST, "/products", token: token, json: ["identifiers": [TestStore.coins]])
        #expect(answer.status == 200, "\(answer.text)")
        return (answer.json["products"] as? [[String: Any]] ?? []).compactMap { $0["productId"] as? String }
    }

    static func missing(_ answer: TestStore.Answer) -> [String] {
        answer.json["missing"] as? [String] ?? ["(no missing list) \(answer.text)"]
    }

    @Test(arguments: TestDatabase.available)
    func productsAreOfferedOnlyOnceEveryDetailIsOnFile(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.createApp(TestStore.bundleId)
            #expect(try await store.createProduct(TestStore.coins).status == 201)
            try await store.createTester(TestStore.testerEmail)
            let token = try await store.signIn()
            let path = "/admin/v1/agreements/paid-apps"

            // Terms alone: still pending, and still zero products, with a reason naming the three details.
            let terms = try await store.request(.POST, path + "/accept")
            #expect(terms.status == 200, "\(terms.text)")
            #expect(terms.json["status"] as? String == "pending")
            #expect(Self.missing(terms) == ["legalEntity", "bankAccount", "taxInformation"])
            #expect(try await Self.offered(store, token: token).isEmpty)
            let availability = try await store.request(
                .GET,
                "/admin/v1/apps/\(TestStore.bundleId)/products/\(TestStore.coins)/availability?environment=sandbox")
            let reason = (availability.json["reasons"] as? [[String: Any]])?.first ?? [:]
            #expect(reason["code"] as? String == "agreement_not_active")
            let message = reason["message"] as? String ?? ""
            #expect(message.contains("it still needs a legal entity, a bank account and tax information"), "\(message)")
            #expect((reason["fix"] as? String ?? "").contains("--bank-account NUMBER"))

            // One detail at a time: active only with the last.
            let withEntity = try await store.request(.PATCH, path, json: ["legalEntity": Self.part("legalEntity")])
            #expect(Self.missing(withEntity) == ["bankAccount", "taxInformation"])
            let withBank = try await store.request(.PATCH, path, json: ["bankAccount": Self.part("bankAccount")])
            #expect(Self.missing(withBank) == ["taxInformation"])
            #expect(try await Self.offered(store, token: token).isEmpty)
            let complete = try await store.request(.PATCH, path, json: ["taxInformation": Self.part("taxInformation")])
            #expect(complete.json["status"] as? String == "active", "\(complete.text)")
            #expect(Self.missing(complete) == [])
            #expect(try await Self.offered(store, token: token) == [TestStore.coins])

            // Masked in every answer, and never stored in full.
            let shown = try await store.request(.GET, path)
            let bank = shown.json["bankAccount"] as? [String: Any] ?? [:]
            #expect(bank["accountNumber"] as? String == "•••• 6819")
            #expect(bank["currency"] as? String == "GBP")
            #expect((shown.json["taxInformation"] as? [String: Any])?["taxId"] as? String == "•••• 4321")
            #expect((shown.json["legalEntity"] as? [String: Any])?["country"] as? String == "GBR")
            let vendorNumber = shown.json["vendorNumber"] as? String ?? ""
            #expect(vendorNumber.count == 8 && vendorNumber.allSatisfy(\.isNumber), "\(shown.text)")
            let stored = try await store.built.database.transaction { tx in
                try await tx.setting("paid_apps_agreement")
            }
            let row = try #require(stored)
            for secret in ["60161331926819", "NWBK", "987654321", "7654321"] {
                #expect(!row.contains(secret) && !shown.text.contains(secret), "\(secret) in \(row)")
            }

            // Withdrawing the terms keeps the details; accepting again needs nothing more.
            let withdrawn = try await store.request(.PUT, path, json: ["status": "pending"])
            #expect(Self.missing(withdrawn) == ["terms"])
            #expect(try await Self.offered(store, token: token).isEmpty)
            let again = try await store.request(.POST, path + "/accept")
            #expect(again.json["status"] as? String == "active")
            #expect(try await Self.offered(store, token: token) == [TestStore.coins])
        }
    }

    /// Each refused body with the error code and field it must get.
    static var refusals: [(body: [String: Any], code: String, field: String)] {
        [
            (
                [
                    "bankAccount": [
                        "holderName": "A", "accountNumber": "GB29 NWBK 6016 1331 9268 18", "currency": "GBP",
                    ]
                ],
                "invalid_iban", "bankAccount.accountNumber"
            ),
            (
                ["bankAccount": ["holderName": "A", "accountNumber": "12", "currency": "USD"]],
                "invalid_account_number", "bankAccount.accountNumber"
            ),
            (
                [
                    "bankAccount": [
                        "holderName": "A", "accountNumber": String(repeating: "9", count: 100_000), "currency": "USD",
                    ]
                ],
                "text_too_long", "bankAccount.accountNumber"
            ),
            (
                [
                    "bankAccount": [
                        "holderName": "A", "accountNumber": String(repeating: "9", count: 35), "currency": "USD",
                    ]
                ],
                "invalid_account_number", "bankAccount.accountNumber"
            ),
            (
                ["bankAccount": ["holderName": "A", "accountNumber": "123456789", "currency": "XXX"]],
                "unknown_currency", "bankAccount.currency"
            ),
            (["legalEntity": ["name": "Coin Shop", "country": "ATLANTIS"]], "unknown_country", "legalEntity.country"),
            (["legalEntity": ["name": "   ", "country": "GBR"]], "invalid_name", "legalEntity.name"),
            (
                ["legalEntity": ["name": String(repeating: "名", count: 201), "country": "GBR"]], "invalid_name",
                "legalEntity.name"
            ),
            (["taxInformation": ["form": "W-7", "taxId": "123456789"]], "unknown_tax_form", "taxInformation.form"),
            (["taxInformation": ["form": "W-9", "taxId": "1;DROP TABLE"]], "invalid_tax_id", "taxInformation.taxId"),
            (
                [
                    "legalEntity": ["name": "Coin Shop", "country": "GBR"],
                    "taxInformation": ["form": "W-9", "taxId": "123456789"],
                ],
                "tax_form_mismatch", "taxInformation.form"
            ),
            (
                [
                    "legalEntity": ["name": "Coin Shop", "country": "USA"],
                    "taxInformation": ["form": "W-8BEN", "taxId": "1234"],
                ],
                "tax_form_mismatch", "taxInformation.form"
            ),
            (
                ["bankAccount": ["holderName": "A", "accountNumber": "123456789", "currency": "USD", "routing": "1"]],
                "unknown_field", "bankAccount.routing"
            ),
        ]
    }

    /// Mistyped and hostile details get a 400 naming the field, on accept and on PATCH, and leave nothing behind.
    @Test func mistypedOrHostileDetailsAreRefusedAtTheirField() async throws {
        try await withStore(.sqlite) { store in
            let path = "/admin/v1/agreements/paid-apps"
            for (body, code, field) in Self.refusals {
                for (method, url) in [(HTTPMethod.POST, path + "/accept"), (.PATCH, path)] {
                    let answer = try await store.request(method, url, json: body)
                    #expect(answer.status == 400, "\(url) \(body): \(answer.text.prefix(300))")
                    #expect(answer.errorCode == code, "\(answer.text.prefix(300))")
                    #expect(answer.errorField == field, "\(answer.text.prefix(300))")
                }
            }
            let untouched = try await store.request(.GET, path)
            #expect(Self.missing(untouched) == ["terms", "legalEntity", "bankAccount", "taxInformation"])
        }
    }
}
