import Foundation
import KioskCore
import KioskSQL
import SQLKit

/// The store's signing chains, one row per environment, shared by every replica on the database.
extension SQLStorageTransaction {
    func signingChain(environment: StoreEnvironment) async throws -> SealedSigningChain? {
        try await session.first(
            "SELECT * FROM signing_chains WHERE environment = \(bind: environment.rawValue)"
        ).map(Self.decodeSigningChain)
    }

    func insertSigningChainIfAbsent(_ chain: SealedSigningChain) async throws -> Bool {
        // A concurrent insert of the same environment makes PostgreSQL wait for its transaction, then do nothing.
        try await session.first(
            """
            INSERT INTO signing_chains (
                environment, version, root_certificate, intermediate_certificate, leaf_certificate, sealed_leaf_key,
                sealed_root_key, sealed_intermediate_key, updated_at)
            VALUES (\(bind: chain.environment.rawValue), \(bind: chain.version), \(bind: chain.rootCertificatePEM),
                \(bind: chain.intermediateCertificatePEM), \(bind: chain.leafCertificatePEM),
                \(bind: chain.sealedLeafKey), \(bind: chain.sealedRootKey), \(bind: chain.sealedIntermediateKey),
                \(bind: chain.updatedAt.millisecondsSince1970))
            ON CONFLICT (environment) DO NOTHING
            RETURNING environment
            """
        ) != nil
    }

    func replaceSigningChain(_ chain: SealedSigningChain, replacingVersion expected: Int64) async throws -> Bool {
        try await session.first(
            """
            UPDATE signing_chains SET version = \(bind: chain.version),
                root_certificate = \(bind: chain.rootCertificatePEM),
                intermediate_certificate = \(bind: chain.intermediateCertificatePEM),
                leaf_certificate = \(bind: chain.leafCertificatePEM), sealed_leaf_key = \(bind: chain.sealedLeafKey),
                sealed_root_key = \(bind: chain.sealedRootKey),
                sealed_intermediate_key = \(bind: chain.sealedIntermediateKey),
                updated_at = \(bind: chain.updatedAt.millisecondsSince1970)
            WHERE environment = \(bind: chain.environment.rawValue) AND version = \(bind: expected)
            RETURNING environment
            """
        ) != nil
    }

    private static func decodeSigningChain(_ row: any SQLRow) throws -> SealedSigningChain {
        SealedSigningChain(
            environment: try row.enumeration("environment", as: StoreEnvironment.self),
            version: try row.decode(column: "version", as: Int64.self),
            rootCertificatePEM: try row.decode(column: "root_certificate", as: String.self),
            intermediateCertificatePEM: try row.decode(column: "intermediate_certificate", as: String.self),
            leafCertificatePEM: try row.decode(column: "leaf_certificate", as: String.self),
            sealedLeafKey: try row.decode(column: "sealed_leaf_key", as: String.self),
            sealedRootKey: try row.optional("sealed_root_key", as: String.self),
            sealedIntermediateKey: try row.optional("sealed_intermediate_key", as: String.self),
            updatedAt: try row.date("updated_at"))
    }
}
