import Foundation
import KioskCore
import KioskSQL
import SQLKit

/// Revoked certificates of the signing chains, which the OCSP responder answers as `revoked`. Rows are never
/// deleted: a revoked certificate stays revoked.
extension SQLStorageTransaction {
    func insertCertificateRevocation(_ revocation: CertificateRevocation) async throws -> CertificateRevocation {
        try await session.run(
            """
            INSERT INTO certificate_revocations (environment, serial_number, role, revoked_at, reason)
            VALUES (\(bind: revocation.environment.rawValue), \(bind: revocation.serialNumber),
                \(bind: revocation.role.rawValue), \(bind: revocation.revokedAt.millisecondsSince1970),
                \(bind: revocation.reason.map(Int64.init)))
            ON CONFLICT (environment, serial_number) DO NOTHING
            """
        )
        let row = try await session.first(
            """
            SELECT * FROM certificate_revocations
            WHERE environment = \(bind: revocation.environment.rawValue)
                AND serial_number = \(bind: revocation.serialNumber)
            """
        )
        guard let row else {
            throw StorageError.engine(message: "the revocation of \(revocation.serialNumber) was not stored")
        }
        return try Self.decodeRevocation(row)
    }

    func certificateRevocations(environment: StoreEnvironment) async throws -> [CertificateRevocation] {
        try await session.all(
            """
            SELECT * FROM certificate_revocations WHERE environment = \(bind: environment.rawValue)
            ORDER BY revoked_at, serial_number
            """
        ).map(Self.decodeRevocation)
    }

    private static func decodeRevocation(_ row: any SQLRow) throws -> CertificateRevocation {
        let environment = try row.decode(column: "environment", as: String.self)
        let role = try row.decode(column: "role", as: String.self)
        guard let storeEnvironment = StoreEnvironment(rawValue: environment),
            let certificateRole = CertificateRevocation.Role(rawValue: role)
        else {
            throw StorageError.engine(message: "certificate_revocations holds environment \(environment), role \(role)")
        }
        return CertificateRevocation(
            environment: storeEnvironment,
            serialNumber: try row.decode(column: "serial_number", as: String.self),
            role: certificateRole,
            revokedAt: try row.date("revoked_at"),
            reason: try row.decode(column: "reason", as: Int64?.self).map(Int.init)
        )
    }
}
