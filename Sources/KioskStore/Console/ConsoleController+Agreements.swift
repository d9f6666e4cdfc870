import Foundation
import Hummingbird
import KioskCore
import KioskProtocol

/// Agreements, tax and banking: the Paid Apps agreement's status, what it still needs, and the form that gives it.
extension ConsoleController {
    func addAgreementRoutes(to pages: RouterGroup<KioskRequestContext>) {
        pages.get("agreements") { _, context in
            let (agreement, vendorNumber) = try await catalog.agreement()
            let resource = AgreementResource(agreement, vendorNumber: vendorNumber)
            return renderer.page(
                AgreementsPage(
                    active: agreement.status == .active,
                    missing: PaidAppsAgreement.Requirement.sentence(agreement.missing),
                    termsAccepted: agreement.acceptedAt.map(Self.time), legalName: agreement.legalEntity?.name,
                    country: agreement.legalEntity?.country, bankHolder: resource.bankAccount?.holderName,
                    bankAccount: resource.bankAccount?.accountNumber, bankCurrency: resource.bankAccount?.currency,
                    taxForm: resource.taxInformation?.form, taxId: resource.taxInformation?.taxId,
                    vendorNumber: vendorNumber,
                    forms: TaxInformation.Form.allCases.map { ConsoleOption(value: $0.rawValue) }),
                title: "Agreements, tax and banking", section: "Agreements", session: context.consoleSession)
        }
        pages.post("agreements") { request, context in
            try await action(request, context, audit: "agreement.accept") { form in
                var details = AgreementDetailsBody()
                if let name = form["legalName"] {
                    details.legalEntity = .init(name: name, country: form["country"] ?? "")
                }
                if let number = form["bankAccount"] {
                    details.bankAccount = .init(
                        holderName: form["bankHolder"] ?? form["legalName"] ?? "", accountNumber: number,
                        currency: form["bankCurrency"] ?? "")
                }
                if let taxId = form["taxId"] {
                    details.taxInformation = .init(form: form["taxForm"] ?? "", taxId: taxId)
                }
                let (agreement, _) = try await catalog.updateAgreement(details, acceptingTerms: form["terms"] == "on")
                return ("paid apps agreement (\(agreement.status.rawValue))", "/console/agreements")
            }
        }
    }
}

/// The Paid Apps agreement: its state, what is on file (the account number and tax id only by their last four
/// characters) and the form that gives the rest.
struct AgreementsPage: ConsoleView {
    static let template = "agreements"
    var active: Bool
    /// What the agreement still needs, as a sentence.
    var missing: String
    var termsAccepted: String?
    var legalName: String?
    var country: String?
    var bankHolder: String?
    var bankAccount: String?
    var bankCurrency: String?
    var taxForm: String?
    var taxId: String?
    var vendorNumber: String
    var forms: [ConsoleOption]
}
