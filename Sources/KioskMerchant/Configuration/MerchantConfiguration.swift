import Foundation
import KioskCore
import X509

/// Everything the merchant server needs to know, read from one JSON file (`kiosk merchant serve --config FILE`).
///
/// ```json
/// {
///   "adminToken": "a-long-random-admin-token",
///   "userTokenSecret": "a-long-random-secret-that-signs-user-tokens",
///   "apps": [{
///     "bundleId": "com.example.shop", "appAppleId": 1400000001, "sharedSecret": "…",
///     "store": "http://127.0.0.1:8080",
///     "rootCertificates": {"Sandbox": ["sandbox-root.pem"], "Production": ["production-root.pem"]},
///     "serverAPIKey": {"keyId": "…", "issuerId": "…", "privateKeyFile": "key.p8"},
///     "products": [
///       {"productId": "com.example.shop.coins", "type": "consumable", "balance": "coins", "amount": 100},
///       {"productId": "com.example.shop.pro", "type": "auto_renewable", "entitlement": "pro", "level": 1},
///       {"productId": "com.example.shop.levels", "type": "non_consumable", "entitlement": "levels",
///        "content": "content/levels"}
///     ]
///   }]
/// }
/// ```
/// Relative file paths are read from the configuration file's folder.
public struct MerchantConfiguration: Codable, Sendable {
    /// Bearer token of the admin routes (reconciliation, any user's entitlements). At least 16 characters.
    public var adminToken: String
    /// Signs user tokens (``UserTokens``); at least 16 characters. The developer's own sign-in issues tokens
    /// with it; `kiosk merchant token` and `POST /merchant/v1/admin/tokens` too.
    public var userTokenSecret: String
    /// Where this merchant is reached from outside, for content URLs; default: the address it listens on.
    public var publicURL: String?
    /// How long a content download URL is valid, in seconds (1 to a week); default 900.
    public var contentURLLifetime: Int?
    /// The lifetimes `contentURLLifetime` accepts: a second to a week.
    public static let contentURLLifetimes = 1...604_800
    /// The most connections the ledger's PostgreSQL pool opens (1–500; default 10); `kiosk merchant serve
    /// --database-pool-size` overrides it. SQLite uses one connection.
    public var databasePoolSize: Int?
    /// PEM files of roots trusted for HTTPS to the stores besides the system's: the Kiosk TLS root of a store
    /// served over HTTPS (`kiosk certs tls`).
    public var tlsRootCertificates: [String]?
    public var apps: [AppSettings]

    /// One app the merchant sells for.
    public struct AppSettings: Codable, Sendable {
        public var bundleId: String
        /// The app's Apple id; required to accept production notifications (Apple's verifier needs it).
        public var appAppleId: Int64?
        /// The app's shared secret, sent with `verifyReceipt` (needed for receipts with auto-renewables).
        public var sharedSecret: String?
        /// The store: a Kiosk base URL (production there, sandbox under `/sandbox`), `"apple"` for Apple's own
        /// endpoints, or an object naming each endpoint (``StoreEndpoints``).
        public var store: StoreEndpoints
        /// PEM files of the trusted root certificates per environment (`Sandbox`, `Production`).
        public var rootCertificates: [String: [String]]
        /// The In-App Purchase key for the App Store Server API (reconciliation, confirmations).
        public var serverAPIKey: ServerAPIKey?
        /// Confirm every signed transaction an app sends with Get Transaction Info before granting.
        public var confirmWithServerAPI: Bool?
        /// Which environments are accepted; default both.
        public var environments: [String]?
        /// The app passes each user's id (a UUID) as the purchase's `appAccountToken`, so a transaction the store
        /// tells of belongs to the user its token names even without an order (default false: it waits, unclaimed,
        /// for the app to deliver it).
        public var usersByAppAccountToken: Bool?
        /// Answer each CONSUMPTION_REQUEST with Send Consumption Information (whether the purchase was delivered),
        /// as Apple asks within 12 hours. Only with your customers' consent to share it (default false).
        public var sendConsumptionInformation: Bool?
        public var products: [ProductSettings]
    }

