import Foundation
import KioskCore
import KioskSigning
import KioskTestSupport
import KioskTesting
import Testing
import X509

/// The store's OCSP responder over HTTP, revocation through the admin API, and verifiers with online checks on
/// (Kiosk's own, and Apple's Python library) asking it about a purchased transaction.
@Suite struct OCSPResponderTests {

    /// Buys remove-ads in `environment` and returns the signed transaction, the exported root and the app's Apple id.
    static func purchase(_ store: TestStore, sandbox: Bool) async throws -> (
        jws: String, root: Certificate, appAppleId: Int64
    ) {
        try await store.preparePurchaseCatalog()
        let app = try await store.request(.GET, "/admin/v1/apps/\(TestStore.bundleId)")
        var email = TestStore.testerEmail
        if !sandbox {
            for action in ["submit", "approve"] {
                _ = try await store.request(
                    .POST, "/admin/v1/apps/\(TestStore.bundleId)/products/\(TestStore.removeAds)/review",
                    json: ["action": action])
            }
            email = "buyer@example.com"
            _ = try await store.request(
                .POST, "/admin/v1/accounts", json: ["email": email, "password": TestStore.password])
        }
        let token = try await store.signIn(email, sandbox: sandbox)
        let bought = try await store.pay(TestStore.removeAds, token: token, sandbox: sandbox)
        let jws = try #require(
            (bought.json["transaction"] as? [String: Any])?["signedTransaction"] as? String, "\(bought.text)")
        let root = try await store.request(
            .GET, "/admin/v1/certificates/\(sandbox ? "sandbox" : "production")/root?format=der")
        return (jws, try Certificate(derEncoded: Array(root.body)), Int64(try #require(app.json["appAppleId"] as? Int)))
    }

    static func onlineVerifier(root: Certificate, environment: StoreEnvironment, appAppleId: Int64) throws
        -> SignedDataVerifier
    {
        try SignedDataVerifier(
            rootCertificates: [root], environment: environment, bundleId: TestStore.bundleId, appAppleId: appAppleId,
            onlineChecks: .enabled(transport: testOCSPTransport))
    }

    // Proves, over HTTP on a live store, that Kiosk's verifier with online checks accepts a purchased transaction,
    // and refuses it once the leaf is revoked through the admin API (idempotently), while offline checks still pass.
    @Test(arguments: TestDatabase.available)
    func onlineVerificationFollowsAdminRevocation(database: TestDatabase) async throws {
        try await withTestStore(engine: database, port: .free) { store in
            let (jws, root, appAppleId) = try await Self.purchase(store, sandbox: true)
            let leaf = store.built.signing.identity(.sandbox).leaf
            #expect(SigningProfile.ocspURL(of: leaf) == "\(store.baseURL)/ocsp/sandbox")
            _ = try await Self.onlineVerifier(root: root, environment: .sandbox, appAppleId: appAppleId)
                .verifyAndDecodeTransaction(jws)

            let revoked = try await store.request(
                .POST, "/admin/v1/certificates/sandbox/revocations", json: ["certificate": "leaf", "reason": 1])
            #expect(revoked.status == 201, "\(revoked.text)")
            #expect(revoked.json["certificate"] as? String == "leaf")
            #expect(revoked.json["serialNumber"] as? String == OCSPResponder.serialKey(leaf))
            #expect(revoked.json["reason"] as? Int == 1)
            let again = try await store.request(
                .POST, "/admin/v1/certificates/sandbox/revocations", json: ["certificate": "leaf"])
            #expect(again.status == 200)
            let revokedAt = try #require(revoked.json["revokedAt"] as? String, "\(revoked.text)")
            #expect(again.json["revokedAt"] as? String == revokedAt)
            #expect(again.json["reason"] as? Int == 1, "the first revocation stays as it was")
            let list = try await store.request(.GET, "/admin/v1/certificates/sandbox/revocations")
            #expect((list.json["revocations"] as? [[String: Any]])?.count == 1)
            let production = try await store.request(.GET, "/admin/v1/certificates/production/revocations")
            #expect((production.json["revocations"] as? [[String: Any]])?.isEmpty == true)

            do {
                _ = try await Self.onlineVerifier(root: root, environment: .sandbox, appAppleId: appAppleId)
                    .verifyAndDecodeTransaction(jws)
                Issue.record("a transaction signed by a revoked leaf passed online checks")
            } catch let error as SignedDataVerificationError {
                #expect(error.status == .verificationFailure)
                #expect(error.detail.contains("revoked"), "\(error)")
            }
            let offline = try SignedDataVerifier(
                rootCertificates: [root], environment: .sandbox, bundleId: TestStore.bundleId, appAppleId: nil)
            _ = try await offline.verifyAndDecodeTransaction(jws)

            for (body, code, field) in [
                (["certificate": "root"], "invalid_value", "certificate"),
                (["certificate": "leaf", "reason": 7], "invalid_reason", "reason"),
                ([:], "missing_field", "certificate"),
            ] as [([String: Any], String, String)] {
                let refused = try await store.request(.POST, "/admin/v1/certificates/sandbox/revocations", json: body)
                #expect(refused.status == 400, "\(body): \(refused.text)")
                #expect(refused.errorCode == code, "\(body): \(refused.text)")
                #expect(refused.errorField == field, "\(body): \(refused.text)")
            }
        }
    }

    // Proves the responder's HTTP surface: POST and the RFC 6960 GET form answer `application/ocsp-response`;
    // unreadable requests get `malformedRequest`, a request about the other environment's chain `unauthorized`, and
    // a POST without the OCSP content type a 400 that says which type to send.
    @Test func responderHTTPAnswers() async throws {
        try await withTestStore { store in
            let sandbox = store.built.signing.identity(.sandbox)
            let production = store.built.signing.identity(.production)
            func ask(_ environment: String, _ body: [UInt8]) async throws -> OCSP.Response {
                let answer = try await store.request(
                    .POST, "/ocsp/\(environment)", body: Data(body),
                    headers: ["Content-Type": "application/ocsp-request"])
                #expect(answer.status == 200)
                #expect(answer.header("Content-Type") == "application/ocsp-response")
                return try OCSP.Response(derEncoded: Array(answer.body))
            }
            let leafRequest = try OCSP.Request(certIDs: [
                OCSP.CertID(certificate: sandbox.leaf, issuer: sandbox.intermediate)
            ])
            .derEncoded()
            let good = try await ask("sandbox", leafRequest)
            #expect(good.basic?.responseData.responses.map(\.status) == [.good])
            #expect(try await ask("sandbox", [0x30, 0x03, 0x02, 0x01, 0x00]).status == .malformedRequest)
            #expect(try await ask("sandbox", Array("hello".utf8)).status == .malformedRequest)
            #expect(try await ask("production", leafRequest).status == .unauthorized)
            let productionRequest = try OCSP.Request(
                certIDs: [OCSP.CertID(certificate: production.intermediate, issuer: production.root, sha256: false)]
            ).derEncoded()
            #expect(
                try await ask("production", productionRequest).basic?.responseData.responses.map(\.status) == [.good])

            // GET: base64 of the DER, URL-encoded ('/' as %2F, '+' as %2B, '=' as %3D).
            let encoded =
                Data(leafRequest).base64EncodedString()
                .addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let viaGet = try await store.request(.GET, "/ocsp/sandbox/\(encoded)")
            #expect(viaGet.status == 200)
            #expect(
                try OCSP.Response(derEncoded: Array(viaGet.body)).basic?.responseData.responses.map(\.status) == [.good]
            )
            let garbage = try await store.request(.GET, "/ocsp/sandbox/bm90LWFuLW9jc3AtcmVxdWVzdA%3D%3D")
            #expect(try OCSP.Response(derEncoded: Array(garbage.body)).status == .malformedRequest)

            let untyped = try await store.request(
                .POST, "/ocsp/sandbox", body: Data(leafRequest), headers: ["Content-Type": "application/octet-stream"])
            #expect(untyped.status == 400)
            #expect(untyped.text.contains("application/ocsp-request"))
            let elsewhere = try await store.request(.GET, "/ocsp/elsewhere/AAAA")
            #expect(elsewhere.status == 400)
            #expect(elsewhere.errorCode == "invalid_environment", "\(elsewhere.text)")
        }
    }

    // Proves a store restarted on a new URL reissues both chains' intermediate and leaf under the same roots, and
    // the transactions signed before still verify offline against the root merchants already trust.
    @Test(arguments: TestDatabase.available)
    func restartOnNewURLReissuesUnderTheSameRoot(database: TestDatabase) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kiosk-reissue-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await database.withFreshDatabase { databaseURL in
            let (jws, root) = try await withTestStore(databaseURL: databaseURL, dataDirectory: directory) { store in
                #expect(
                    SigningProfile.ocspURL(of: store.built.signing.identity(.sandbox).leaf)
                        == "http://127.0.0.1:0/ocsp/sandbox")
                let bought = try await Self.purchase(store, sandbox: true)
                return (bought.jws, bought.root)
            }
            try await withTestStore(databaseURL: databaseURL, dataDirectory: directory, port: .free) { store in
                #expect(Set(store.built.report.reissuedSigningChains) == Set(StoreEnvironment.allCases))
                let identity = store.built.signing.identity(.sandbox)
                #expect(identity.root == root)
                #expect(SigningProfile.ocspURL(of: identity.leaf) == "\(store.baseURL)/ocsp/sandbox")
                #expect(SigningProfile.ocspURL(of: identity.intermediate) == "\(store.baseURL)/ocsp/sandbox")
                let offline = try SignedDataVerifier(
                    rootCertificates: [root], environment: .sandbox, bundleId: TestStore.bundleId, appAppleId: nil)
                _ = try await offline.verifyAndDecodeTransaction(jws)
                // New signatures carry the reissued chain, which online checks accept.
                let token = try await store.signIn(TestStore.testerEmail, sandbox: true)
                let bought = try await store.pay(TestStore.coins, token: token, sandbox: true)
                let fresh = try #require(
                    (bought.json["transaction"] as? [String: Any])?["signedTransaction"] as? String)
                let appAppleId = try #require(
                    try await store.request(.GET, "/admin/v1/apps/\(TestStore.bundleId)").json["appAppleId"] as? Int)
                _ = try await Self.onlineVerifier(root: root, environment: .sandbox, appAppleId: Int64(appAppleId))
                    .verifyAndDecodeTransaction(fresh)
            }
        }
    }

    // Proves Apple's own SignedDataVerifier with `enable_online_checks=True` accepts a Kiosk transaction (it asks
    // the store's responder about the intermediate and the leaf), then refuses it with VERIFICATION_FAILURE once
    // the leaf is revoked.
    @Test(
        .enabled(
            if: TestEnvironment.runs(.python),
            "set KIOSK_TEST_PYTHON (.ci/run does) to a python with PyPI app-store-server-library"),
        arguments: ["Sandbox", "Production"])
    func appleOnlineVerifierFollowsRevocation(environment: String) async throws {
        let sandbox = environment == "Sandbox"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-ocsp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestStore(port: .free) { store in
            let (jws, root, appAppleId) = try await Self.purchase(store, sandbox: sandbox)
            let jwsFile = directory.appendingPathComponent("transaction.jws")
            let rootFile = directory.appendingPathComponent("root.der")
            try jws.write(to: jwsFile, atomically: true, encoding: .ascii)
            try Data(try root.derBytes()).write(to: rootFile)
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Interop/verify_signed_data.py").path
            let arguments = [
                script, "--root-der", rootFile.path, "--environment", environment, "--bundle-id", TestStore.bundleId,
                "--app-apple-id", String(appAppleId), "--kind", "transaction", "--jws-file", jwsFile.path, "--online",
            ]
            let (accepted, acceptedOutput) = try await runProcess(try TestEnvironment.require(.python), arguments)
            #expect(accepted == 0, "\(acceptedOutput)")

            let revoked = try await store.request(
                .POST, "/admin/v1/certificates/\(environment.lowercased())/revocations", json: ["certificate": "leaf"])
            #expect(revoked.status == 201, "\(revoked.text)")
            let (refused, refusedOutput) = try await runProcess(try TestEnvironment.require(.python), arguments)
            #expect(refused == 1, "\(refusedOutput)")
            #expect(refusedOutput.contains("VerificationException VERIFICATION_FAILURE"), "\(refusedOutput)")
        }
    }
}

extension Certificate {
    /// The certificate's DER bytes.
    func derBytes() throws -> [UInt8] {
        Array(try serializeAsPEM().derBytes)
    }
}
