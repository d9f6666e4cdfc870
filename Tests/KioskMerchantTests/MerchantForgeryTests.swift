import Crypto
import ExtrasBase64
import Foundation
import KioskCore
import KioskProtocol
import KioskSigning
import KioskTesting
import Testing
import X509

/// The merchant grants nothing for signed data the store did not sign as it is: a battery of forgeries, from
/// broken JWS structure through chains and algorithms Apple's verifier refuses to leaves minted with the store's
/// own intermediate key (expired, not yet valid, without Apple's marker) and genuinely signed payloads for another
/// app, or claiming production under the sandbox chain. Each gets its exact refusal; the user is granted nothing and
/// the merchant stays up.
@Suite struct MerchantForgeryTests {
    @Test func forgedSignedDataIsRefused() async throws {
        try await MerchantShop.with(.sqlite) { shop in
            // The store's own sandbox chain, keys included: what a thief of its files could sign with.
            let directory = shop.store.dataDirectory.appendingPathComponent("signing").path
            let genuine = try await SigningKeyStore(baseDirectory: directory).load(environment: .sandbox, now: Date())
            let intermediateKey = try P384.Signing.PrivateKey(
                pemRepresentation: String(
                    contentsOfFile: directory + "/sandbox/" + SigningKeyStore.FileName.intermediateKey, encoding: .utf8)
            )
            try await shop.withMerchant(receivesNotifications: false) { merchant in
                let device = try await shop.device()
                let bought = try await shop.buy(MerchantShop.coins, token: nil, on: device).jwsRepresentation
                await device.close()
                let parts = bought.split(separator: ".").map(String.init)
                let claims = try JSONSerialization.jsonObject(with: Self.decode(parts[1])) as? [String: Any] ?? [:]
                let stranger = try SigningIdentity.generate(environment: .sandbox, now: Date())
                func signed(_ claims: [String: Any], by identity: SigningIdentity = genuine) throws -> String {
                    try JWSSigner(identity: identity).sign(
                        payloadJSON: Array(try JSONSerialization.data(withJSONObject: claims)))
                }
                func leaf(
                    notBefore: Date = Date() - 86_400, notAfter: Date = Date() + 86_400, marker: Bool = true
                ) throws -> SigningIdentity {
                    let key = P256.Signing.PrivateKey()
                    let certificate = try Certificate(
                        version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
                        notValidBefore: notBefore, notValidAfter: notAfter, issuer: genuine.intermediate.subject,
                        subject: genuine.leaf.subject, signatureAlgorithm: .ecdsaWithSHA384,
                        extensions: try Certificate.Extensions {
                            Critical(BasicConstraints.notCertificateAuthority)
                            Critical(KeyUsage(digitalSignature: true))
                            if marker {
                                Certificate.Extension(
                                    oid: SigningProfile.leafMarkerOID, critical: false,
                                    value: SigningProfile.markerValue[...])
                            }
                        },
                        issuerPrivateKey: .init(intermediateKey))
                    return try SigningIdentity(
                        root: genuine.root, intermediate: genuine.intermediate, leaf: certificate, leafPrivateKey: key)
                }
                func header(alg: String = "ES256", x5c: [String]? = genuine.x5c) throws -> String {
                    var fields: [String: Any] = ["alg": alg]
                    if let x5c { fields["x5c"] = x5c }
                    return Self.encode(try JSONSerialization.data(withJSONObject: fields))
                }
                /// `parts[1]` under `header`, signed with the genuine leaf key over what it says.
                func resigned(_ header: String, key: P256.Signing.PrivateKey = genuine.leafPrivateKey) throws -> String
                {
                    let input = header + "." + parts[1]
                    return input + "." + Self.encode(try key.signature(for: Data(input.utf8)).rawRepresentation)
                }
                var flipped = Array(parts[2])
                flipped[10] = flipped[10] == "A" ? "B" : "A"
                let certificates = genuine.x5c

                let battery: [(String, String, String)] = [
                    ("not a JWS", "not-a-jws", "malformed_signed_data"),
                    ("two segments", parts[0] + "." + parts[1], "malformed_signed_data"),
                    ("four segments", bought + "." + parts[2], "malformed_signed_data"),
                    ("empty segments", "..", "malformed_signed_data"),
                    ("header not base64", "!!!." + parts[1] + "." + parts[2], "malformed_signed_data"),
                    (
                        "header not JSON", Self.encode(Data("nope".utf8)) + "." + parts[1] + "." + parts[2],
                        "malformed_signed_data"
                    ),
                    (
                        "payload not JSON", parts[0] + "." + Self.encode(Data("nope".utf8)) + "." + parts[2],
                        "malformed_signed_data"
                    ),
                    ("signature flipped", parts[0] + "." + parts[1] + "." + String(flipped), "invalid_signature"),
                    (
                        "signature truncated", parts[0] + "." + parts[1] + "." + String(parts[2].dropLast(6)),
                        "invalid_signature"
                    ),
                    ("no signature", parts[0] + "." + parts[1] + ".", "invalid_signature"),
                    (
                        "payload changed after signing",
                        parts[0] + "."
                            + Self.encode(
                                try JSONSerialization.data(withJSONObject: claims.merging(["quantity": 9]) { $1 }))
                            + "." + parts[2], "invalid_signature"
                    ),
                    ("a stranger's chain", try signed(claims, by: stranger), "invalid_signature"),
                    (
                        "genuine chain, a stranger's key", try resigned(parts[0], key: stranger.leafPrivateKey),
                        "invalid_signature"
                    ),
                    ("x5c of two", try resigned(try header(x5c: Array(certificates.prefix(2)))), "invalid_signature"),
                    (
                        "x5c of four", try resigned(try header(x5c: certificates + [certificates[2]])),
                        "invalid_signature"
                    ),
                    ("x5c empty", try resigned(try header(x5c: [])), "invalid_signature"),
                    ("no x5c", try resigned(try header(x5c: nil)), "invalid_signature"),
                    (
                        "x5c out of order",
                        try resigned(try header(x5c: [certificates[1], certificates[0], certificates[2]])),
                        "invalid_signature"
                    ),
                    ("x5c not base64", try resigned(try header(x5c: ["!!", "!!", "!!"])), "invalid_signature"),
                    (
                        "x5c not certificates", try resigned(try header(x5c: ["AAAA", "AAAA", "AAAA"])),
                        "invalid_signature"
                    ),
                    (
                        "x5c with the stranger's leaf",
                        try resigned(try header(x5c: [stranger.x5c[0]] + certificates.suffix(2))), "invalid_signature"
                    ),
                    ("alg none", try header(alg: "none") + "." + parts[1] + ".", "invalid_signature"),
                    ("alg ES384", try resigned(try header(alg: "ES384")), "invalid_signature"),
                    ("alg HS256", try resigned(try header(alg: "HS256")), "invalid_signature"),
                    (
                        "a leaf expired at signing",
                        try signed(claims, by: try leaf(notBefore: Date() - 3 * 86_400, notAfter: Date() - 86_400)),
                        "invalid_signature"
                    ),
                    (
                        "a leaf not yet valid",
                        try signed(claims, by: try leaf(notBefore: Date() + 86_400, notAfter: Date() + 3 * 86_400)),
                        "invalid_signature"
                    ),
                    (
                        "a leaf without Apple's marker", try signed(claims, by: try leaf(marker: false)),
                        "invalid_signature"
                    ),
                    (
                        "genuinely signed for another app",
                        try signed(claims.merging(["bundleId": "com.example.other"]) { $1 }), "wrong_app"
                    ),
                    (
                        "sandbox chain, claiming production",
                        try signed(claims.merging(["environment": "Production"]) { $1 }), "invalid_signature"
                    ),
                ]
                #expect(battery.count >= 25)
                for (forgery, jws, code) in battery {
                    let answer = try await merchant.deliver(jws, for: "alice")
                    #expect(answer.status == 400, "\(forgery): \(answer.text)")
                    #expect(
                        (answer.json["error"] as? [String: Any])?["code"] as? String == code,
                        "\(forgery): \(answer.text)")
                    let notified = try await merchant.request(
                        .POST, MerchantPaths.notifications, json: ["signedPayload": jws])
                    #expect(notified.status == 400, "\(forgery) as a notification: \(notified.text)")
                }
                #expect(try await merchant.entitlements(of: "alice").balances.isEmpty, "nothing was granted")
                try await merchant.expectHealthy()
                // The genuine purchase is still granted: the refusals were for the forgeries, not the user.
                let granted = try await merchant.deliver(bought, for: "alice")
                #expect(granted.status == 200, "\(granted.text)")
            }
        }
    }

    static func encode(_ data: Data) -> String {
        Base64.encodeToString(bytes: Array(data), options: [.base64UrlAlphabet, .omitPaddingCharacter])
    }

    static func decode(_ segment: String) throws -> Data {
        Data(try Base64.decode(string: segment, options: [.base64UrlAlphabet, .omitPaddingCharacter]))
    }
}
