import Foundation
import KioskStore
import KioskTesting
import Testing

/// Each family of routes reads a body up to its own limit and refuses a larger one the way the family answers
/// (Kiosk's 413 `body_too_large`, `verifyReceipt`'s 21000, the Server API's `4000000`, OCSP's
/// `malformedRequest`); a body whose HTTP framing is broken is a 400, never a 500. The store answers `/health`
/// after each.
@Suite struct RequestLimitsTests {
    /// One byte over each family's limit, announced by `Content-Length`, is refused with the family's answer.
    @Test func aBodyOverItsFamilysLimitIsRefusedAsTheFamilyAnswers() async throws {
        try await withTestStore { store in
            try await store.preparePurchaseCatalog()
            let key = try await store.createServerAPIKey()
            func oversized(_ limit: Int) -> Data { Data(repeating: UInt8(ascii: " "), count: limit + 1) }

            for (path, limit, text) in [
                ("/admin/v1/apps", StoreBodyLimits.console, "1 MiB"),
                ("/admin/v1/apps/\(TestStore.bundleId)/catalog", StoreBodyLimits.catalogImport, "16 MiB"),
            ] {
                let refused = try await store.request(.POST, path, body: oversized(limit))
                #expect(refused.status == 413, "\(path): \(refused.text)")
                #expect(refused.errorCode == "body_too_large", "\(path): \(refused.text)")
                #expect(refused.errorMessage?.contains(text) == true, "\(path): \(refused.text)")
            }
            let signIn = try await store.request(.POST, "/sandbox/storekit/v1/sessions", body: oversized(65_536))
            #expect(signIn.status == 413 && signIn.errorMessage?.contains("64 KiB") == true, "\(signIn.text)")
            let testControl = try await store.request(
                .POST, "/sandbox/test/v1/apps/\(TestStore.bundleId)/purchases", body: oversized(65_536),
                token: .some(store.adminToken))
            #expect(testControl.status == 413 && testControl.errorCode == "body_too_large", "\(testControl.text)")

            let receipt = try await store.request(
                .POST, "/sandbox/verifyReceipt", body: oversized(StoreBodyLimits.verifyReceipt))
            #expect(receipt.status == 200, "Apple answers every verifyReceipt with HTTP 200")
            #expect(receipt.json["status"] as? Int == 21000, "\(receipt.text)")

            let serverAPI = try await store.request(
                .PUT, "/sandbox/inApps/v1/subscriptions/extend/1", body: oversized(65_536),
                token: .some(try key.token()))
            #expect(serverAPI.status == 400 && serverAPI.appleErrorCode == 4_000_000, "\(serverAPI.text)")

            let ocsp = try await store.request(
                .POST, "/ocsp/sandbox", body: oversized(65_536), headers: ["Content-Type": "application/ocsp-request"])
            #expect(ocsp.status == 200 && Array(ocsp.body) == [0x30, 0x03, 0x0A, 0x01, 0x01], "malformedRequest")
            try await expectHealthy(store)
        }
    }

    /// A body of exactly the limit is read; only the byte after it is too many, also when no `Content-Length`
    /// announces the size (a chunked body is counted as it arrives).
    @Test func theLimitIsExactAndHoldsForChunkedBodies() async throws {
        try await withTestStore { store in
            var exact = Data(#"{"bundleId": "com.example.exact", "name": "Exact"}"#.utf8)
            exact.append(Data(repeating: UInt8(ascii: " "), count: StoreBodyLimits.console - exact.count))
            let created = try await store.request(.POST, "/admin/v1/apps", body: exact)
            #expect(created.status == 201, "\(created.text)")

            let refused = try await withRawConnection(port: store.port) { connection in
                try await connection.send(
                    "POST /admin/v1/apps HTTP/1.1\r\nHost: kiosk\r\nAuthorization: Bearer \(store.adminToken)\r\n"
                        + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
                let chunk = String(repeating: " ", count: 65_536)
                for _ in 0..<(StoreBodyLimits.console / chunk.count) {
                    try await connection.send("10000\r\n\(chunk)\r\n")
                }
                try await connection.send("1\r\n \r\n0\r\n\r\n")
                return try await connection.readResponse()
            }
            #expect(refused?.status == 413 && refused?.errorCode == "body_too_large", "\(String(describing: refused))")
            try await expectHealthy(store)
        }
    }

    /// A chunked body whose chunk size is not hexadecimal is a 400 on every family, in the family's shape where
    /// it has one; nothing of it is acted on.
    @Test func aBrokenChunkedBodyIsA400() async throws {
        try await withTestStore { store in
            try await store.preparePurchaseCatalog()
            let key = try await store.createServerAPIKey()
            for (request, path, bearer) in [
                ("POST", "/admin/v1/apps", store.adminToken), ("POST", "/sandbox/storekit/v1/sessions", nil),
                ("POST", "/sandbox/verifyReceipt", nil), ("POST", "/verifyReceipt", nil),
                ("PUT", "/sandbox/inApps/v1/subscriptions/extend/1", try key.token()),
                ("POST", "/sandbox/test/v1/apps/\(TestStore.bundleId)/purchases", store.adminToken),
            ] {
                let answer = try await withRawConnection(port: store.port) { connection in
                    try await connection.send(
                        "\(request) \(path) HTTP/1.1\r\nHost: kiosk\r\nContent-Type: application/json\r\n"
                            + (bearer.map { "Authorization: Bearer \($0)\r\n" } ?? "")
                            + "Transfer-Encoding: chunked\r\n\r\n"
                            + "zz\r\n{\"bundleId\": \"com.example.chunked\", \"name\": \"Chunked\"}\r\n0\r\n\r\n")
                    return try await connection.readResponse()
                }
                let response = try #require(answer, "\(path): the store answers before it closes")
                #expect(response.status == 400, "\(path): \(response.text)")
                if path.contains("inApps") {
                    #expect(response.json["errorCode"] as? Int == 4_000_000, "\(path): \(response.text)")
                } else {
                    #expect(response.errorCode == "malformed_body", "\(path): \(response.text)")
                }
            }
            #expect(try await store.request(.GET, "/admin/v1/apps/com.example.chunked").status == 404)
            try await expectHealthy(store)
        }
    }
}

/// Expects `GET /health` to answer 200: the store survived what came before.
func expectHealthy(_ store: TestStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let health = try await store.request(.GET, "/health")
    #expect(health.status == 200, "\(health.text)", sourceLocation: sourceLocation)
}

extension TestStore.Answer {
    /// The `error.message` of an error body.
    var errorMessage: String? { (json["error"] as? [String: Any])?["message"] as? String }
}

extension RawResponse {
    var text: String { String(decoding: body, as: UTF8.self) }
}
