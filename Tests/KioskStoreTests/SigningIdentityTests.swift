import Foundation
import KioskCore
import KioskSigning
import KioskStorage
import KioskStore
import KioskTestSupport
import KioskTesting
import Testing

/// The store's signing identity lives in its database: a second data directory given the identity key adopts it,
/// a start on a new public URL reissues it there (compare and swap on its version), and a later start anywhere
/// takes the reissued chain instead of reissuing again. Stores here start one after another on one database.
@Suite struct SigningIdentityTests {
    @Test(arguments: TestDatabase.available)
    func reissueIsWrittenBackAndAdoptedByTheNextStart(database: TestDatabase) async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-identity-\(UUID())")
        defer { try? FileManager.default.removeItem(at: root) }
        let first = root.appendingPathComponent("first")
        let second = root.appendingPathComponent("second")
        try await database.withFreshDatabase { fresh in
            let url = fresh ?? "sqlite://" + root.appendingPathComponent("shared.sqlite").path
            let created = try await withTestStore(databaseURL: url, dataDirectory: first) { store in
                #expect(store.built.report.signingIdentityOrigin == .created)
                #expect(Set(store.built.report.generatedSigningChains) == Set(StoreEnvironment.allCases))
                let versions = try await Self.versions(store)
                #expect(versions == [.production: 1, .sandbox: 1])
                return store.built.signing.identity(.sandbox)
            }

            // The second data directory gets the key as an operator would copy it; its store names another OCSP
            // URL (its own port), so it reissues the database's chains: version 2, same root.
            try FileManager.default.createDirectory(at: second, withIntermediateDirectories: true)
            let key = try String(contentsOf: first.appendingPathComponent("identity.key"), encoding: .utf8)
            #expect(
                FileManager.default.createFile(
                    atPath: second.appendingPathComponent("identity.key").path, contents: Data(key.utf8),
                    attributes: [.posixPermissions: 0o600]))
            let (port, reissued) = try await withTestStore(databaseURL: url, dataDirectory: second, port: .free) {
                store in
                let report = store.built.report
                #expect(report.signingIdentityOrigin == .adopted && report.generatedSigningChains.isEmpty)
                #expect(Set(report.reissuedSigningChains) == Set(StoreEnvironment.allCases))
                let versions = try await Self.versions(store)
                #expect(versions == [.production: 2, .sandbox: 2])
                let identity = store.built.signing.identity(.sandbox)
                #expect(identity.root == created.root && identity.leaf != created.leaf)
                #expect(SigningProfile.ocspURL(of: identity.leaf) == "\(store.baseURL)/ocsp/sandbox")
                return (store.port, identity)
            }

            // The first data directory, on the second store's URL, takes the reissued chain and changes nothing.
            try await withTestStore(databaseURL: url, dataDirectory: first, port: .fixed(port)) { store in
                #expect(store.built.report.signingIdentityOrigin == .adopted)
                #expect(store.built.report.reissuedSigningChains.isEmpty)
                let versions = try await Self.versions(store)
                #expect(versions == [.production: 2, .sandbox: 2])
                #expect(store.built.signing.identity(.sandbox).x5c == reissued.x5c)
            }
            let mirrored = try await SigningKeyStore(baseDirectory: first.appendingPathComponent("signing").path)
                .load(environment: .sandbox, now: Date())
            #expect(mirrored.x5c == reissued.x5c, "the data directory's copy follows the database")
        }
    }

    /// Each environment's chain version in the store's database.
    static func versions(_ store: TestStore) async throws -> [StoreEnvironment: Int64] {
        try await store.built.database.transaction { tx in
            var versions: [StoreEnvironment: Int64] = [:]
            for environment in StoreEnvironment.allCases {
                versions[environment] = try await tx.signingChain(environment: environment)?.version
            }
            return versions
        }
    }
}
