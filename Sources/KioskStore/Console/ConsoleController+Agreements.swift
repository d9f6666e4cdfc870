import Foundation
import Hummingbird
import KioskCore
import KioskProtocol

/// Agreements, tax and banking: the Paid Apps agreement's status, what it still needs, and the form that gives it.
extension ConsoleController {
    func addAgreementRoutes(to pages: RouterGroup<KioskRequestContext>) {
        pages.get("agreements") { _, context in
            try await agreementsPage(context, problem: nil)
        }
        pages.post("agreements") { request, context in
            let form = try await ConsoleForm.read(request, context: context)
            let stored = try await catalog.agreement().agreement
            do {
                let (agreement, _) = try await catalog.updateAgreement(
                    Self.details(form, keeping: stored), acceptingTerms: form["terms"] == "on")
                try await audit(
                    context.consoleSession, "agreement.accept", "paid apps agreement (\(agreement.status.rawValue))")
                return Response.redirect(to: "/console/agreements", type: .normal)
            } catch let error as KioskError {
                // The form answers on its own page: the error at the top and at its field, nothing saved.
                return try await agreementsPage(context, problem: error)
            }
        }
    }

    /// What the form gives, each part completed from what is on file: a part is given when its own field is
    /// (the legal name or country; the account number; the taxpayer id), and its other fields left empty keep
    /// their stored values.
    static func details(_ form: ConsoleForm, keeping stored: PaidAppsAgreement) -> AgreementDetailsBody {
        var details = AgreementDetailsBody()
        if form["legalName"] != nil || form["country"] != nil {
            details.legalEntity = .init(
                name: form["legalName"] ?? stored.legalEntity?.name ?? "",
                country: form["country"] ?? stored.legalEntity?.country ?? "")
        }
        if let number = form["bankAccount"] {
            details.bankAccount = .init(
                holderName: form["bankHolder"] ?? stored.bankAccount?.holderName ?? form["legalName"]
                    ?? stored.legalEntity?.name ?? "",
                accountNumber: number, currency: form["bankCurrency"] ?? stored.bankAccount?.currency ?? "")
        }
        if let taxId = form["taxId"] {
            details.taxInformation = .init(
                form: form["taxForm"] ?? stored.taxInformation?.form.rawValue ?? "", taxId: taxId)
        }
        return details
    }

    /// The agreements page, with `problem` (a refused save) at the top and at the field it names.
    private func agreementsPage(_ context: KioskRequestContext, problem: KioskError?) async throws -> Response {
        let (agreement, vendorNumber) = try await catalog.agreement()
        let resource = AgreementResource(agreement, vendorNumber: vendorNumber)
        let onFile = agreement.taxInformation?.form.rawValue
        return renderer.page(
            AgreementsPage(
                active: agreement.status == .active,
                missing: PaidAppsAgreement.Requirement.sentence(agreement.missing),
                termsAccepted: agreement.acceptedAt.map(Self.time), legalName: agreement.legalEntity?.name,
                country: agreement.legalEntity?.country, bankHolder: resource.bankAccount?.holderName,
                bankAccount: resource.bankAccount?.accountNumber, bankCurrency: resource.bankAccount?.currency,
                taxForm: resource.taxInformation?.form, taxId: resource.taxInformation?.taxId,
                vendorNumber: vendorNumber,
                forms: TaxInformation.Form.allCases.map {
                    ConsoleOption(value: $0.rawValue, selected: $0.rawValue == onFile)
                },
                problem: problem.map(AgreementsPage.Problem.init)),
            title: "Agreements, tax and banking", section: "Agreements", session: context.consoleSession,
            status: problem?.status ?? .ok)
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
    var problem: Problem?

    /// A refused save: what was wrong and what to do, shown at the top, and again at the form field it names.
    struct Problem: Decodable {
        var message: String
        var fix: String?
        /// One of these holds the message: the field's own line under its input.
        var legalName: String?
        var country: String?
        var bankHolder: String?
        var bankAccount: String?
        var bankCurrency: String?
        var taxForm: String?
        var taxId: String?

        init(_ error: KioskError) {
            message = "Nothing was saved: \(error.message)"
            fix = error.fix
            let text = error.message
            switch error.field {
            case "legalEntity.name": legalName = text
            case "legalEntity.country": country = text
            case "bankAccount.holderName": bankHolder = text
            case "bankAccount.accountNumber": bankAccount = text
            case "bankAccount.currency": bankCurrency = text
            case "taxInformation.form": taxForm = text
            case "taxInformation.taxId": taxId = text
            default: break
            }
        }
    }
}
