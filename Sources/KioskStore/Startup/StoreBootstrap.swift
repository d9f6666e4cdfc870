import Foundation
import KioskCore
import KioskSQL
import KioskSigning
import KioskStorage
import Logging

/// First-start (and every-start) work: the data directory, the database and its migrations, the signing identity
/// (``SigningIdentityStartup``), the admin token and the issuer id.
struct StoreBootstrap {
    let configuration: ServerConfiguration
    let clock: any KioskClock
    let logger: Logger

    static let adminTokenKey = "admin_token_sha256"

    struct Result {
        var database: any KioskDatabase
        var signing: StoreSigning
        /// The CA keys per environment, for the OCSP responder (absent for operator chains without them).
        var authorityKeys: [StoreEnvironment: SigningKeyStore.AuthorityKeys]
        var adminTokenSHA256: String
        /// The identity key (outside the database): the console's session key is derived from it.
        var identityKey: IdentityKey
        var report: StartupReport
    }

    func run() async throws -> Result {
        // A bad setting is refused before anything is created: no data directory, database or keys.
        if let token = configuration.adminToken { try Self.checkAdminToken(token) }
        let dataDirectory = configuration.dataDirectory.standardizedFileURL
        try createPrivateDirectory(dataDirectory)

        let database = try await DatabaseOpener.open(
            url: configuration.effectiveDatabaseURL, poolSize: configuration.databasePoolSize, logger: logger)
        do {
            let signingDirectory = dataDirectory.appendingPathComponent("signing")
            let identity = try await SigningIdentityStartup(
                database: database, keyStore: SigningKeyStore(baseDirectory: signingDirectory.path),
                keyFile: dataDirectory.appendingPathComponent(IdentityKey.fileName),
                configuredKey: configuration.identityKey, publicURL: configuration.effectivePublicURL, clock: clock,
                logger: logger
            ).run()

            let catalog = CatalogService(database: database, clock: clock)
            let (tokenHash, newToken) = try await installAdminToken(database)
            let report = StartupReport(
                dataDirectory: dataDirectory,
                database: "\(database.engine) — \(Self.redacted(configuration.effectiveDatabaseURL))",
                signingDirectory: signingDirectory, generatedSigningChains: identity.generated,
                reissuedSigningChains: identity.reissued, signingIdentityOrigin: identity.origin,
                identityKeySource: identity.keySource, identityKeyGenerated: identity.keyGenerated,
                ocspBaseURL: SigningProfile.ocspBaseURL(publicURL: configuration.effectivePublicURL),
                newAdminToken: newToken,
                adminTokenFromConfiguration: configuration.adminToken != nil, issuerId: try await catalog.issuerId())
            guard let identityKey = identity.key else {
                throw KioskError(
                    .signingIdentityMissing, "The store started without the identity key its signing chains need.",
                    fix: "Give the key with --identity-key-file or KIOSK_IDENTITY_KEY, or keep <data-dir>/identity.key."
                )
            }
            return Result(
                database: database, signing: try StoreSigning(identities: identity.identities),
                authorityKeys: identity.authorityKeys, adminTokenSHA256: tokenHash, identityKey: identityKey,
                report: report)
        } catch {
            try? await database.close()
            throw error
        }
    }

    /// Installs the configured token (``run()`` checked it first), or generates one on the first start. Returns
    /// the stored hash and, when generated now, the token itself (to be shown once).
    private func installAdminToken(_ database: any KioskDatabase) async throws -> (String, String?) {
        if let token = configuration.adminToken {
            let hash = SecretGenerator.sha256Hex(token)
            try await database.transaction { tx in try await tx.setSetting(Self.adminTokenKey, to: hash) }
            return (hash, nil)
        }
        return try await database.transaction { tx in
            if let existing = try await tx.setting(Self.adminTokenKey) { return (existing, nil) }
            let token = SecretGenerator.token()
            let hash = SecretGenerator.sha256Hex(token)
            // Replicas starting at once on a new database agree on the first token committed; only its maker
            // shows it.
            let stored = try await tx.settingInsertingIfAbsent(Self.adminTokenKey, value: hash)
            return (stored, stored == hash ? token : nil)
        }
    }

    /// Throws unless `token` is long enough to be an admin token.
    private static func checkAdminToken(_ token: String) throws {
        guard token.count >= 16 else {
            throw KioskError(
                .weakAdminToken, "The admin token must be at least 16 characters long.", field: "--admin-token",
                fix: "Pass a longer token, or leave it out to have Kiosk generate one.")
        }
    }

    private func createPrivateDirectory(_ url: URL) throws {
        do {
            try FileManager.default.createDirectory(
                at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw KioskError(
                .dataDirectoryUnusable, "Cannot create the data directory \(url.path): \(error.localizedDescription)",
                field: "--data-dir", fix: "Choose a directory you can write to with --data-dir or KIOSK_DATA_DIR.")
        }
    }

    /// The database URL with its password masked as `•••`. URLComponents percent-encodes what it is given (the
    /// bullets would print as `%E2%80%A2…`), so an ASCII stand-in goes in and the bullets replace it after.
    static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.password != nil else { return url }
        let standIn = "KIOSKPASSWORDMASK"
        components.password = standIn
        return components.string?.replacingOccurrences(of: ":\(standIn)@", with: ":•••@") ?? url
    }
}
