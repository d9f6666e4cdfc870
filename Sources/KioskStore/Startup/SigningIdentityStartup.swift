import Foundation
import KioskCore
import KioskSigning
import KioskStorage
import Logging

/// Opens the store's signing identity at start: the two signing chains every replica on the database signs with.
///
/// The database keeps them (`signing_chains`), the private keys sealed with the identity key, which stays outside
/// it: in `<data-dir>/identity.key`, or given by `KIOSK_IDENTITY_KEY` / `--identity-key-file`.
/// - The database has no identity yet (a new store, or one from before Kiosk kept it there): this data directory's
///   chains are opened or generated exactly as before, sealed with the identity key (generated now and written to
///   `identity.key` when none is given) and stored, if no other replica stored its own meanwhile. One that did
///   wins: a chain generated now is dropped for its chain; an operator's chain that differs is refused.
/// - The database has the identity: the identity key opens it, and the data directory's chain, if any, must have
///   the same root. The directory then holds a copy, so an operator finds the chain where it always was.
/// Chains that name another OCSP URL than this store's public URL gives are reissued (same root and keys) and
/// written back with a compare and swap on their version, so two replicas never overwrite each other unseen.
struct SigningIdentityStartup {
    let database: any KioskDatabase
    let keyStore: SigningKeyStore
    /// The data directory's `identity.key`.
    let keyFile: URL
    /// The key from `KIOSK_IDENTITY_KEY` / `--identity-key-file`, if given; it is never written to disk.
    let configuredKey: IdentityKey?
    let publicURL: String
    let clock: any KioskClock
    let logger: Logger

    /// Times a start re-reads a chain another replica changed while it reissued, before it gives up.
    static let reissueAttempts = 3

    struct Outcome {
        var identities: [StoreEnvironment: SigningIdentity] = [:]
        var authorityKeys: [StoreEnvironment: SigningKeyStore.AuthorityKeys] = [:]
        /// Environments whose chain this start generated and stored.
        var generated: [StoreEnvironment] = []
        var reissued: [StoreEnvironment] = []
        var origin: SigningIdentityOrigin = .adopted
        /// Where the identity key came from; nil when none was needed.
        var keySource: String?
        var keyGenerated = false
        /// The identity key the chains are sealed with.
        var key: IdentityKey?
    }

    func run() async throws -> Outcome {
        var outcome = Outcome()
        var key = try configuredKey ?? localKey()
        var stored = try await database.transaction { tx in
            var found: [StoreEnvironment: SealedSigningChain] = [:]
            for environment in StoreEnvironment.allCases {
                found[environment] = try await tx.signingChain(environment: environment)
            }
            return found
        }
        let missing = StoreEnvironment.allCases.filter { stored[$0] == nil }
        if !missing.isEmpty {
            var local: [(StoreEnvironment, SigningKeyStore.OpenedChain)] = []
            for environment in missing {
                local.append(
                    (
                        environment,
                        try await keyStore.open(
                            environment: environment, now: clock.now(), ocspURL: ocspURL(environment))
                    ))
            }
            // A generated key is written before the database holds anything it seals: a crash in between leaves an
            // unused key, never a sealed identity without its key.
            let keyGeneratedNow = key == nil
            let sealingKey = try key ?? IdentityKey.generate(source: keyFile.path).written(to: keyFile.path)
            let now = clock.now()
            let sealed = try local.map { environment, chain in
                try SealedSigningChain(
                    sealing: chain.identity, authorityKeys: chain.authorityKeys, environment: environment, version: 1,
                    with: sealingKey, at: now)
            }
            let inserted = try await database.transaction { tx in
                var inserted: Set<StoreEnvironment> = []
                for chain in sealed where try await tx.insertSigningChainIfAbsent(chain) {
                    inserted.insert(chain.environment)
                }
                return inserted
            }
            for (environment, chain) in local {
                if inserted.contains(environment) {
                    outcome.identities[environment] = chain.identity
                    outcome.authorityKeys[environment] = chain.authorityKeys
                    if chain.created { outcome.generated.append(environment) }
                    if chain.reissued {
                        outcome.reissued.append(environment)
                        logger.notice(
                            """
                            Reissued the \(environment.rawValue) intermediate and leaf (same keys, same root) to name \
                            the OCSP responder \(ocspURL(environment)).
                            """)
                    }
                    warnIfUnanswerable(environment, chain.identity, chain.authorityKeys)
                } else if chain.created {
                    // Another replica stored its chain first: this one was made now and nobody trusts it yet.
                    try keyStore.discard(environment: environment)
                }
            }
            if !inserted.isEmpty {
                outcome.origin = .created
                outcome.keyGenerated = keyGeneratedNow
                key = sealingKey
            } else if keyGeneratedNow {
                // The key seals nothing: another replica, with a key of its own, stored the identity first.
                try? FileManager.default.removeItem(atPath: sealingKey.source)
            }
            let lost = missing.filter { !inserted.contains($0) }
            if !lost.isEmpty {
                stored = try await database.transaction { [stored] tx in
                    var found = stored
                    for environment in lost { found[environment] = try await tx.signingChain(environment: environment) }
                    return found
                }
            }
        }
        for environment in StoreEnvironment.allCases where outcome.identities[environment] == nil {
            guard let record = stored[environment] else {
                throw KioskError(
                    .signingIdentityMissing,
                    "The database lost the \(environment.rawValue) signing chain it had just stored.",
                    fix: "Check that nothing else writes to this database's table signing_chains, then start again.")
            }
            guard let key else { throw sealedError() }
            try await adopt(record, environment: environment, key: key, into: &outcome)
        }
        outcome.keySource = key?.source
        outcome.key = key
        return outcome
    }

