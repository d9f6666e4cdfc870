import Foundation
import KioskStore
import KioskTesting
import Testing

/// The console's forms for a subscription's promotional and win-back offers, its level in the group and the
/// group's localized names: each change is what the admin API then reads, refusals are named at their field.
@Suite struct ConsoleCatalogPagesTests {
    typealias Visitor = ConsoleTests.Visitor

    @Test(arguments: TestDatabase.available)
    func offersLevelsAndGroupNamesFromThePages(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.prepareSubscriptionCatalog()
            let visitor = Visitor(store)
            _ = try await visitor.signIn()
            let productPage = "/console/apps/\(TestStore.bundleId)/products/\(TestStore.monthly)"
            let csrf = try await visitor.csrf(productPage)
            let base = "csrf=\(csrf)&back=\(productPage)"
            let promotional = productPage + "/promotional-offers"

            let added = try await visitor.post(
                promotional,
                base + "&identifier=comeback&referenceName=Come+back&paymentMode=pay_up_front&period=P3M&tier=2")
            #expect(added.status == 303, "\(added.text)")
            // The same identifier replaces the offer rather than adding a second.
            let replaced = try await visitor.post(
                promotional, base + "&identifier=comeback&paymentMode=pay_as_you_go&period=P1W&numberOfPeriods=2&tier=1"
            )
            #expect(replaced.status == 303, "\(replaced.text)")
            let badPeriod = try await visitor.post(
                promotional, base + "&identifier=other&paymentMode=free_trial&period=forever")
            #expect(badPeriod.status == 400 && badPeriod.text.contains("invalid_period"))
            let badIdentifier = try await visitor.post(
                promotional, base + "&identifier=%3Cscript%3E&paymentMode=free_trial&period=P1W")
            #expect(badIdentifier.status == 400 && !badIdentifier.text.contains("<script>"), "\(badIdentifier.text)")

            let winBack = try await visitor.post(
                productPage + "/win-back-offers",
                base + "&identifier=welcome_back&paymentMode=pay_as_you_go&period=P1M&numberOfPeriods=3&tier=1"
                    + "&paidMonths=2&minimumMonths=1&maximumMonths=6&waitMonths=12&priority=high")
            #expect(winBack.status == 303, "\(winBack.text)")
            let shared = try await visitor.post(
                productPage + "/win-back-offers",
                base + "&identifier=comeback&paymentMode=free_trial&period=P1W")
            #expect(shared.status == 400, "an identifier is unique among promotional and win-back offers")
            let page = try await visitor.get(productPage).text
            #expect(
                page.contains("pay_as_you_go, 2 × P1W at tier 1") && !page.contains("pay_up_front, 1 × P3M"), "\(page)")
            #expect(page.contains("paid ≥ 2 months, lapsed 1–6 months, 12 months between offers, high priority"))

            let product = try await store.request(
                .GET, "/admin/v1/apps/\(TestStore.bundleId)/products/\(TestStore.monthly)")
            let promotionalOffers = product.json["promotionalOffers"] as? [[String: Any]] ?? []
            #expect(promotionalOffers.map { $0["identifier"] as? String } == ["comeback"], "\(product.text)")
            #expect(promotionalOffers.first?["paymentMode"] as? String == "pay_as_you_go")
            let winBackOffers = product.json["winBackOffers"] as? [[String: Any]] ?? []
            #expect(winBackOffers.first?["waitBetweenOffersInMonths"] as? Int == 12, "\(product.text)")

            #expect(try await visitor.post(productPage + "/offers/comeback/remove", base).status == 303)
            #expect(try await visitor.post(productPage + "/offers/nothing/remove", base).status == 404)
            let afterRemoval = try await store.request(
                .GET, "/admin/v1/apps/\(TestStore.bundleId)/products/\(TestStore.monthly)")
            #expect((afterRemoval.json["promotionalOffers"] as? [Any])?.isEmpty == true)

