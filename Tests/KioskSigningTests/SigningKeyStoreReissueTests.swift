import Foundation
import KioskCore
import KioskSigning
import Testing
import X509

/// `SigningKeyStore.open(environment:now:ocspURL:)`: chains name the store's OCSP responder, and chains made before
/// (or for another URL) get a new intermediate and leaf from the same keys, under the same root.
@Suite("Signing chain reissue")
struct SigningKeyStoreReissueTests {
    static let now = Date(timeIntervalSince1970: 1_767_225_600)
    static let url = "http://127.0.0.1:8080/ocsp/sandbox"

    func sign(_ identity: SigningIdentity) throws -> String {
        try JWSSigner(identity: identity).sign(payloadJSON: Array(#"{"signedDate":1767225600000}"#.utf8))
    }

    // Proves a chain without AIA (as every chain before OCSP) is reissued: same root, same keys, new serials, the
    // URL in both certificates; payloads signed before still verify offline; a second start changes nothing; a new
    // URL reissues again.
    @Test func chainWithoutResponderIsReissuedUnderTheSameRoot() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = SigningKeyStore(baseDirectory: directory.path)
        let old = try await store.loadOrCreate(environment: .sandbox, now: Self.now).identity
        #expect(SigningProfile.ocspURL(of: old.leaf) == nil)
        let oldJWS = try sign(old)

        let opened = try await store.open(environment: .sandbox, now: Self.now, ocspURL: Self.url)
        #expect(opened.reissued && !opened.created && opened.namesExpectedOCSPURL)
        #expect(opened.authorityKeys != nil)
        let new = opened.identity
        #expect(new.root == old.root)
        #expect(new.intermediate.publicKey == old.intermediate.publicKey)
        #expect(new.leaf.publicKey == old.leaf.publicKey)
        #expect(new.intermediate.serialNumber != old.intermediate.serialNumber)
        #expect(new.leaf.serialNumber != old.leaf.serialNumber)
        #expect(new.intermediate.subject == old.intermediate.subject)
        #expect(new.leaf.notValidAfter == old.leaf.notValidAfter)
        #expect(SigningProfile.ocspURL(of: new.intermediate) == Self.url)
        #expect(SigningProfile.ocspURL(of: new.leaf) == Self.url)

        let verifier = JWSVerifier(rootCertificates: [old.root], clock: ManualClock(Self.now))
        #expect(await verifier.verify(oldJWS).payloadJSON != nil)
        #expect(await verifier.verify(try sign(new)).payloadJSON != nil)

        // What is on disk is the reissued chain; the next start keeps it.
        let again = try await store.open(environment: .sandbox, now: Self.now + 60, ocspURL: Self.url)
        #expect(!again.reissued && again.identity.leaf == new.leaf)

        let moved = try await store.open(
            environment: .sandbox, now: Self.now, ocspURL: "https://kiosk.example.com/ocsp/sandbox")
        #expect(moved.reissued && moved.identity.root == old.root)
        #expect(SigningProfile.ocspURL(of: moved.identity.leaf) == "https://kiosk.example.com/ocsp/sandbox")
    }

    // Proves a fresh directory gets a chain naming the URL, and an operator's chain without CA keys is kept as it is
    // (its OCSP requests cannot be answered).
    @Test func freshAndOperatorChains() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = SigningKeyStore(baseDirectory: directory.path)
        let fresh = try await store.open(environment: .production, now: Self.now, ocspURL: Self.url)
        #expect(fresh.created && !fresh.reissued && fresh.authorityKeys != nil)
        #expect(SigningProfile.ocspURL(of: fresh.identity.leaf) == Self.url)

        let sandbox = try await store.loadOrCreate(environment: .sandbox, now: Self.now).identity
        for name in [SigningKeyStore.FileName.rootKey, SigningKeyStore.FileName.intermediateKey] {
            try FileManager.default.removeItem(atPath: directory.appending("sandbox", name))
        }
        let kept = try await store.open(environment: .sandbox, now: Self.now, ocspURL: Self.url)
        #expect(!kept.reissued && kept.authorityKeys == nil && !kept.namesExpectedOCSPURL)
        #expect(kept.identity.leaf == sandbox.leaf)
    }
}
