import Foundation

// The business details of the Paid Apps agreement, checked as they arrive. Numbers are reduced to their last four
// characters here, so the full bank account and tax id never reach storage, a log or an answer.
extension CatalogValidator {
    /// The longest legal entity or account holder name accepted.
    public static let businessNameMaxLength = 200

    /// A legal entity: a name of 1–200 characters without control characters, in a country Kiosk has a storefront
    /// for.
    public static func legalEntity(name: String, country: String) throws -> LegalEntity {
        let name = try businessName(name, field: "legalEntity.name")
        guard let storefront = Storefront.named(country.uppercased()) else {
            throw KioskError(
                .unknownCountry, "'\(country.prefix(16))' is not a country Kiosk has a storefront for.",
                field: "legalEntity.country", fix: "Give a three-letter code such as USA, GBR or JPN.")
        }
        return LegalEntity(name: name, country: storefront.code)
    }

    /// A bank account: the holder's name, an account number of 4–34 letters and digits (spaces and hyphens are
    /// ignored; one that starts like an IBAN must pass the IBAN check digits), and the currency proceeds are paid
    /// in (one of the storefronts' currencies). Only the number's last four characters are kept.
    public static func bankAccount(holderName: String, accountNumber: String, currency: String) throws
        -> BankAccount
    {
        let holder = try businessName(holderName, field: "bankAccount.holderName")
        let number = try bankAccountNumber(accountNumber)
        let currencies = Set(Storefront.all.map(\.currency.code))
        guard currencies.contains(currency.uppercased()) else {
            throw KioskError(
                .unknownCurrency, "'\(currency.prefix(8))' is not a currency of any storefront.",
                field: "bankAccount.currency", fix: "Give an ISO 4217 code such as USD, EUR or GBP.")
        }
        return BankAccount(
            holderName: holder, accountNumberEnding: String(number.suffix(4)), currency: currency.uppercased())
    }

    /// Tax information: the form, and a taxpayer identification number of 4–20 letters, digits and hyphens, of which
    /// only the last four characters are kept.
    public static func taxInformation(form: String, taxId: String) throws -> TaxInformation {
        guard let form = TaxInformation.Form(rawValue: form.uppercased()) else {
            throw KioskError(
                .unknownTaxForm, "'\(form.prefix(16))' is not a tax form App Store Connect asks for.",
                field: "taxInformation.form",
                fix: "Give W-9 (a United States person), W-8BEN (another individual) or W-8BEN-E (another company).")
        }
        let id = taxId.filter { $0 != "-" && $0 != " " }
        guard (4...20).contains(id.count), id.allSatisfy({ $0.isASCIILetter || $0.isASCIIDigit }) else {
            throw KioskError(
                .invalidTaxId, "A taxpayer identification number is 4–20 letters and digits (hyphens allowed).",
                field: "taxInformation.taxId", fix: "Give the number on the tax form, such as 12-3456789.")
        }
        return TaxInformation(form: form, taxIdEnding: String(id.uppercased().suffix(4)))
    }

    /// Checks that the tax form suits the legal entity's country: W-9 in the United States, a W-8 form elsewhere.
    public static func validateTaxForm(_ tax: TaxInformation, for entity: LegalEntity) throws {
        let inUnitedStates = entity.country == "USA"
        guard (tax.form == .w9) != inUnitedStates else { return }
        throw KioskError(
            .taxFormMismatch,
            inUnitedStates
                ? "A legal entity in the United States files form W-9, not \(tax.form.rawValue)."
                : "Form W-9 is for United States persons; \(entity.name) is in \(entity.country).",
            field: "taxInformation.form",
            fix: inUnitedStates ? "Give --tax-form W-9." : "Give W-8BEN (an individual) or W-8BEN-E (a company).")
    }

    private static func businessName(_ name: String, field: String) throws -> String {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.count <= businessNameMaxLength,
            !trimmed.unicodeScalars.contains(where: \.isControl)
        else {
            throw KioskError(
                .invalidName, "A name is 1–\(businessNameMaxLength) characters without control characters.",
                field: field, fix: "Give the name as it appears on the tax form or bank statement.")
        }
        return trimmed
    }

    /// The account number in upper case without spaces and hyphens, checked.
    private static func bankAccountNumber(_ text: String) throws -> String {
        let number = text.filter { $0 != " " && $0 != "-" }.uppercased()
        guard (4...34).contains(number.count), number.allSatisfy({ $0.isASCIILetter || $0.isASCIIDigit }) else {
            throw KioskError(
                .invalidAccountNumber, "An account number is 4–34 letters and digits (spaces and hyphens allowed).",
                field: "bankAccount.accountNumber", fix: "Give the IBAN or the account number as the bank writes it.")
        }
        let looksLikeIBAN = number.prefix(2).allSatisfy(\.isASCIILetter)
        if looksLikeIBAN && !hasValidIBANCheckDigits(number) {
            throw KioskError(
                .invalidIban, "The IBAN's check digits do not match: a character is mistyped.",
                field: "bankAccount.accountNumber", fix: "Copy the IBAN again from the bank's statement.")
        }
        return number
    }

    /// ISO 13616: the country and check digits move to the end, letters become 10–35, and the number mod 97 is 1.
    private static func hasValidIBANCheckDigits(_ iban: String) -> Bool {
        guard iban.count >= 15, iban.dropFirst(2).prefix(2).allSatisfy(\.isASCIIDigit) else { return false }
        var remainder = 0
        for character in iban.dropFirst(4) + iban.prefix(4) {
            // Only ASCII letters and digits reach here: digits 0–9 stay, letters A–Z become 10–35.
            guard let ascii = character.asciiValue else { return false }
            let value = character.isASCIIDigit ? Int(ascii) - 48 : Int(ascii) - 55
            remainder = (remainder * (value < 10 ? 10 : 100) + value) % 97
        }
        return remainder == 1
    }
}
