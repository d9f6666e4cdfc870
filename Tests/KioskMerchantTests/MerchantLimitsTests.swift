import Foundation
import KioskCore
import KioskMerchant
import KioskTesting
import Testing

/// The merchant's body limits, broken framing, connection timeouts and text rules, through HTTP; the merchant
/// answers `/health` after each.
@Suite struct MerchantLimitsTests {
    /// One byte over a route's limit is 413 `body_too_large` naming the limit, announced or chunked; a broken
    /// chunked body is 400 `malformed_body`; a NUL in a user id is `invalid_character`.
    @Test func bodiesOverTheirLimitBrokenFramingAndControlCharactersAreRefused() async throws {
        try await MerchantShop.with(.sqlite) { shop in
            try await shop.withMerchant(receivesNotifications: false) { merchant in
                let token = merchant.userToken("alice")
                for (path, limit, text, user) in [
                    ("/merchant/v1/transactions", MerchantBodyLimits.delivery, "8 MiB", token),
                    ("/merchant/v1/notifications", MerchantBodyLimits.notification, "1 MiB", nil),
                    ("/merchant/v1/orders", MerchantBodyLimits.other, "64 KiB", token),
                ] {
                    let refused = try await merchant.request(
                        .POST, path, body: Data(repeating: UInt8(ascii: " "), count: limit + 1), token: user)
                    expectRefused(refused, 413, "body_too_large", field: nil)
                    let message = (refused.json["error"] as? [String: Any])?["message"] as? String
                    #expect(message?.contains(text) == true, "\(path): \(refused.text)")
                }
                let broken = try await withRawConnection(port: merchant.port) { connection in
                    try await connection.send(
                        "POST /merchant/v1/notifications HTTP/1.1\r\nHost: merchant\r\n"
                            + "Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n")
                    return try await connection.readResponse()
                }
                #expect(broken?.status == 400 && broken?.errorCode == "malformed_body")
                let nul = try await merchant.request(
                    .POST, "/merchant/v1/admin/tokens", json: ["userId": "alice\u{0}", "expiresIn": 60])
                expectRefused(nul, 400, "invalid_character", field: "userId")
                #expect(try await merchant.request(.GET, "/health").status == 200)
            }
        }
    }

    /// A head that never completes and a body shorter than its `Content-Length` are closed by the merchant. The
    /// time limit only stops the test if a connection is never closed; it allows for a loaded machine and for the
    /// wait for a load slot (`TestLoadSlots`).
    @Test(.timeLimit(.minutes(20))) func stalledConnectionsAreClosed() async throws {
        try await MerchantShop.with(.sqlite) { shop in
            try await shop.withMerchant(
                receivesNotifications: false, timeouts: HTTPTimeouts(idle: .seconds(1), body: .seconds(1))
            ) { merchant in
                let head = try await withRawConnection(port: merchant.port) { connection in
                    try await connection.send("GET /health HTTP/1.1\r\nHost: merchant\r\n")
                    return try await connection.readUntilClosed()
                }
                #expect(head.isEmpty, "closed without an answer: \(head)")
                _ = try await withRawConnection(port: merchant.port) { connection in
                    try await connection.send(
                        "POST /merchant/v1/notifications HTTP/1.1\r\nHost: merchant\r\nContent-Length: 100\r\n\r\n{")
                    return try await connection.readUntilClosed()
                }
                #expect(try await merchant.request(.GET, "/health").status == 200)
            }
        }
    }
}