    /// The In-App Purchase key: its id, the issuer id, and the PKCS#8 PEM (inline or in a file).
    public struct ServerAPIKey: Codable, Sendable {
        public var keyId: String
        public var issuerId: String
        public var privateKey: String?
        public var privateKeyFile: String?
    }

    /// What a product delivers.
    public struct ProductSettings: Codable, Sendable {
        public var productId: String
        /// `consumable`, `non_consumable`, `auto_renewable` or `non_renewing`.
        public var type: ProductKind
        /// The entitlement a grant gives (non-consumables and subscriptions).
        public var entitlement: String?
        /// An auto-renewable's level in its subscription group (1 is the highest service). The products of one
        /// group unlock one entitlement; it shows the best level the user holds now.
        public var level: Int?
        /// The levels a subscription can have.
        public static let levels = 1...1_000
        /// The balance a consumable credits, `amount` per unit bought.
        public var balance: String?
        public var amount: Int64?
        /// How long a non-renewing subscription lasts, in days; purchases stack.
        public var durationDays: Int?
        /// The amounts a consumable can credit per unit: up to 10¹², so balances summed over many purchases stay
        /// far from Int64's limit.
        public static let amounts: ClosedRange<Int64> = 1...1_000_000_000_000
        /// The durations a non-renewing subscription can have: up to 100 years, so stacked periods stay dates.
        public static let durationDaysRange = 1...36_500
        /// A folder of files a grant lets the user download.
        public var content: String?
        /// Listed in the product lists; default true.
        public var listed: Bool?

        public init(
            productId: String, type: ProductKind, entitlement: String? = nil, level: Int? = nil,
            balance: String? = nil, amount: Int64? = nil, durationDays: Int? = nil, content: String? = nil,
            listed: Bool? = nil
        ) {
            self.productId = productId
            self.type = type
            self.entitlement = entitlement
            self.level = level
            self.balance = balance
            self.amount = amount
            self.durationDays = durationDays
            self.content = content
            self.listed = listed
        }
    }

    /// The four product types, as this file spells them.
    public enum ProductKind: String, Codable, Sendable, CaseIterable {
        case consumable
        case nonConsumable = "non_consumable"
        case autoRenewable = "auto_renewable"
        case nonRenewing = "non_renewing"

        /// The kind Apple's signed `type` names (`Consumable`, `Non-Consumable`, …).
        public init?(appleType: String) {
            switch appleType {
            case "Consumable": self = .consumable
            case "Non-Consumable": self = .nonConsumable
            case "Auto-Renewable Subscription": self = .autoRenewable
            case "Non-Renewing Subscription": self = .nonRenewing
            default: return nil
            }
        }
    }
}

/// Where the store answers `verifyReceipt` and the App Store Server API, per environment.
public struct StoreEndpoints: Codable, Sendable, Hashable {
    public var verifyReceipt: [StoreEnvironment: String]
    public var serverAPI: [StoreEnvironment: String]

    /// Apple's App Store.
    public static let apple = StoreEndpoints(
        verifyReceipt: [
            .production: "https://buy.itunes.apple.com/verifyReceipt",
            .sandbox: "https://sandbox.itunes.apple.com/verifyReceipt",
        ],
        serverAPI: [
            .production: "https://api.storekit.itunes.apple.com",
            .sandbox: "https://api.storekit-sandbox.itunes.apple.com",
        ])

    /// A Kiosk store at `baseURL`: production at the root, the sandbox under `/sandbox`.
    public static func kiosk(_ baseURL: String) -> StoreEndpoints {
        let base = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        return StoreEndpoints(
            verifyReceipt: [.production: "\(base)/verifyReceipt", .sandbox: "\(base)/sandbox/verifyReceipt"],
            serverAPI: [.production: base, .sandbox: "\(base)/sandbox"])
    }