    /// The database's chain of `environment`, opened with `key`, checked against the data directory's, reissued if
    /// it names another OCSP URL, and copied into the data directory.
    private func adopt(
        _ record: SealedSigningChain, environment: StoreEnvironment, key: IdentityKey, into outcome: inout Outcome
    ) async throws {
        var record = record
        var (identity, authorityKeys) = try await record.open(with: key, now: clock.now())
        if let localRoot = try keyStore.rootSHA256(environment: environment), localRoot != identity.rootSHA256 {
            let directory = keyStore.directory(for: environment)
            throw KioskError(
                .signingChainDiffers,
                "The \(environment.rawValue) signing chain in \(directory) (root SHA-256 \(localRoot)) is not the "
                    + "one this database's store signs with (root SHA-256 \(identity.rootSHA256)).",
                field: directory,
                fix: "If merchants trust the database's root, move \(directory) away and start again: this store "
                    + "then takes the database's chain. If they trust this directory's root, this data directory "
                    + "belongs to another store: start it on that store's database.")
        }
        let ocspURL = ocspURL(environment)
        var attempts = 0
        while !identity.namesOCSPURL(ocspURL), let keys = authorityKeys {
            attempts += 1
            guard attempts <= Self.reissueAttempts else {
                throw KioskError(
                    .signingIdentityContended,
                    "Other replicas changed the \(environment.rawValue) signing chain \(Self.reissueAttempts) times "
                        + "while this one reissued it to name \(ocspURL) as its OCSP responder.",
                    fix: "Give every replica the same --public-url (KIOSK_PUBLIC_URL): the URL of the proxy in "
                        + "front of them.")
            }
            let reissued = try identity.reissued(ocspURL: ocspURL, authorityKeys: keys)
            let next = try SealedSigningChain(
                sealing: reissued, authorityKeys: keys, environment: environment, version: record.version + 1,
                with: key, at: clock.now())
            let expected = record.version
            let swapped = try await database.transaction { tx in
                try await tx.replaceSigningChain(next, replacingVersion: expected)
            }
            if swapped {
                (record, identity) = (next, reissued)
                outcome.reissued.append(environment)
                logger.notice(
                    """
                    Reissued the \(environment.rawValue) intermediate and leaf (same keys, same root) to name the OCSP \
                    responder \(ocspURL). Replicas already running sign with the ones before (still valid) until \
                    they restart.
                    """)
                break
            }
            // Another replica changed the chain meanwhile: take its version and look again.
            let current = try await database.transaction { tx in
                try await tx.signingChain(environment: environment)
            }
            guard let current else { continue }
            record = current
            (identity, authorityKeys) = try await record.open(with: key, now: clock.now())
        }
        warnIfUnanswerable(environment, identity, authorityKeys)
        try keyStore.mirror(identity, authorityKeys: authorityKeys, environment: environment)
        outcome.identities[environment] = identity
        outcome.authorityKeys[environment] = authorityKeys
    }

    /// The data directory's identity key, if it has one.
    private func localKey() throws -> IdentityKey? {
        guard FileManager.default.fileExists(atPath: keyFile.path) else { return nil }
        return try IdentityKey.read(from: keyFile.path, ownerOnly: true)
    }

    private func ocspURL(_ environment: StoreEnvironment) -> String {
        SigningProfile.ocspURL(publicURL: publicURL, environment: environment)
    }

    /// The store's signing identity is in the database, and this replica has no key to open it.
    private func sealedError() -> KioskError {
        KioskError(
            .signingIdentitySealed,
            "This database's signing identity is sealed; copy identity.key from the first replica's data dir or set "
                + "KIOSK_IDENTITY_KEY.",
            field: keyFile.path,
            fix: "Copy identity.key from the data directory of the store that first started on this database to "
                + "\(keyFile.path) (mode 0600), or set KIOSK_IDENTITY_KEY to its text (or pass --identity-key-file).")
    }

    /// Logs, as before replicas, a chain whose OCSP requests this store cannot answer or whose certificates name
    /// another responder.
    private func warnIfUnanswerable(
        _ environment: StoreEnvironment, _ identity: SigningIdentity, _ authorityKeys: SigningKeyStore.AuthorityKeys?
    ) {
        if authorityKeys == nil {
            logger.warning(
                """
                The \(environment.rawValue) signing chain has no CA keys (root-key.pem, intermediate-key.pem), so this \
                store cannot answer OCSP requests for it: verifiers with online checks will refuse its signatures. \
                Offline verification is unaffected.
                """)
        } else if !identity.namesOCSPURL(ocspURL(environment)) {
            logger.warning(
                "The \(environment.rawValue) chain does not name the OCSP responder \(ocspURL(environment)).")
        }
    }
}

/// Whether a start stored the signing identity in the database or took the one stored there.
public enum SigningIdentityOrigin: String, Sendable {
    /// The database had none: this start stored this data directory's chains (generated now or found there).
    case created
    /// The database had it (from another replica or an earlier start): this start opened it with the identity key.
    case adopted
}
