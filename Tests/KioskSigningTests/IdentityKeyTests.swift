import Foundation
import KioskCore
import KioskSigning
import Testing

/// The identity key and the sealed form of a signing chain the database keeps: what every replica of a store opens.
@Suite("Identity key and sealed chains")
struct IdentityKeyTests {
    static let now = Date(timeIntervalSince1970: 1_767_225_600)
    static let ocspURL = "http://127.0.0.1:8080/ocsp/sandbox"

    // Proves a written key file is owner-only from the start, holds the 44-character text and a line break, reads
    // back as the same key, and is never overwritten.
    @Test func keyFileRoundTrip() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending(IdentityKey.fileName)
        let key = try IdentityKey.generate(source: "test").written(to: path)
        #expect(key.source == path)
        #expect(try permissions(of: path) == 0o600)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text == key.base64 + "\n" && key.base64.count == 44)
        #expect(try IdentityKey.read(from: path, ownerOnly: true).base64 == key.base64)
        #expect(throws: KioskError.self) { try IdentityKey.generate(source: "test").written(to: path) }
        #expect(try IdentityKey.read(from: path).base64 == key.base64, "the file was not replaced")
    }

    // Proves anything but base64 of 32 bytes is refused with a code naming where it came from, never a crash:
    // empty, too short, too long, not base64, NUL and control characters, a huge value.
    @Test(arguments: [
        "", "c2hvcnQ=", String(repeating: "A", count: 64), "not base64 at all!!!!!!!!!!!!!!!!!!!!!!!!!!",
        "\0", "AAAA\u{1B}AAAA", String(repeating: "QUFB", count: 100_000),
    ])
    func badKeyTextIsRefused(text: String) throws {
        let error = try #require(throws: KioskError.self) {
            try IdentityKey(base64: text, source: "KIOSK_IDENTITY_KEY")
        }
        #expect(error.code == .identityKeyInvalid && error.field == "KIOSK_IDENTITY_KEY", "\(error)")
    }

    // Proves surrounding whitespace (a line break from `cat`, a trailing space) is ignored.
    @Test func whitespaceAroundTheKeyIsIgnored() throws {
        let key = IdentityKey.generate(source: "test")
        #expect(try IdentityKey(base64: "  \(key.base64)\n", source: "test").base64 == key.base64)
    }

    // Proves a key file readable by others is refused when it must be owner-only, a missing file, a directory and a
    // huge file are refused with their codes.
    @Test func unusableKeyFilesAreRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let readable = directory.appending("readable.key")
        try Data((IdentityKey.generate(source: "test").base64 + "\n").utf8).write(to: URL(fileURLWithPath: readable))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: readable)
        #expect(try IdentityKey.read(from: readable).base64.count == 44, "an operator's file may be readable")
        let refused = try #require(throws: KioskError.self) { try IdentityKey.read(from: readable, ownerOnly: true) }
        #expect(refused.code == .identityKeyPermissions, "\(refused)")
        let missing = try #require(throws: KioskError.self) { try IdentityKey.read(from: directory.appending("none")) }
        #expect(missing.code == .identityKeyUnreadable, "\(missing)")
        let folder = try #require(throws: KioskError.self) { try IdentityKey.read(from: directory.path) }
        #expect(folder.code == .identityKeyUnreadable, "\(folder)")
        let huge = directory.appending("huge.key")
        try Data(repeating: UInt8(ascii: "A"), count: 1 << 20).write(to: URL(fileURLWithPath: huge))
        let tooLarge = try #require(throws: KioskError.self) { try IdentityKey.read(from: huge) }
        #expect(tooLarge.code == .identityKeyInvalid, "\(tooLarge)")
    }

    // Proves a sealed chain opens with its key to the same certificates and keys (CA keys included), with the root's
    // fingerprint readable without the key; another key is refused as the wrong key.
    @Test func sealedChainOpensOnlyWithItsKey() async throws {
        let chain = try SigningChain.generate(environment: .sandbox, now: Self.now, ocspURL: Self.ocspURL)
        let keys = SigningKeyStore.AuthorityKeys(
            rootPrivateKey: chain.rootPrivateKey, intermediatePrivateKey: chain.intermediatePrivateKey)
        let key = IdentityKey.generate(source: "first replica")
        let sealed = try SealedSigningChain(
            sealing: chain.identity, authorityKeys: keys, environment: .sandbox, version: 1, with: key, at: Self.now)
        #expect(try sealed.rootSHA256() == chain.identity.rootSHA256)

        let opened = try await sealed.open(with: key, now: Self.now)
        #expect(opened.identity.x5c == chain.identity.x5c)
        #expect(opened.identity.leafPrivateKey.rawRepresentation == chain.identity.leafPrivateKey.rawRepresentation)
        #expect(opened.authorityKeys?.rootPrivateKey.rawRepresentation == chain.rootPrivateKey.rawRepresentation)
        #expect(
            opened.authorityKeys?.intermediatePrivateKey.rawRepresentation
                == chain.intermediatePrivateKey.rawRepresentation)

        let wrong = try await #require(throws: KioskError.self) {
            try await sealed.open(with: IdentityKey.generate(source: "KIOSK_IDENTITY_KEY"), now: Self.now)
        }
        #expect(wrong.code == .signingIdentityKeyWrong && wrong.field == "KIOSK_IDENTITY_KEY", "\(wrong)")
    }

    // Proves a sealed key is bound to its environment and role: moved to the other environment's row, or swapped with
    // another column, it no longer opens; a row that is not what Kiosk writes is reported as corrupt.
    @Test func sealedKeysAreBoundToTheirPlace() async throws {
        let key = IdentityKey.generate(source: "test")
        func sealed(_ environment: StoreEnvironment) throws -> SealedSigningChain {
            let chain = try SigningChain.generate(environment: environment, now: Self.now)
            return try SealedSigningChain(
                sealing: chain.identity,
                authorityKeys: SigningKeyStore.AuthorityKeys(
                    rootPrivateKey: chain.rootPrivateKey, intermediatePrivateKey: chain.intermediatePrivateKey),
                environment: environment, version: 1, with: key, at: Self.now)
        }
        let sandbox = try sealed(.sandbox)
        var moved = try sealed(.production)
        moved.sealedLeafKey = sandbox.sealedLeafKey
        let movedError = try await #require(throws: KioskError.self) { try await moved.open(with: key, now: Self.now) }
        #expect(movedError.code == .signingIdentityKeyWrong, "\(movedError)")

        var swapped = sandbox
        swapped.sealedRootKey = sandbox.sealedIntermediateKey
        swapped.sealedIntermediateKey = sandbox.sealedRootKey
        let swappedError = try await #require(throws: KioskError.self) {
            try await swapped.open(with: key, now: Self.now)
        }
        #expect(swappedError.code == .signingIdentityKeyWrong, "\(swappedError)")

        var garbled = sandbox
        garbled.sealedLeafKey = "%%% not base64 %%%"
        let garbledError = try await #require(throws: KioskError.self) {
            try await garbled.open(with: key, now: Self.now)
        }
        #expect(garbledError.code == .signingIdentityCorrupt, "\(garbledError)")

        var oneCAKey = sandbox
        oneCAKey.sealedRootKey = nil
        let oneKeyError = try await #require(throws: KioskError.self) {
            try await oneCAKey.open(with: key, now: Self.now)
        }
        #expect(oneKeyError.code == .signingIdentityCorrupt, "\(oneKeyError)")
    }
}
