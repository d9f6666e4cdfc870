import Foundation

/// The Paid Apps agreement of the store's developer, with the business details App Store Connect's "Agreements,
/// Tax, and Banking" page asks for. Until the terms are accepted *and* a legal entity, a bank account and tax
/// information are on file, the agreement is pending and no product is available to clients: the classic
/// "zero products" pitfall.
public struct PaidAppsAgreement: Codable, Sendable, Hashable {
    public enum Status: String, Codable, Sendable, Hashable {
        case pending
        case active
    }

    /// What an agreement needs before it becomes active, in the order App Store Connect asks for it.
    public enum Requirement: String, Codable, Sendable, Hashable, CaseIterable {
        case terms
        case legalEntity
        case bankAccount
        case taxInformation

        /// The requirement in a sentence: "a bank account".
        public var displayName: String {
            switch self {
            case .terms: "the accepted terms"
            case .legalEntity: "a legal entity"
            case .bankAccount: "a bank account"
            case .taxInformation: "tax information"
            }
        }

        /// The requirements in a sentence: "a bank account and tax information".
        public static func sentence(_ requirements: [Requirement]) -> String {
            requirements.map(\.displayName).sentence()
        }

        /// The `kiosk agreements accept` command that supplies `requirements`.
        public static func command(supplying requirements: [Requirement]) -> String {
            (["kiosk agreements accept"] + requirements.compactMap(\.commandLineOptions)).joined(separator: " ")
        }

        /// The `kiosk agreements accept` options that supply it (accepting the terms needs none).
        var commandLineOptions: String? {
            switch self {
            case .terms: nil
            case .legalEntity: "--legal-name NAME --country CODE"
            case .bankAccount: "--bank-holder NAME --bank-account NUMBER --bank-currency CODE"
            case .taxInformation: "--tax-form W-9|W-8BEN|W-8BEN-E --tax-id ID"
            }
        }
    }

    /// When the developer accepted the terms; nil while they are not accepted.
    public var acceptedAt: Date?
    public var legalEntity: LegalEntity?
    public var bankAccount: BankAccount?
    public var taxInformation: TaxInformation?
    /// When the developer's Small Business Program enrolment took effect (15% commission on sales from then on);
    /// nil when not enrolled.
    public var smallBusinessProgramSince: Date?

    public init(
        acceptedAt: Date? = nil, legalEntity: LegalEntity? = nil, bankAccount: BankAccount? = nil,
        taxInformation: TaxInformation? = nil, smallBusinessProgramSince: Date? = nil
    ) {
        self.acceptedAt = acceptedAt
        self.legalEntity = legalEntity
        self.bankAccount = bankAccount
        self.taxInformation = taxInformation
        self.smallBusinessProgramSince = smallBusinessProgramSince
    }

    /// What is still missing before the agreement is active; empty when it is.
    public var missing: [Requirement] {
        var missing: [Requirement] = []
        if acceptedAt == nil { missing.append(.terms) }
        if legalEntity == nil { missing.append(.legalEntity) }
        if bankAccount == nil { missing.append(.bankAccount) }
        if taxInformation == nil { missing.append(.taxInformation) }
        return missing
    }

    /// Active once nothing is missing.
    public var status: Status { missing.isEmpty ? .active : .pending }
}

/// The person or company that sells: its name as on the tax form, and its country (a storefront code).
public struct LegalEntity: Codable, Sendable, Hashable {
    public var name: String
    public var country: String

    public init(name: String, country: String) {
        self.name = name
        self.country = country
    }
}

/// Where proceeds are paid. The account number is never stored: only its last four characters, which is all any
/// answer, page or log ever shows.
public struct BankAccount: Codable, Sendable, Hashable {
    public var holderName: String
    public var accountNumberEnding: String
    public var currency: String

    public init(holderName: String, accountNumberEnding: String, currency: String) {
        self.holderName = holderName
        self.accountNumberEnding = accountNumberEnding
        self.currency = currency
    }

    /// The account as shown: "•••• 6819".
    public var maskedNumber: String { "•••• \(accountNumberEnding)" }
}

/// The tax form on file and its taxpayer identification number, of which only the last four characters are kept.
public struct TaxInformation: Codable, Sendable, Hashable {
    /// The US tax forms App Store Connect asks for: W-9 from United States persons, W-8BEN from other individuals,
    /// W-8BEN-E from other companies.
    public enum Form: String, Codable, Sendable, Hashable, CaseIterable {
        case w9 = "W-9"
        case w8ben = "W-8BEN"
        case w8bene = "W-8BEN-E"
    }

    public var form: Form
    public var taxIdEnding: String

    public init(form: Form, taxIdEnding: String) {
        self.form = form
        self.taxIdEnding = taxIdEnding
    }

    /// The identification number as shown: "•••• 6789".
    public var maskedTaxId: String { "•••• \(taxIdEnding)" }
}
