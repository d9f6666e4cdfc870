import Crypto
import Foundation
import KioskCore
import KioskSigning
import Testing
import X509

@Suite("Signing key store")
struct SigningKeyStoreTests {
    let now = Date(timeIntervalSince1970: 1_767_225_600)

    /// Runs `body` with a key store in a fresh temporary directory, removed afterwards.
    func withStore(_ body: (SigningKeyStore, TemporaryDirectory) async throws -> Void) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await body(SigningKeyStore(baseDirectory: directory.appending("signing")), directory)
    }

    /// Expects a KioskError with `code` whose field names `file`.
    func expectError(
        _ code: ErrorCode,
        naming file: String,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () async throws -> Void
    ) async {
        do {
            try await body()
            Issue.record("expected \(code)", sourceLocation: sourceLocation)
        } catch let error as KioskError {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
            #expect(
                error.field?.hasSuffix(file) == true, "field \(String(describing: error.field))",
                sourceLocation: sourceLocation)
            #expect(error.message.contains(file), sourceLocation: sourceLocation)
            #expect(error.fix?.isEmpty == false, sourceLocation: sourceLocation)
        } catch {
            Issue.record("expected KioskError \(code), got \(error)", sourceLocation: sourceLocation)
        }
    }

    // Proves the first start writes every file, keys and directory owner-only, and a second start loads the same
    // identity.
    @Test func createsOwnerOnlyFilesAndReloads() async throws {
        try await withStore { store, _ in
            let (created, wasCreated) = try await store.loadOrCreate(environment: .sandbox, now: now)
            #expect(wasCreated)
            let directory = store.directory(for: .sandbox)
            #expect(try permissions(of: directory) == 0o700)
            for name in SigningKeyStore.FileName.privateKeys {
                #expect(try permissions(of: (directory as NSString).appendingPathComponent(name)) == 0o600, "\(name)")
            }
            let leafKeyPEM = try String(
                contentsOfFile: (directory as NSString).appendingPathComponent("leaf-key.pem"), encoding: .utf8)
            #expect(leafKeyPEM.hasPrefix("-----BEGIN PRIVATE KEY-----"))
            #expect(try FileManager.default.contentsOfDirectory(atPath: store.baseDirectory) == ["sandbox"])

            let (loaded, loadedCreated) = try await store.loadOrCreate(environment: .sandbox, now: now + 86_400)
            #expect(!loadedCreated)
            #expect(loaded.x5c == created.x5c)
            #expect(loaded.rootDER == created.rootDER)
            #expect(loaded.leafPrivateKey.rawRepresentation == created.leafPrivateKey.rawRepresentation)
        }
    }

    // Proves production and sandbox get separate chains in separate directories.
    @Test func environmentsAreSeparate() async throws {
        try await withStore { store, _ in
            let sandbox = try await store.loadOrCreate(environment: .sandbox, now: now).identity
            let production = try await store.loadOrCreate(environment: .production, now: now).identity
            #expect(sandbox.rootDER != production.rootDER)
            #expect("\(production.leaf.subject)".contains("Production"))
        }
    }

    // Proves an operator's own chain (three certificates and the leaf key, no CA keys) loads and signs verifiably.
    @Test func loadsOperatorSuppliedChain() async throws {
        try await withStore { store, _ in
            let chain = try TestChain.build(now: now)
            let directory = store.directory(for: .production)
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try write(try chain.root.serializeAsPEM().pemString, to: directory + "/root.pem", mode: 0o644)
            try write(
                try chain.intermediate.serializeAsPEM().pemString, to: directory + "/intermediate.pem", mode: 0o644)
            try write(try chain.leaf.serializeAsPEM().pemString, to: directory + "/leaf.pem", mode: 0o644)
            try write(chain.leafKey.pemRepresentation, to: directory + "/leaf-key.pem")

            let (identity, created) = try await store.loadOrCreate(environment: .production, now: now)
            #expect(!created)
            #expect(identity.root == chain.root)
            let jws = try JWSSigner(identity: identity).sign(payloadJSON: Array(#"{"signedDate":1767225600000}"#.utf8))
            #expect(await JWSVerifier(rootCertificates: [chain.root]).verify(jws).payloadJSON != nil)
        }
    }

    // Proves a leaf key that does not belong to the leaf certificate is refused, naming leaf-key.pem.
    @Test func rejectsMismatchedKey() async throws {
        try await withStore { store, _ in
            _ = try await store.loadOrCreate(environment: .sandbox, now: now)
            let path = store.directory(for: .sandbox) + "/leaf-key.pem"
            try FileManager.default.removeItem(atPath: path)
            try write(P256.Signing.PrivateKey().pemRepresentation, to: path)
            await expectError(.signingKeyMismatch, naming: "leaf-key.pem") {
                _ = try await store.loadOrCreate(environment: .sandbox, now: now)
            }
        }
    }

    // Proves a half-written directory is an error naming the missing file, never silently regenerated.
    @Test(arguments: SigningKeyStore.FileName.required)
    func rejectsMissingFile(name: String) async throws {
        try await withStore { store, _ in
            _ = try await store.loadOrCreate(environment: .sandbox, now: now)
            try FileManager.default.removeItem(atPath: store.directory(for: .sandbox) + "/" + name)
            await expectError(.signingChainIncomplete, naming: name) {
                _ = try await store.loadOrCreate(environment: .sandbox, now: now)
            }
        }
    }

    // Proves a certificate or key file that is not valid PEM is refused, naming the file.
    @Test(arguments: [
        ("leaf.pem", ErrorCode.signingCertificateInvalid), ("root.pem", ErrorCode.signingCertificateInvalid),
        ("intermediate.pem", ErrorCode.signingCertificateInvalid), ("leaf-key.pem", ErrorCode.signingKeyInvalid),
        ("root-key.pem", ErrorCode.signingKeyInvalid),
    ])
    func rejectsCorruptPEM(name: String, code: ErrorCode) async throws {
        try await withStore { store, _ in
            _ = try await store.loadOrCreate(environment: .sandbox, now: now)
            let path = store.directory(for: .sandbox) + "/" + name
            try FileManager.default.removeItem(atPath: path)
            try write("-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n", to: path)
            await expectError(code, naming: name) {
                _ = try await store.loadOrCreate(environment: .sandbox, now: now)
            }
        }
    }

    // Proves a private key readable by group or others is refused with a chmod fix.
    @Test func rejectsReadableKey() async throws {
        try await withStore { store, _ in
            _ = try await store.loadOrCreate(environment: .sandbox, now: now)
            let path = store.directory(for: .sandbox) + "/leaf-key.pem"
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
            await expectError(.signingKeyPermissions, naming: "leaf-key.pem") {
                _ = try await store.loadOrCreate(environment: .sandbox, now: now)
            }
        }
    }

    // Proves an operator chain without the leaf marker, or one expired at startup, is refused with a clear code.
    @Test(arguments: ["marker", "expired"])
    func rejectsUnusableOperatorChain(variant: String) async throws {
        try await withStore { store, _ in
            let chain = try TestChain.build(now: now) { options in
                if variant == "marker" { options.leafMarker = false } else { options.leafNotAfter = now - 60 }
            }
            let directory = store.directory(for: .sandbox)
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try write(try chain.root.serializeAsPEM().pemString, to: directory + "/root.pem")
            try write(try chain.intermediate.serializeAsPEM().pemString, to: directory + "/intermediate.pem")
            try write(try chain.leaf.serializeAsPEM().pemString, to: directory + "/leaf.pem")
            try write(chain.leafKey.pemRepresentation, to: directory + "/leaf-key.pem")
            let (code, file) =
                variant == "marker"
                ? (ErrorCode.signingMarkerMissing, "leaf.pem") : (ErrorCode.signingChainInvalid, "sandbox")
            await expectError(code, naming: file) {
                _ = try await store.loadOrCreate(environment: .sandbox, now: now)
            }
        }
    }

    // Proves an empty pre-created directory is filled rather than treated as half-written.
    @Test func fillsEmptyDirectory() async throws {
        try await withStore { store, _ in
            try FileManager.default.createDirectory(
                atPath: store.directory(for: .sandbox), withIntermediateDirectories: true)
            #expect(try await store.loadOrCreate(environment: .sandbox, now: now).created)
        }
    }
}
