import Foundation
import KioskCore

extension SigningKeyStore {
    /// The root fingerprint (``SigningIdentity/rootSHA256``) of the environment's chain in its directory; nil when
    /// the directory is absent or empty.
    ///
    /// - Throws: ``KioskError`` naming the file at fault when the directory holds an unreadable chain.
    public func rootSHA256(environment: StoreEnvironment) throws -> String? {
        let directory = directory(for: environment)
        if try isAbsentOrEmpty(directory) { return nil }
        let stored = try StoredChain.read(from: directory)
        return SigningIdentity.sha256Hex(try SigningIdentity.derBytes(of: stored.root))
    }

    /// Removes the environment's directory: for a chain this start generated and then found another replica had
    /// already stored the store's chain.
    public func discard(environment: StoreEnvironment) throws {
        let directory = directory(for: environment)
        guard FileManager.default.fileExists(atPath: directory) else { return }
        try FileManager.default.removeItem(atPath: directory)
        PrivateFileWriter.syncDirectory(baseDirectory)
    }

    /// Makes the environment's directory hold `identity` and its CA keys, a copy of the chain the store signs with
    /// (kept in its database) for the operator: certificates mode 0644, keys 0600, the directory 0700. An absent or
    /// empty directory is filled at once (by rename); in a directory holding the same root, each file is replaced by
    /// rename.
    ///
    /// - Throws: ``KioskError`` naming the file that could not be written.
    public func mirror(
        _ identity: SigningIdentity, authorityKeys: AuthorityKeys?, environment: StoreEnvironment
    ) throws {
        let directory = directory(for: environment)
        if try isAbsentOrEmpty(directory),
            try install(identity, authorityKeys: authorityKeys, environment: environment, into: directory)
        {
            return
        }
        for (name, text, mode) in try Self.files(of: identity, authorityKeys: authorityKeys) {
            try replace(name, in: directory, with: text, mode: mode)
        }
    }
}
