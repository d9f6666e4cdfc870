import ArgumentParser
import Foundation
import KioskCore
import KioskProtocol

/// `kiosk agreements …`: the Paid Apps agreement (App Store Connect's "Agreements, Tax, and Banking").
struct AgreementsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agreements",
        abstract: "Accept or inspect the Paid Apps agreement; no product is sold until it is active.",
        subcommands: [Accept.self, Show.self, Reset.self, SmallBusiness.self])

    struct Accept: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Accept the Paid Apps agreement and give the business details it needs.",
            discussion: """
                The agreement becomes active once its terms are accepted and a legal entity, a bank account and tax \
                information are on file; give them all at once or in several runs (each part given replaces the one \
                on file). Only the last four characters of the account number and tax id are kept.
                """)
        @Option(help: "The seller's legal name, as on the tax form.") var legalName: String?
        @Option(help: "The legal entity's country, a storefront code such as USA or GBR.") var country: String?
        @Option(help: "The bank account holder's name (the legal name when absent).") var bankHolder: String?
        @Option(help: "The IBAN or account number proceeds are paid to.") var bankAccount: String?
        @Option(help: "The currency of the bank account, such as USD or EUR.") var bankCurrency: String?
        @Option(help: "W-9 (a United States person), W-8BEN (another individual) or W-8BEN-E (another company).")
        var taxForm: String?
        @Option(help: "The taxpayer identification number on the tax form.") var taxId: String?
        @OptionGroup var connection: ConnectionOptions

        func validate() throws {
            if (legalName == nil) != (country == nil) {
                throw ValidationError("--legal-name and --country go together.")
            }
            if bankAccount != nil, bankCurrency == nil || (bankHolder ?? legalName) == nil {
                throw ValidationError("--bank-account needs --bank-currency and --bank-holder (or --legal-name).")
            }
            if (taxForm == nil) != (taxId == nil) {
                throw ValidationError("--tax-form and --tax-id go together.")
            }
        }

        func run() async throws {
            var details = AgreementDetailsBody()
            if let legalName, let country {
                details.legalEntity = .init(name: legalName, country: country)
            }
            if let bankAccount, let bankCurrency, let holder = bankHolder ?? legalName {
                details.bankAccount = .init(holderName: holder, accountNumber: bankAccount, currency: bankCurrency)
            }
            if let taxForm, let taxId {
                details.taxInformation = .init(form: taxForm, taxId: taxId)
            }
            try await reportingErrors {
                let answer = try await connection.client.post(
                    AdminRoutes.acceptPaidAppsAgreement.path(), raw: try JSONBody(details))
                try connection.print(answer) { Show.lines(try $0.decode(AgreementResource.self)) }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the Paid Apps agreement: its status, what it still needs, and the details on file.")
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.get(AdminRoutes.paidAppsAgreement.path())
                try connection.print(answer) { Self.lines(try $0.decode(AgreementResource.self)) }
            }
        }

        static func lines(_ agreement: AgreementResource) -> [String] {
            var lines = ["Paid Apps agreement: \(agreement.status.rawValue)"]
            if !agreement.missing.isEmpty {
                lines.append("  still needs: \(PaidAppsAgreement.Requirement.sentence(agreement.missing))")
                lines.append("  fix: \(PaidAppsAgreement.Requirement.command(supplying: agreement.missing))")
            }
            if let entity = agreement.legalEntity {
                lines.append("  legal entity:  \(entity.name) (\(entity.country))")
            }
            if let bank = agreement.bankAccount {
                lines.append("  bank account:  \(bank.accountNumber) \(bank.currency), \(bank.holderName)")
            }
            if let tax = agreement.taxInformation {
                lines.append("  tax:           \(tax.form), taxpayer id \(tax.taxId)")
            }
            if let vendorNumber = agreement.vendorNumber {
                lines.append("  vendor number: \(vendorNumber)")
            }
            return lines
        }
    }

    struct Reset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set the agreement back to pending (reproduces seed 002's \"zero products\").")
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.put(
                    AdminRoutes.paidAppsAgreement.path(), raw: try JSONBody(AgreementBody(status: .pending)))
                try connection.print(answer) { _ in ["Paid Apps agreement: pending"] }
            }
        }
    }

    struct SmallBusiness: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "small-business",
            abstract: "Enrol in the Small Business Program (15% commission from a date on), or end it.")
        @Option(help: "The first day (UTC) or ISO 8601 date-time of the 15% rate; today when absent.") var since:
            String?
        @Flag(help: "End the enrolment: sales pay 30% again.") var end = false
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            var since: Any = NSNull()
            if !end {
                guard let date = self.since.map(TaxCommand.instant) ?? Date() else {
                    throw ValidationError(
                        "--since is a day such as 2027-01-01 or a date-time such as 2027-01-01T00:00:00Z.")
                }
                since = ISO8601DateFormatter().string(from: date)
            }
            try await reportingErrors {
                let answer = try await connection.client.put(
                    AdminRoutes.smallBusinessProgram.path(), raw: try JSONBody(["since": since]))
                try connection.print(answer) { answer in
                    guard let date = try answer.decode(AgreementResource.self).smallBusinessProgramSince else {
                        return ["Small Business Program: not enrolled (30% commission)"]
                    }
                    return ["Small Business Program: 15% commission from \(ISO8601DateFormatter().string(from: date))"]
                }
            }
        }
    }
}
