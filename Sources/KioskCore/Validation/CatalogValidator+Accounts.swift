import Foundation

extension CatalogValidator {
    /// The longest email address accepted (RFC 5321's path limit).
    public static let emailMaxLength = 254
    /// The shortest sandbox tester password accepted.
    public static let passwordMinLength = 8
    /// The longest password accepted (App Store Connect publishes no limit; this is Kiosk's, so a password's hash
    /// costs the same for everyone).
    public static let passwordMaxLength = 128

    /// Checks a password: 8–128 characters.
    public static func validatePassword(_ password: String, field: String = "password") -> [KioskError] {
        if password.count < passwordMinLength {
            return [
                KioskError(
                    .passwordTooShort,
                    "The password has \(password.count) characters; at least \(passwordMinLength) are required.",
                    field: field, fix: "Choose a password of \(passwordMinLength) or more characters.")
            ]
        }
        if password.unicodeScalars.count > passwordMaxLength {
            return [
                KioskError(
                    .passwordTooLong, "The password is longer than \(passwordMaxLength) characters.", field: field,
                    fix: "Choose a password of \(passwordMinLength)–\(passwordMaxLength) characters.")
            ]
        }
        return []
    }

    /// The shortest console password accepted: OWASP ASVS 4.0 level 2 asks for 12 characters (V2.1.1).
    public static let consolePasswordMinLength = 12
    /// Words that, with digits and punctuation around them, make the passwords tried first ("Password2024!"). This
    /// is a short list of the commonest, not a breach corpus: Kiosk looks nothing up.
    static let commonPasswordWords: Set<String> = [
        "password", "passwort", "passw", "qwerty", "qwertyuiop", "qwertz", "azerty", "asdfgh", "asdfghjkl", "zxcvbn",
        "letmein", "welcome", "admin", "administrator", "root", "iloveyou", "monkey", "dragon", "football", "baseball",
        "sunshine", "princess", "abc", "abcdef", "abcdefgh", "kiosk", "changeme", "secret", "login", "master",
        "shadow", "trustno", "test", "guest", "user", "summer", "winter", "spring", "autumn",
    ]

    /// Checks a console password as OWASP ASVS level 2 asks: 12–128 characters, not the email or its name part,
    /// and not one of the passwords tried first (a common word with digits or punctuation around it, digits
    /// alone, one or two characters repeated).
    public static func validateConsolePassword(_ password: String, email: String, field: String) -> [KioskError] {
        if password.count < consolePasswordMinLength {
            return [
                KioskError(
                    .passwordTooShort,
                    "The password has \(password.count) characters; a console account needs at least "
                        + "\(consolePasswordMinLength).",
                    field: field, fix: "Choose a passphrase of \(consolePasswordMinLength) or more characters.")
            ]
        }
        if let tooLong = validatePassword(password, field: field).first { return [tooLong] }
        let lower = password.lowercased()
        let address = email.lowercased()
        let name = address.split(separator: "@").first.map(String.init) ?? ""
        if lower.contains(address) || (name.count >= 3 && lower.contains(name)) {
            return [
                KioskError(
                    .passwordContainsEmail, "The password contains the account's email address or its name part.",
                    field: field, fix: "Choose a password that does not contain \(address).")
            ]
        }
        let letters = String(lower.filter(\.isLetter))
        if Set(lower).count <= 2 || letters.isEmpty || commonPasswordWords.contains(letters) {
            return [
                KioskError(
                    .passwordTooCommon,
                    "The password is one of those tried first (a common word, digits alone, or "
                        + "a repeated character).", field: field,
                    fix: "Choose a passphrase of a few unrelated words.")
            ]
        }
        return []
    }

    /// Checks an email address against a practical RFC 5322 subset: `local@domain.tld`, one `@`, no spaces, a local
    /// part of 1–64 of the usual atom characters without leading, trailing or double dots, a domain of at least two
    /// labels (letters, digits, inner hyphens) ending in a top-level domain of two or more letters; ≤ 254 characters.
    public static func validateEmail(_ email: String, field: String = "email") -> [KioskError] {
        let fix = "Give an address such as tester@example.com; it need not exist, but must look like one."
        func problem(_ why: String) -> [KioskError] {
            [KioskError(.invalidEmail, "'\(email)' is not a valid email address: \(why).", field: field, fix: fix)]
        }
        if email.isEmpty { return problem("it is empty") }
        if email.count > emailMaxLength { return problem("it is longer than \(emailMaxLength) characters") }
        if email.contains(where: \.isWhitespace) { return problem("it contains a space") }
        let halves = email.split(separator: "@", omittingEmptySubsequences: false)
        guard halves.count == 2 else { return problem("it needs exactly one @") }
        let local = halves[0]
        let domain = halves[1]
        let atomSymbols = Set("!#$%&'*+/=?^_`{|}~-.")
        let isAtomCharacter = { (c: Character) in c.isASCIILetter || c.isASCIIDigit || atomSymbols.contains(c) }
        guard (1...64).contains(local.count), local.allSatisfy(isAtomCharacter)
        else { return problem("the part before @ must be 1–64 letters, digits or !#$%&'*+/=?^_`{|}~-.") }
        if local.first == "." || local.last == "." || local.contains("..") {
            return problem("the part before @ has a misplaced dot")
        }
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2 else { return problem("the domain needs a dot, as in example.com") }
        for label in labels {
            guard (1...63).contains(label.count), label.first != "-", label.last != "-",
                label.allSatisfy({ $0.isASCIILetter || $0.isASCIIDigit || $0 == "-" })
            else { return problem("the domain label '\(label)' is not a valid host name part") }
        }
        if let tld = labels.last, tld.count < 2 || !tld.allSatisfy(\.isASCIILetter) {
            return problem("the top-level domain '\(tld)' must be two or more letters")
        }
        return []
    }

    /// Checks a server notification URL: absolute, `http` or `https`, with a host.
    public static func validateNotificationURL(_ text: String, field: String = "notificationURL") -> [KioskError] {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
        else {
            return [
                KioskError(
                    .invalidNotificationUrl, "'\(text)' is not an absolute http or https URL.", field: field,
                    fix: "Give a full URL such as https://example.com/apple/notifications.")
            ]
        }
        return []
    }

    /// Checks an app: its bundle id, its name and every notification URL of both environments.
    public static func validate(app: App, field: String = "app") -> [KioskError] {
        var errors = validateBundleId(app.bundleId, field: "\(field).bundleId")
        errors += validateAppName(app.name, field: "\(field).name")
        for (index, url) in app.productionNotificationURLs.enumerated() {
            errors += validateNotificationURL(url, field: "\(field).productionNotificationURLs[\(index)]")
        }
        for (index, url) in app.sandboxNotificationURLs.enumerated() {
            errors += validateNotificationURL(url, field: "\(field).sandboxNotificationURLs[\(index)]")
        }
        return errors
    }
}