    public init(verifyReceipt: [StoreEnvironment: String], serverAPI: [StoreEnvironment: String]) {
        self.verifyReceipt = verifyReceipt
        self.serverAPI = serverAPI
    }

    private struct Explicit: Codable {
        var verifyReceipt: [String: String]
        var serverAPI: [String: String]
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            if text == "apple" {
                self = .apple
            } else if let url = URL(string: text), url.scheme == "http" || url.scheme == "https" {
                self = .kiosk(text)
            } else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "'\(text)' is neither \"apple\" nor an http(s) URL")
            }
            return
        }
        let explicit = try container.decode(Explicit.self)
        func environments(_ values: [String: String]) throws -> [StoreEnvironment: String] {
            try values.reduce(into: [:]) { result, entry in
                guard let environment = StoreEnvironment(appleName: entry.key) else {
                    throw DecodingError.dataCorruptedError(
                        in: container, debugDescription: "'\(entry.key)' is not Sandbox or Production")
                }
                result[environment] = entry.value
            }
        }
        self.init(
            verifyReceipt: try environments(explicit.verifyReceipt), serverAPI: try environments(explicit.serverAPI))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(
            Explicit(
                verifyReceipt: Dictionary(uniqueKeysWithValues: verifyReceipt.map { ($0.key.appleName, $0.value) }),
                serverAPI: Dictionary(uniqueKeysWithValues: serverAPI.map { ($0.key.appleName, $0.value) })))
    }
}

extension StoreEnvironment {
    /// `Sandbox` / `Production` (Apple's spelling; lower case accepted too).
    public init?(appleName: String) {
        switch appleName.lowercased() {
        case "sandbox": self = .sandbox
        case "production": self = .production
        default: return nil
        }
    }
}

extension MerchantConfiguration {
    /// Reads and checks the configuration file; every problem names its place and what to do.
    public static func load(from path: String) throws -> LoadedMerchantConfiguration {
        let url = URL(fileURLWithPath: path)
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw KioskError(
                .configurationUnreadable,
                "Cannot read the merchant configuration \(path): \(error.localizedDescription)",
                field: path, fix: "Pass --config with the path of a JSON file (see `kiosk merchant init`).")
        }
        let configuration: MerchantConfiguration
        do {
            configuration = try JSONDecoder().decode(MerchantConfiguration.self, from: data)
        } catch let error as DecodingError {
            throw KioskError(
                .configurationInvalid, "The merchant configuration \(path) is not valid: \(error.readable)",
                field: error.path, fix: "Correct that field; docs/merchant.md shows a complete file.")
        }
        let modified =
            (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date) ?? Date()
        return try LoadedMerchantConfiguration(
            configuration, baseDirectory: url.deletingLastPathComponent(), modifiedDate: modified)
    }
}

extension DecodingError {
    /// The JSON path the error points at, e.g. `apps[0].products[1].type`.
    var path: String {
        let codingPath: [any CodingKey]
        switch self {
        case .keyNotFound(let key, let context): codingPath = context.codingPath + [key]
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            codingPath = context.codingPath
        @unknown default: codingPath = []
        }
        return codingPath.reduce("") { path, key in
            if let index = key.intValue { return "\(path)[\(index)]" }
            return path.isEmpty ? key.stringValue : "\(path).\(key.stringValue)"
        }
    }

    /// A sentence about what is wrong.
    var readable: String {
        switch self {
        case .keyNotFound: "the field '\(path)' is missing"
        case .typeMismatch(let type, _): "'\(path)' must be \(type)"
        case .valueNotFound(let type, _): "'\(path)' must be \(type), not null"
        case .dataCorrupted(let context): "'\(path)': \(context.debugDescription)"
        @unknown default: "unreadable"
        }
    }
}