            // The catalog page: the subscription's level and the group's name in another language.
            let catalogPage = "/console/apps/\(TestStore.bundleId)/catalog"
            #expect(try await visitor.post(productPage + "/level", base + "&level=2").status == 303)
            #expect(try await visitor.post(productPage + "/level", base + "&level=two").text.contains("invalid_number"))
            let groups = try await store.request(.GET, "/admin/v1/apps/\(TestStore.bundleId)/subscription-groups")
            let group = (groups.json["subscriptionGroups"] as? [[String: Any]])?.first ?? [:]
            let groupId = try #require(group["groupId"] as? Int, "\(groups.text)")
            let named = try await visitor.post(
                "/console/apps/\(TestStore.bundleId)/subscription-groups/\(groupId)/localizations",
                "csrf=\(csrf)&back=\(catalogPage)&locale=fr-FR&name=Pro+en+fran%C3%A7ais&customAppName=Jeu")
            #expect(named.status == 303, "\(named.text)")
            let catalog = try await visitor.get(catalogPage).text
            #expect(catalog.contains("Pro en français (Jeu)") && catalog.contains("value=\"2\""), "\(catalog)")
            let audit = try await visitor.get("/console/audit").text
            for action in [
                "product.promotional-offer", "product.win-back-offer", "product.remove-offer", "product.level",
                "group.localization",
            ] {
                #expect(audit.contains(action), "\(action)")
            }
        }
    }

    /// A catalog file uploaded from the import form's file picker (multipart/form-data), as a browser without
    /// script sends it; the pasted text is used only when no file is chosen; hostile bodies are refused.
    @Test func catalogFilesAreUploaded() async throws {
        try await withTestStore { store in
            try await store.createApp()
            let visitor = Visitor(store)
            _ = try await visitor.signIn()
            let page = "/console/apps/com.example.app/catalog"
            let csrf = try await visitor.csrf(page)
            let storekit = try String(contentsOf: ConsoleCatalogPagesTests.storekitFile, encoding: .utf8)
            let uploaded = try await visitor.postMultipart(
                page, [("csrf", nil, csrf), ("upload", "CoinGame.storekit", storekit), ("file", nil, "")])
            #expect(uploaded.status == 200 && uploaded.text.contains("id=\"import-report\""), "\(uploaded.text)")
            #expect(uploaded.text.contains("com.example.coins.club.monthly"))
            let products = try await store.request(.GET, "/admin/v1/apps/com.example.app/products")
            #expect(products.text.contains("com.example.coins.club.monthly"))

            let nothing = try await visitor.postMultipart(
                page, [("csrf", nil, csrf), ("upload", "", ""), ("file", nil, "")])
            #expect(nothing.status == 400 && nothing.text.contains("Choose or paste a catalog file"))
            let withoutToken = try await visitor.postMultipart(page, [("upload", "a.storekit", storekit)])
            #expect(withoutToken.status == 403)
            for contentType in [
                "multipart/form-data", "multipart/form-data; boundary=", "multipart/form-data; boundary=y",
            ] {
                let broken = try await visitor.send(.POST, page, form: "--y\r\nnonsense", contentType: contentType)
                #expect(
                    broken.status == 400 && broken.text.contains("invalid_form"), "\(contentType): \(broken.status)")
            }
            let closedOnly = try await visitor.send(
                .POST, page, form: "nonsense\r\n--x--\r\n", contentType: "multipart/form-data; boundary=x")
            #expect(closedOnly.status == 400)
            // One limit for a catalog file, as the admin API's (16 MiB): the console's form takes no more, however
            // the file comes in.
            let oversized = String(repeating: " ", count: StoreBodyLimits.catalogImport) + "{}"
            for parts in [[("upload", "big.storekit", oversized), ("file", nil, "")], [("file", nil, oversized)]] {
                let refused = try await visitor.postMultipart(page, [("csrf", nil, csrf)] + parts)
                #expect(refused.status == 413 && refused.text.contains("16 MiB"), "\(refused.status)")
            }
            let api = try await store.request(
                .POST, "/admin/v1/apps/com.example.app/catalog", body: Data(oversized.utf8))
            #expect(api.status == 413, "\(api.text)")
        }
    }

    static let storekitFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Examples/CoinGame.storekit")
}
