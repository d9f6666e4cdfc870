import Foundation
import KioskCore
import KioskTestSupport
import KioskTesting
import NIOHTTP1
import Testing

/// Apple's Retention Messaging API's management endpoints (`/inApps/v1/messaging/…`) over HTTP on both engines:
/// Apple's paths, bodies, limits and error codes; App Review's states (sandbox approved at once, production pending
/// until an operator decides).
@Suite struct RetentionMessagingTests {
    static let image = "6f8d0f32-8b1b-4f0e-9a53-0b6a2f6f0a01"
    static let bullet = "6f8d0f32-8b1b-4f0e-9a53-0b6a2f6f0a02"
    static let message = "2d7f4a1e-3c5b-4d6e-8f90-a1b2c3d4e5f6"

    /// The catalog, a key, and the app's auto-renewable.
    static func prepare(_ store: TestStore) async throws -> ServerAPIKey {
        try await store.prepareSubscriptionCatalog()
        return try await store.createServerAPIKey()
    }

    // Proves the CRC the test PNGs are made with (the store's own) is the CRC-32 of PNG, by known answers from
    // outside Kiosk: the CRC of every PNG's IEND chunk, and the standard check value of "123456789".
    @Test func pngChecksumIsTheStandardCRC32() {
        #expect(CRC32.checksum(Array("IEND".utf8)) == 0xAE42_6082)
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([UInt8]()) == 0)
        let file = [UInt8](TestPNG.fullSize)
        #expect(Array(file.suffix(12)) == [0, 0, 0, 0, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82])
    }

    // Proves images are checked as Apple documents them (a PNG without transparency, full-size 3840 wide and
    // 160–2160 high, bullet points 1024 × 1024, a valid imageSize, at most 16 MiB) with Apple's codes, that the
    // sandbox approves at once and production waits, and that an image a message shows cannot be deleted.
    @Test(arguments: TestDatabase.available)
    func imagesFollowApplesRules(database: TestDatabase) async throws {
        try await withStore(database) { store in
            let key = try await Self.prepare(store)
            let path = "/inApps/v1/messaging/image/\(Self.image)"
            let uploaded = try await store.inApps(.PUT, path, key: key, body: TestPNG.fullSize)
            #expect(uploaded.status == 200, "\(uploaded.text)")
            let again = try await store.inApps(.PUT, path, key: key, body: TestPNG.fullSize)
            #expect(again.status == 409 && again.appleErrorCode == 4_090_000, "\(again.text)")
            let bullet = try await store.inApps(
                .PUT, "/inApps/v1/messaging/image/\(Self.bullet)?imageSize=BULLET_POINT", key: key,
                body: TestPNG.bulletPoint)
            #expect(bullet.status == 200, "\(bullet.text)")

            for (body, query, contentType, code, why) in [
                (TestPNG.make(width: 3840, height: 100), "", "image/png", 4_000_161, "too short"),
                (TestPNG.make(width: 3000, height: 200), "", "image/png", 4_000_161, "not 3840 wide"),
                (TestPNG.fullSize, "?imageSize=BULLET_POINT", "image/png", 4_000_161, "not 1024 × 1024"),
                (TestPNG.make(width: 3840, height: 160, colorType: 6), "", "image/png", 4_000_161, "alpha"),
                (TestPNG.make(width: 3840, height: 160, transparencyChunk: true), "", "image/png", 4_000_161, "tRNS"),
                (TestPNG.make(width: 3840, height: 160, breakCRC: true), "", "image/png", 4_000_161, "a bad CRC"),
                (Data("GIF89a not a png at all".utf8), "", "image/png", 4_000_161, "not a PNG"),
                (Data(), "", "image/png", 4_000_161, "empty"),
                (TestPNG.fullSize, "?imageSize=HUGE", "image/png", 4_000_216, "an unknown imageSize"),
                (TestPNG.fullSize, "", "text/plain", 4_000_161, "not image/png"),
            ] as [(Data, String, String, Int, String)] {
                let answer = try await store.inApps(
                    .PUT, "/inApps/v1/messaging/image/\(UUID())\(query)", key: key, body: body, contentType: contentType
                )
                #expect(answer.status == 400, "\(why): \(answer.text)")
                #expect(answer.appleErrorCode == code, "\(why): \(answer.text)")
            }
            // Broken structure, each refused with Apple's code and what is wrong.
            for (body, reason) in TestPNG.malformed {
                let answer = try await store.inApps(.PUT, "/inApps/v1/messaging/image/\(UUID())", key: key, body: body)
                #expect(answer.status == 400 && answer.appleErrorCode == 4_000_161, "\(reason): \(answer.text)")
                #expect(answer.json["errorMessage"] as? String == "Invalid request. The image is invalid: \(reason).")
            }
            let huge = try await store.inApps(
                .PUT, "/inApps/v1/messaging/image/\(UUID())", key: key, body: Data(count: 16 * 1_048_576 + 1))
            #expect(huge.appleErrorCode == 4_000_161, "\(huge.text)")
            let notUUID = try await store.inApps(
                .PUT, "/inApps/v1/messaging/image/nope", key: key, body: TestPNG.fullSize)
            #expect(notUUID.appleErrorCode == 4_000_000, "\(notUUID.text)")

            let list = try await store.serverAPI(.GET, "/inApps/v1/messaging/image/list", key: key)
            let items = try #require(list.json["imageIdentifiers"] as? [[String: String]], "\(list.text)")
            #expect(
                items == [
                    ["imageIdentifier": Self.image, "imageState": "APPROVED", "imageSize": "FULL_SIZE"],
                    ["imageIdentifier": Self.bullet, "imageState": "APPROVED", "imageSize": "BULLET_POINT"],
                ])
            // Production keeps its own images, pending App Review.
            let production = try await store.inApps(.PUT, path, key: key, body: TestPNG.fullSize, sandbox: false)
            #expect(production.status == 200, "\(production.text)")
            let productionList = try await store.serverAPI(
                .GET, "/inApps/v1/messaging/image/list", key: key, sandbox: false)
            #expect(
                (productionList.json["imageIdentifiers"] as? [[String: String]])?.map { $0["imageState"] } == [
                    "PENDING"
                ])

            let used = try await store.serverAPI(
                .PUT, "/inApps/v1/messaging/message/\(Self.message)", key: key,
                json: TestStore.retentionMessage(image: Self.image))
            #expect(used.status == 200, "\(used.text)")
            let inUse = try await store.serverAPI(.DELETE, path, key: key)
            #expect(inUse.status == 403 && inUse.appleErrorCode == 4_030_019, "\(inUse.text)")
            #expect(
                try await store.serverAPI(.DELETE, "/inApps/v1/messaging/message/\(Self.message)", key: key).status
                    == 200)
            #expect(try await store.serverAPI(.DELETE, path, key: key).status == 200)
            let gone = try await store.serverAPI(.DELETE, path, key: key)
            #expect(gone.status == 404 && gone.appleErrorCode == 4_040_014, "\(gone.text)")
        }
    }

    // Proves messages meet Apple's limits (header 66, body 144, alternative text 150, five bullet points of 66,
    // counted in Unicode scalars), each with Apple's code, name images that exist and have the right size, and are
    // listed, refused twice and deleted as Apple says.
    @Test(arguments: TestDatabase.available)
    func messagesFollowApplesLimits(database: TestDatabase) async throws {
        try await withStore(database) { store in
            let key = try await Self.prepare(store)
            #expect(
                try await store.inApps(
                    .PUT, "/inApps/v1/messaging/image/\(Self.image)", key: key, body: TestPNG.fullSize
                ).status == 200)
            #expect(
                try await store.inApps(
                    .PUT, "/inApps/v1/messaging/image/\(Self.bullet)?imageSize=BULLET_POINT", key: key,
                    body: TestPNG.bulletPoint
                ).status == 200)
            let bullet = (String(repeating: "b", count: 66), Self.bullet, String(repeating: "a", count: 150))
            let full = TestStore.retentionMessage(
                header: String(repeating: "☃", count: 66), body: String(repeating: "x", count: 144), image: Self.image,
                altText: String(repeating: "a", count: 150), headerPosition: "ABOVE_IMAGE",
                bullets: Array(repeating: bullet, count: 5))
            let path = "/inApps/v1/messaging/message/\(Self.message)"
            let uploaded = try await store.serverAPI(.PUT, path, key: key, json: full)
            #expect(uploaded.status == 200, "\(uploaded.text)")
            let again = try await store.serverAPI(.PUT, path, key: key, json: full)
            #expect(again.status == 409 && again.appleErrorCode == 4_090_001, "\(again.text)")

            func refused(_ json: [String: Any], _ code: Int, _ why: String) async throws {
                let answer = try await store.serverAPI(
                    .PUT, "/inApps/v1/messaging/message/\(UUID())", key: key, json: json)
                #expect(answer.appleErrorCode == code, "\(why): \(answer.text)")
                #expect(answer.status == code / 10_000, "\(why): \(answer.text)")
            }
            try await refused(
                TestStore.retentionMessage(header: String(repeating: "h", count: 67)), 4_000_162, "header")
            try await refused(TestStore.retentionMessage(body: String(repeating: "b", count: 145)), 4_000_163, "body")
            try await refused(
                TestStore.retentionMessage(image: Self.image, altText: String(repeating: "a", count: 151)), 4_000_175,
                "alt text")
            try await refused(
                TestStore.retentionMessage(bullets: Array(repeating: bullet, count: 6)), 4_000_218, "six bullets")
            try await refused(
                TestStore.retentionMessage(bullets: [(String(repeating: "t", count: 67), Self.bullet, "a")]), 4_000_219,
                "bullet text")
            try await refused(
                TestStore.retentionMessage(bullets: [("t", Self.bullet, String(repeating: "a", count: 151))]),
                4_000_175, "bullet alt text")
            try await refused(TestStore.retentionMessage(headerPosition: "ABOVE_IMAGE"), 4_000_224, "above no image")
            try await refused(TestStore.retentionMessage(image: "\(UUID())"), 4_040_014, "unknown image")
            try await refused(TestStore.retentionMessage(image: Self.bullet), 4_000_216, "a bullet as the image")
            try await refused(
                TestStore.retentionMessage(bullets: [("t", Self.image, "a")]), 4_000_216, "full as bullet")
            try await refused(["body": "no header"], 4_000_000, "no header")
            try await refused(["header": 5, "body": "x"], 4_000_000, "a header that is not text")
            try await refused(TestStore.retentionMessage(headerPosition: "SIDEWAYS"), 4_000_000, "headerPosition")
            try await refused(TestStore.retentionMessage(image: "nope"), 4_000_000, "image id not a UUID")

            let list = try await store.serverAPI(.GET, "/inApps/v1/messaging/message/list", key: key)
            #expect(
                list.json["messageIdentifiers"] as? [[String: String]]
                    == [["messageIdentifier": Self.message, "messageState": "APPROVED"]], "\(list.text)")
            #expect(try await store.serverAPI(.DELETE, path, key: key).status == 200)
            let gone = try await store.serverAPI(.DELETE, path, key: key)
            #expect(gone.status == 404 && gone.appleErrorCode == 4_040_015, "\(gone.text)")
        }
    }

    // Proves default messages take only approved messages (and approved images) of an auto-renewable in an App
    // Store Connect locale; that App Review (the admin route) is what approves production uploads; and that the
    // real-time URL is https, at most 256 characters, and in production needs a passing performance test.
    @Test(arguments: TestDatabase.available)
    func defaultMessagesAndTheRealtimeURL(database: TestDatabase) async throws {
        try await withStore(database) { store in
            let key = try await Self.prepare(store)
            let product = TestStore.monthly
            #expect(
                try await store.inApps(
                    .PUT, "/inApps/v1/messaging/image/\(Self.image)", key: key, body: TestPNG.fullSize, sandbox: false
                ).status == 200)
            #expect(
                try await store.serverAPI(
                    .PUT, "/inApps/v1/messaging/message/\(Self.message)", key: key,
                    json: TestStore.retentionMessage(image: Self.image), sandbox: false
                ).status == 200)
            let configure = ["messageIdentifier": Self.message]
            func defaultMessage(_ method: HTTPMethod, _ productId: String, _ locale: String) async throws
                -> TestStore.Answer
            {
                try await store.serverAPI(
                    method, "/inApps/v1/messaging/default/\(productId)/\(locale)", key: key,
                    json: method == .PUT ? configure : nil, sandbox: false)
            }
            #expect(try await defaultMessage(.PUT, product, "xx-YY").appleErrorCode == 4_000_164)
            #expect(try await defaultMessage(.PUT, TestStore.coins, "en-US").appleErrorCode == 4_000_023)
            #expect(try await defaultMessage(.PUT, "com.unknown", "en-US").appleErrorCode == 4_000_023)
            let pending = try await defaultMessage(.PUT, product, "en-US")
            #expect(pending.status == 403 && pending.appleErrorCode == 4_030_017, "\(pending.text)")

            let review = try await store.request(
                .POST, "/admin/v1/apps/\(TestStore.bundleId)/retention/review",
                json: ["environment": "production", "messageIdentifier": Self.message, "state": "APPROVED"])
            #expect(review.status == 200 && review.json["state"] as? String == "APPROVED", "\(review.text)")
            let imagePending = try await defaultMessage(.PUT, product, "en-US")
            #expect(imagePending.status == 403 && imagePending.appleErrorCode == 4_030_018, "\(imagePending.text)")
            #expect(
                try await store.request(
                    .POST, "/admin/v1/apps/\(TestStore.bundleId)/retention/review",
                    json: [
                        "environment": "production", "imageIdentifier": Self.image.uppercased(), "state": "approved",
                    ]
                ).status == 200)
            #expect(try await defaultMessage(.PUT, product, "en-US").status == 200)
            let got = try await defaultMessage(.GET, product, "en_us")
            #expect(got.json["messageIdentifier"] as? String == Self.message, "\(got.text)")
            let unknownMessage = try await store.serverAPI(
                .PUT, "/inApps/v1/messaging/default/\(product)/fr-FR", key: key,
                json: ["messageIdentifier": "\(UUID())"], sandbox: false)
            #expect(unknownMessage.status == 404 && unknownMessage.appleErrorCode == 4_040_015)
            #expect(try await defaultMessage(.DELETE, product, "en-US").status == 200)
            let none = try await defaultMessage(.GET, product, "en-US")
            #expect(none.status == 404 && none.appleErrorCode == 4_040_020, "\(none.text)")
            #expect(try await defaultMessage(.DELETE, product, "en-US").appleErrorCode == 4_040_020)

            // Admin review refusals.
            for (json, code) in [
                (["environment": "production", "messageIdentifier": Self.message, "state": "MAYBE"], "invalid_state"),
                (
                    ["environment": "moon", "messageIdentifier": Self.message, "state": "APPROVED"],
                    "invalid_environment"
                ),
                (["environment": "sandbox", "state": "APPROVED"], "missing_field"),
                (["environment": "sandbox", "messageIdentifier": "\(UUID())", "state": "APPROVED"], "not_found"),
                (["environment": "sandbox", "messageIdentifier": "x", "state": "APPROVED"], "invalid_value"),
            ] as [([String: Any], String)] {
                let answer = try await store.request(
                    .POST, "/admin/v1/apps/\(TestStore.bundleId)/retention/review", json: json)
                #expect(answer.errorCode == code, "\(answer.text)")
            }

            // The real-time URL.
            let url = "/inApps/v1/messaging/realtime/url"
            for bad in [
                "http://example.com/retention", "https:///nohost", "ftp://example.com", "not a url", "",
                "https://user:secret@example.com/x", "https://example.com/" + String(repeating: "a", count: 240),
            ] {
                let answer = try await store.serverAPI(.PUT, url, key: key, json: ["realtimeURL": bad])
                #expect(answer.status == 400 && answer.appleErrorCode == 4_000_215, "\(bad): \(answer.text)")
            }
            let wrongType = try await store.serverAPI(.PUT, url, key: key, json: ["realtimeURL": 5])
            #expect(wrongType.appleErrorCode == 4_000_215, "\(wrongType.text)")
            let missing = try await store.serverAPI(.GET, url, key: key)
            #expect(missing.status == 404 && missing.appleErrorCode == 4_040_021, "\(missing.text)")
            let good = "https://example.com/apple/retention"
            #expect(try await store.serverAPI(.PUT, url, key: key, json: ["realtimeURL": good]).status == 200)
            #expect(try await store.serverAPI(.GET, url, key: key).json["realtimeURL"] as? String == good)
            let production = try await store.serverAPI(.PUT, url, key: key, json: ["realtimeURL": good], sandbox: false)
            #expect(production.status == 403 && production.appleErrorCode == 4_030_026, "\(production.text)")
            #expect(try await store.serverAPI(.DELETE, url, key: key).status == 200)
            #expect(try await store.serverAPI(.DELETE, url, key: key).appleErrorCode == 4_040_021)
            // Apple serves the performance test in the sandbox only.
            let productionTest = try await store.serverAPI(
                .POST, "/inApps/v1/messaging/performanceTest", key: key, json: ["originalTransactionId": "1"],
                sandbox: false)
            #expect(productionTest.status == 404)

            let overview = try await store.request(
                .GET, "/admin/v1/apps/\(TestStore.bundleId)/retention?environment=production")
            #expect((overview.json["messages"] as? [[String: Any]])?.first?["messageState"] as? String == "APPROVED")
            #expect((overview.json["images"] as? [[String: Any]])?.first?["width"] as? Int == 3840)
        }
    }
}
