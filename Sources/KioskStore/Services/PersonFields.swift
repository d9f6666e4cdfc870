import KioskCore
import KioskSigning

/// The sign-in and name fields sandbox testers and customer accounts share, checked once for both: each given
/// value is validated, the storefront resolved and the password hashed. Hashing is slow, so callers do this
/// before opening a database transaction.
struct PersonFields {
    var passwordHash: String?
    var firstName: String?
    var lastName: String?
    var storefront: Storefront?

    init(password: String?, firstName: String?, lastName: String?, storefront: String?) async throws {
        if let password { try CatalogRules.validatePassword(password, field: "password") }
        if let firstName { try CatalogRules.validateName(firstName, what: "first name", field: "firstName") }
        if let lastName { try CatalogRules.validateName(lastName, what: "last name", field: "lastName") }
        self.storefront = try storefront.map { try CatalogRules.requireStorefront($0, field: "storefront") }
        self.passwordHash = if let password { try await PasswordHasher().hashOffCooperativePool(password) } else { nil }
        self.firstName = firstName
        self.lastName = lastName
    }

    /// Fields for a new person: the password is required; missing names and storefront take the defaults.
    static func forCreation(
        email: String, password: String?, firstName: String?, lastName: String?, storefront: String?,
        defaultName: (first: String, last: String), kind: String
    ) async throws -> (passwordHash: String, firstName: String, lastName: String, storefront: Storefront) {
        try CatalogRules.validateEmail(email, field: "email")
        guard password != nil else {
            throw KioskError(.missingField, "A \(kind) needs a password.", field: "password", fix: "Add 'password'.")
        }
        let fields = try await PersonFields(
            password: password, firstName: firstName ?? defaultName.first, lastName: lastName ?? defaultName.last,
            storefront: storefront ?? "USA")
        guard let passwordHash = fields.passwordHash, let first = fields.firstName, let last = fields.lastName,
            let storefront = fields.storefront
        else { preconditionFailure("every field was given") }
        return (passwordHash, first, last, storefront)
    }
}
