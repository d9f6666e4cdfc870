import Foundation
import KioskCore

/// `kiosk check`'s file: how the kit reaches the developer's server, and what each product grants there.
///
/// JSON, with whole-line `//` comments allowed (`kiosk check init` writes a commented one). Header values may name
/// environment variables as `${NAME}`; their values are sent, never printed.
public struct CheckFile: Codable, Sendable, Hashable {
    /// The app in the store; it must exist (`kiosk apps create`) and sell the products below.
    public var bundleId: String
    /// Where the server takes App Store Server Notifications V2 (sandbox). During a run the store sends them to the
    /// kit's relay, which passes them on and plays the faults; the app's URLs are put back afterwards.
    public var notificationURL: String
    /// `GET {url}/{appAccountToken}?now=MILLISECONDS` → ``KioskProtocol/CheckProbe``; without it the verdict says
    /// which checks could not be made.
    public var probe: Call?
    /// The app telling its server about a purchase, as real apps do: `body` may hold `{{signedTransaction}}`,
    /// `{{transactionId}}`, `{{originalTransactionId}}`, `{{productId}}`, `{{appAccountToken}}` and
    /// `{{receiptData}}`.
    public var purchaseCall: Call?
    /// Asks the server to look for what it missed (Get Notification History, Get Transaction History) for the user
    /// `{{appAccountToken}}`: the "lost notification" story's last step.
    public var reconcileCall: Call?
    /// What each product grants on the server.
    public var products: [ProductGrant]
    /// How long the server may take to answer a notification, in seconds (default 5, Apple's limit).
    public var answerWithin: Double?

    /// An HTTP call the kit makes to the server.
    public struct Call: Codable, Sendable, Hashable {
        public var url: String
        /// Default `GET` for the probe, `POST` for the others.
        public var method: String?
        /// Sent with every call; values may name `${ENVIRONMENT_VARIABLES}`.
        public var headers: [String: String]?
        /// The body template (JSON text with `{{placeholders}}`).
        public var body: String?
    }

    /// A product of the check and what the server grants for it: an entitlement, or `amount` of a balance per
    /// unit bought.
    public struct ProductGrant: Codable, Sendable, Hashable {
        public var productId: String
        public var entitlement: String?
        public var balance: String?
        public var amount: Int64?
    }

    /// Reads and checks a check file: comments, JSON syntax, unknown keys, and each field's sense.
    public static func load(_ data: Data) throws -> CheckFile {
        let text = String(decoding: data, as: UTF8.self)
        let uncommented = text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces).hasPrefix("//") ? "" : String($0) }
            .joined(separator: "\n")
        let file = try CatalogFileCoding.decode(
            CheckFile.self, from: Data(uncommented.utf8), code: .invalidCheckFile, fileKind: "check file",
            fix: "Compare it with the file `kiosk check init` writes.")
        try file.validate()
        return file
    }

    func validate() throws {
        var problems: [KioskError] = []
        func url(_ text: String, field: String) {
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                problems.append(
                    KioskError(
                        .invalidUrl, "'\(text)' is not an http(s) URL.", field: field,
                        fix: "Write e.g. http://127.0.0.1:8090/notifications"))
                return
            }
        }
        url(notificationURL, field: "notificationURL")
        for (name, call) in [("probe", probe), ("purchaseCall", purchaseCall), ("reconcileCall", reconcileCall)] {
            if let call { url(call.url, field: "\(name).url") }
        }
        if products.isEmpty {
            problems.append(
                KioskError(
                    .noProducts, "The check file names no products.", field: "products",
                    fix: "List the app's products with what each grants on your server (`kiosk check init` does)."))
        }
        for (index, product) in products.enumerated() {
            let field = "products[\(index)]"
            switch (product.entitlement, product.balance, product.amount) {
            case (.some(let name), nil, nil) where !name.isEmpty: break
            case (nil, .some(let name), .some(let amount)) where !name.isEmpty && (1...1_000_000_000).contains(amount):
                break
            default:
                problems.append(
                    KioskError(
                        .invalidGrant,
                        "\(product.productId) must grant either an entitlement, or a balance with an amount of 1 to 1,000,000,000.",
                        field: field,
                        fix:
                            #"Write {"productId": …, "entitlement": "pro"} or {"productId": …, "balance": "coins", "amount": 100}."#
                    ))
            }
        }
        if let answerWithin, !(0.1...60).contains(answerWithin) {
            problems.append(
                KioskError(.invalidAnswerWithin, "answerWithin must be 0.1 to 60 seconds.", field: "answerWithin"))
        }
        if let error = KioskError.combined(problems) { throw error }
    }

    /// The grant of `productId`, if the file names it.
    func grant(of productId: String) -> ProductGrant? { products.first { $0.productId == productId } }
}

extension CheckFile.Call {
    /// The headers with `${NAME}` replaced from `environment`; a variable that is not set is an error naming it.
    func resolvedHeaders(_ environment: [String: String]) throws -> [(String, String)] {
        try (headers ?? [:]).sorted { $0.key < $1.key }.map { name, value in
            var resolved = ""
            var rest = Substring(value)
            while let start = rest.range(of: "${") {
                resolved += rest[..<start.lowerBound]
                guard let end = rest[start.upperBound...].firstIndex(of: "}") else {
                    resolved += rest[start.lowerBound...]
                    rest = ""
                    break
                }
                let variable = String(rest[start.upperBound..<end])
                guard let text = environment[variable] else {
                    throw KioskError(
                        .missingEnvironmentVariable, "The header \(name) names ${\(variable)}, which is not set.",
                        field: "headers.\(name)",
                        fix: "Export \(variable) before running kiosk check.")
                }
                resolved += text
                rest = rest[rest.index(after: end)...]
            }
            return (name, resolved + rest)
        }
    }

    /// `body` with each `{{name}}` replaced by its value, escaped for a JSON string.
    func renderedBody(_ values: [String: String]) -> String? {
        guard var text = body else { return nil }
        for (name, value) in values {
            text = text.replacingOccurrences(of: "{{\(name)}}", with: Self.jsonEscaped(value))
        }
        return text
    }

    static func jsonEscaped(_ value: String) -> String {
        let encoded = (try? JSONEncoder().encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "\"\""
        return String(encoded.dropFirst().dropLast())
    }
}
