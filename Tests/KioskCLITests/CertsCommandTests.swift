import Foundation
import KioskSigning
import KioskTestSupport
import KioskTesting
import Testing
import X509

@Suite struct CertsCommandTests {
    static var verifierScript: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Interop/verify_signed_data.py").path
    }

    /// A TEST notification the store signs verifies, in each environment, against the root `kiosk certs export`
    /// writes (DER and PEM give the same certificate) — and not against the other environment's root.
    @Test(arguments: ["sandbox", "production"])
    func signedDataVerifiesAgainstExportedRoot(environment: String) async throws {
        try await withTestStore { store in
            _ = try await store.createAppForCerts()
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("certs-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let der = directory.appendingPathComponent("root.der")
            let pem = directory.appendingPathComponent("root.pem")
            for (format, file) in [("der", der), ("pem", pem)] {
                let export = try await kiosk(
                    store, "certs", "export", "--environment", environment, "--format", format, "--output", file.path)
                #expect(export.status == 0, "\(export.stderr)")
            }
            let root = try Certificate(derEncoded: Array(try Data(contentsOf: der)))
            #expect(try Certificate(pemEncoded: try String(contentsOf: pem, encoding: .utf8)) == root)

            let signed = try await kiosk(
                store, "certs", "test-notification", "--app", "com.example.certs", "--environment", environment)
            #expect(signed.status == 0, "\(signed.stderr)")
            let jws = signed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(jws.split(separator: ".").count == 3)

            let verified = await JWSVerifier(rootCertificates: [root]).verify(jws)
            let payload = try #require(verified.payloadJSON, "\(String(describing: verified.failure))")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
            #expect(object["notificationType"] as? String == "TEST")
            let data = try #require(object["data"] as? [String: Any], "\(object)")
            #expect(data["environment"] as? String == (environment == "sandbox" ? "Sandbox" : "Production"))
            #expect(data["bundleId"] as? String == "com.example.certs")

            let otherEnvironment = environment == "sandbox" ? "production" : "sandbox"
            let other = try await store.request(.GET, "/admin/v1/certificates/\(otherEnvironment)/root?format=der")
            let otherRoot = try Certificate(derEncoded: Array(other.body))
            #expect(
                await JWSVerifier(rootCertificates: [otherRoot]).verify(jws).failure != nil, "environments never mix")

        }
    }

    /// Apple's own `SignedDataVerifier` (PyPI app-store-server-library, OpenSSL with X509_STRICT) accepts a TEST
    /// notification the store signed, checked against the root `kiosk certs export` wrote, in both environments.
    @Test(
        .enabled(
            if: TestEnvironment.runs(.python),
            "set KIOSK_TEST_PYTHON to a python with app-store-server-library (.ci/run does)"),
        arguments: ["sandbox", "production"])
    func appleVerifierAcceptsExportedRoot(environment: String) async throws {
        let python = try TestEnvironment.require(.python)
        try await withTestStore { store in
            _ = try await store.createAppForCerts()
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("apple-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let der = directory.appendingPathComponent("root.der")
            let export = try await kiosk(
                store, "certs", "export", "--environment", environment, "--format", "der", "--output", der.path)
            #expect(export.status == 0, "\(export.stderr)")
            let signed = try await kiosk(
                store, "certs", "test-notification", "--app", "com.example.certs", "--environment", environment)
            try #require(signed.status == 0, "\(signed.stderr)")
            let jwsFile = directory.appendingPathComponent("notification.jws")
            try Data(signed.stdout.trimmingCharacters(in: .whitespacesAndNewlines).utf8).write(to: jwsFile)
            let appleVerifier = try await KioskProcess.run(
                [
                    Self.verifierScript, "--root-der", der.path, "--environment",
                    environment == "sandbox" ? "Sandbox" : "Production", "--bundle-id", "com.example.certs",
                    "--app-apple-id", "1400000001", "--kind", "notification", "--jws-file", jwsFile.path,
                ], executable: URL(fileURLWithPath: python))
            #expect(
                appleVerifier.status == 0,
                "Apple's SignedDataVerifier refused Kiosk's data: \(appleVerifier.stdout)\(appleVerifier.stderr)")
            #expect(appleVerifier.stdout.contains("\"TEST\""), "the decoded notification: \(appleVerifier.stdout)")
        }
    }

    /// `kiosk certs revoke` revokes the leaf: a verifier with online checks accepts a notification the store signed
    /// before and refuses it after; revoking again says so; `kiosk certs revocations` lists it, `--json` too; a
    /// certificate that is not leaf or intermediate is refused with the store's explanation.
    @Test func revokeMakesOnlineVerificationFail() async throws {
        try await withTestStore(port: .free) { store in
            let app = try await store.createAppForCerts()
            let appAppleId = try #require(app.json["appAppleId"] as? Int)
            let signed = try await kiosk(
                store, "certs", "test-notification", "--app", "com.example.certs", "--environment", "production")
            try #require(signed.status == 0, "\(signed.stderr)")
            let jws = signed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let exported = try await store.request(.GET, "/admin/v1/certificates/production/root?format=der")
            let root = try Certificate(derEncoded: Array(exported.body))
            func verify() async throws -> NotificationPayload {
                // A new verifier each time, so no verified chain is remembered between the checks.
                try await SignedDataVerifier(
                    rootCertificates: [root], environment: .production, bundleId: "com.example.certs",
                    appAppleId: Int64(appAppleId), onlineChecks: .enabled(transport: testOCSPTransport)
                ).verifyAndDecodeNotification(jws)
            }
            #expect(try await verify().notificationType == .test)

            let revoke = try await kiosk(
                store, "certs", "revoke", "--environment", "production", "--certificate", "leaf", "--reason", "4")
            #expect(revoke.status == 0, "\(revoke.stderr)")
            #expect(revoke.stdout.hasPrefix("Revoked the production leaf"), "\(revoke.stdout)")
            // Refused because the responder says revoked: not retryable, as a responder that cannot answer would be.
            let refusal = await #expect(throws: SignedDataVerificationError.self) { _ = try await verify() }
            #expect(refusal?.status == .verificationFailure, "\(String(describing: refusal))")

            let again = try await kiosk(
                store, "certs", "revoke", "--environment", "production", "--certificate", "leaf", "--json")
            #expect(again.status == 0, "\(again.stderr)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])
            #expect(json["certificate"] as? String == "leaf")
            #expect(json["reason"] as? Int == 4, "the first revocation's reason: \(again.stdout)")
            let third = try await kiosk(
                store, "certs", "revoke", "--environment", "production", "--certificate", "leaf")
            #expect(third.status == 0, "\(third.stderr)")
            #expect(third.stdout.hasPrefix("Already revoked the production leaf"), "\(third.stdout)")
            let list = try await kiosk(store, "certs", "revocations", "--environment", "production")
            #expect(list.status == 0, "\(list.stderr)")
            #expect(
                list.stdout.hasPrefix("leaf  serial ") && list.stdout.hasSuffix("  reason 4\n")
                    && list.stdout.split(separator: "\n").count == 1, "one revocation: \(list.stdout)")

            let refused = try await kiosk(
                store, "certs", "revoke", "--environment", "sandbox", "--certificate", "root")
            #expect(refused.status == 1, "\(refused.stdout)")
            #expect(refused.stdout.isEmpty, "\(refused.stdout)")
            #expect(
                refused.stderr.hasPrefix("error: The field 'certificate' has an invalid value")
                    && refused.stderr.contains("root"), "\(refused.stderr)")
            #expect(refused.stderr.contains("\n  at:  --certificate (certificate)\n  fix: "), "\(refused.stderr)")
            // Nothing was revoked in the sandbox.
            let sandboxList = try await kiosk(
                store, "certs", "revocations", "--environment", "sandbox")
            #expect(sandboxList.status == 0, "\(sandboxList.stderr)")
            #expect(sandboxList.stdout == "No revoked certificates in sandbox.\n", "\(sandboxList.stdout)")
        }
    }
}

extension TestStore {
    func createAppForCerts() async throws -> Answer {
        try await request(.POST, "/admin/v1/apps", json: ["bundleId": "com.example.certs", "name": "Certs"])
    }
}
