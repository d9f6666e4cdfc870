import Foundation
import KioskCore
import KioskTestSupport
import KioskTesting
import SwiftASN1
import Testing
import X509

/// Apple's own `SignedDataVerifier` (PyPI app-store-server-library) as a check any store test can apply to what
/// the store signed: each payload must pass the verifier for its environment, and what Apple's model decodes must
/// equal, field for field, what Kiosk signed (a field Apple's model does not know, or a value it cannot take, is
/// dropped by the model and so fails here; only Kiosk's `kioskRevision` is expected to be dropped). A
/// notification's nested transaction and renewal info are checked too.
enum AppleVerifier {
    /// The kinds of signed data Apple's verifier decodes.
    enum Kind: String, Sendable {
        case notification
        case transaction
        case renewal
        case appTransaction = "app-transaction"
        /// The Retention Messaging API's real-time request (`DecodedRealtimeRequestBody`).
        case realtimeRequest = "realtime-request"
    }

    /// Kiosk's one addition to Apple's transaction payload: Apple's model passes over it as it passes over any
    /// field it does not know, so a receiver built on Apple's library decodes everything else unchanged.
    static let kioskExtensions: Set<String> = ["kioskRevision"]

    /// Fields Apple signs that Apple's Python model (3.1.2) does not decode: StoreKit's `AppTransaction` has
    /// `signedDate`, the library's `AppTransaction` model has no field for it.
    static let pythonModelGaps: [Kind: Set<String>] = [.appTransaction: ["signedDate"]]

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Interop/verify_signed_payloads.py")

    /// Records an issue for every payload of `kind` (and every transaction and renewal info nested in a
    /// notification) that Apple's verifier refuses, or decodes into something else than Kiosk signed. Does nothing
    /// where Python is absent (and fails the test in CI, through `TestEnvironment`). Renewal info names no app:
    /// pass its `bundleId`.
    static func expectAccepts(
        _ payloads: [String], kind: Kind, store: TestStore, environment: StoreEnvironment = .sandbox,
        bundleId given: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        guard !payloads.isEmpty, TestEnvironment.runs(.python) else { return }
        var batch: [(kind: Kind, jws: String)] = []
        var bundleId = given
        for jws in payloads {
            batch.append((kind, jws))
            guard kind == .notification else { continue }
            let claims = try claims(of: jws)
            if let data = claims["data"] as? [String: Any] {
                bundleId = bundleId ?? data["bundleId"] as? String
                if let transaction = data["signedTransactionInfo"] as? String {
                    batch.append((.transaction, transaction))
                }
                if let renewal = data["signedRenewalInfo"] as? String { batch.append((.renewal, renewal)) }
            }
            if let appData = claims["appData"] as? [String: Any] {
                bundleId = bundleId ?? appData["bundleId"] as? String
                if let app = appData["signedAppTransactionInfo"] as? String { batch.append((.appTransaction, app)) }
            }
        }
        let claimedBundle = try bundleId ?? (try claims(of: payloads[0])["bundleId"] as? String)
        let bundle = try #require(claimedBundle, "no bundleId in \(payloads[0])", sourceLocation: sourceLocation)
        let app = try await store.request(.GET, "/admin/v1/apps/\(bundle)")
        let appAppleId = try #require(app.json["appAppleId"] as? Int, "\(app.text)", sourceLocation: sourceLocation)
        var serializer = DER.Serializer()
        try serializer.serialize(store.built.signing.identity(environment).root)
        let input: [String: Any] = [
            "rootDer": Data(serializer.serializedBytes).base64EncodedString(),
            "environment": environment == .sandbox ? "Sandbox" : "Production", "bundleId": bundle,
            "appAppleId": appAppleId, "payloads": batch.map { ["kind": $0.kind.rawValue, "jws": $0.jws] },
        ]
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("apple-verifier-\(UUID()).json")
        try JSONSerialization.data(withJSONObject: input).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let (status, output) = try await runProcess(try TestEnvironment.require(.python), [script.path, file.path])
        try #require(status == 0, "\(output)", sourceLocation: sourceLocation)
        let results = try #require(
            try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]], "\(output)",
            sourceLocation: sourceLocation)
        try #require(results.count == batch.count, "\(output)", sourceLocation: sourceLocation)
        for ((kind, jws), result) in zip(batch, results) {
            let signed = try claims(of: jws)
            let name = "\(kind.rawValue) \(signed["notificationType"] ?? signed["transactionId"] ?? "")"
            guard let decoded = result["decoded"] as? [String: Any] else {
                Issue.record("Apple's verifier refused the \(name): \(result)", sourceLocation: sourceLocation)
                continue
            }
            if kind == .transaction {
                #expect(
                    (signed["kioskRevision"] as? Int ?? 0) >= 1, "\(name) carries no kioskRevision: \(signed)",
                    sourceLocation: sourceLocation)
            }
            #expect(
                NSDictionary(dictionary: decoded)
                    == NSDictionary(
                        dictionary: signed.filter {
                            !kioskExtensions.contains($0.key) && !(pythonModelGaps[kind] ?? []).contains($0.key)
                        }),
                "Apple's model decodes the \(name) as \(decoded), Kiosk signed \(signed)",
                sourceLocation: sourceLocation)
        }
    }

    /// The claims of a compact JWS, unverified (the verifier's answer is compared with them).
    static func claims(of jws: String) throws -> [String: Any] {
        let parts = jws.split(separator: ".")
        guard parts.count == 3 else { return [:] }
        var base64 = String(parts[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        let data = try #require(Data(base64Encoded: base64))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}
