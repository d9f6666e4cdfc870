import Foundation
import KioskCore
import KioskProtocol
import KioskStorage

// The Paid Apps agreement: its terms and the business details it needs (App Store Connect's "Agreements, Tax, and
// Banking"), kept as one setting.
extension CatalogService {
    static let agreementKey = "paid_apps_agreement"

    /// The agreement and the developer's vendor number (assigned on first use).
    public func agreement() async throws -> (agreement: PaidAppsAgreement, vendorNumber: String) {
        try await database.transaction { tx in
            (try await Self.agreement(in: tx), try await TeamService.vendorNumber(in: tx))
        }
    }

    /// Accepts the terms (`.active`) or withdraws the acceptance (`.pending`, which reproduces the classic "zero
    /// products" answer). The details on file stay; the agreement is active only once none is missing.
    public func setAgreement(_ status: PaidAppsAgreement.Status) async throws -> (
        agreement: PaidAppsAgreement, vendorNumber: String
    ) {
        try await updateAgreement(acceptingTerms: status == .active, withdrawingTerms: status == .pending)
    }

    /// Stores the business details given (each part replaces the one on file) and, when `acceptingTerms`, accepts
    /// the terms. Account and tax numbers are reduced to their last four characters before anything is stored.
    public func updateAgreement(
        _ details: AgreementDetailsBody = AgreementDetailsBody(), acceptingTerms: Bool = false,
        withdrawingTerms: Bool = false
    ) async throws -> (agreement: PaidAppsAgreement, vendorNumber: String) {
        let entity = try details.legalEntity.map {
            try CatalogValidator.legalEntity(name: $0.name, country: $0.country)
        }
        let bank = try details.bankAccount.map {
            try CatalogValidator.bankAccount(
                holderName: $0.holderName, accountNumber: $0.accountNumber, currency: $0.currency)
        }
        let tax = try details.taxInformation.map { try CatalogValidator.taxInformation(form: $0.form, taxId: $0.taxId) }
        let now = clock.now()
        return try await database.transaction { tx in
            let stored = try await Self.agreement(in: tx)
            var agreement = stored
            agreement.legalEntity = entity ?? agreement.legalEntity
            agreement.bankAccount = bank ?? agreement.bankAccount
            agreement.taxInformation = tax ?? agreement.taxInformation
            if acceptingTerms, agreement.acceptedAt == nil { agreement.acceptedAt = now }
            if withdrawingTerms { agreement.acceptedAt = nil }
            if let entity = agreement.legalEntity, let tax = agreement.taxInformation {
                try CatalogValidator.validateTaxForm(tax, for: entity)
            }
            if agreement != stored { try await Self.save(agreement, in: tx) }
            return (agreement, try await TeamService.vendorNumber(in: tx))
        }
    }

    static func agreement(in tx: any StorageTransaction) async throws -> PaidAppsAgreement {
        guard let text = try await tx.setting(agreementKey) else { return PaidAppsAgreement() }
        if let agreement = decodedAgreements[text] { return agreement }
        let agreement = try JSONDecoder().decode(PaidAppsAgreement.self, from: Data(text.utf8))
        decodedAgreements.insert(agreement, for: text)
        return agreement
    }

    /// Agreements decoded, by their stored text: every purchase reads the agreement twice (to sell, then to price the
    /// sale), and decoding it took 3.4% of a purchase's samples at 64 connections.
    private static let decodedAgreements = BoundedCache<String, PaidAppsAgreement>(capacity: 8)

    static func save(_ agreement: PaidAppsAgreement, in tx: any StorageTransaction) async throws {
        try await tx.setSetting(
            agreementKey, to: String(decoding: try JSONEncoder().encode(agreement), as: UTF8.self))
    }
}
