import Foundation
import KioskCore
import KioskSQL
import KioskSigning
import X509

/// A checked configuration with its files read: root certificates parsed, the Server API key loaded, products
/// indexed. Built once at start; a problem stops the start with a message naming the field.
public struct LoadedMerchantConfiguration: Sendable {
    public let raw: MerchantConfiguration
    public let apps: [String: LoadedApp]
    /// When the configuration last changed: the product lists' `Last-Modified`.
    public let modifiedDate: Date
    /// Roots trusted for HTTPS besides the system's (`tlsRootCertificates`).
    public let tlsRoots: [Certificate]

    /// One app, ready to verify its purchases.
    public struct LoadedApp: Sendable {
        public let settings: MerchantConfiguration.AppSettings
        public let environments: Set<StoreEnvironment>
        public let roots: [StoreEnvironment: [Certificate]]
        public let serverAPIKey: ServerAPICredentials?
        public let products: [String: MerchantConfiguration.ProductSettings]
        public let contentDirectories: [String: URL]
        /// Trusted for HTTPS to the store besides the system's roots (`tlsRootCertificates`).
        public let tlsRoots: [Certificate]

        public var bundleId: String { settings.bundleId }
    }

    /// Checks `configuration`, reading relative paths from `baseDirectory`.
    public init(_ configuration: MerchantConfiguration, baseDirectory: URL, modifiedDate: Date = Date()) throws {
        func invalid(_ field: String, _ message: String, fix: String) -> KioskError {
            KioskError(.configurationInvalid, message, field: field, fix: fix)
        }
        func resolve(_ path: String) -> URL {
            path.hasPrefix("/") ? URL(fileURLWithPath: path) : baseDirectory.appendingPathComponent(path)
        }
        guard configuration.adminToken.count >= 16 else {
            throw invalid("adminToken", "adminToken has fewer than 16 characters.", fix: "Use a long random token.")
        }
        guard configuration.userTokenSecret.count >= 16 else {
            throw invalid(
                "userTokenSecret", "userTokenSecret has fewer than 16 characters.", fix: "Use a long random secret.")
        }
        if let size = configuration.databasePoolSize, !DatabaseOpener.poolSizes.contains(size) {
            throw invalid(
                "databasePoolSize", "databasePoolSize is \(size), outside \(DatabaseOpener.poolSizes).",
                fix: "Use a number of connections from \(DatabaseOpener.poolSizes.lowerBound) to "
                    + "\(DatabaseOpener.poolSizes.upperBound), or leave it out for \(DatabaseOpener.defaultPoolSize).")
        }
        if let lifetime = configuration.contentURLLifetime,
            !MerchantConfiguration.contentURLLifetimes.contains(lifetime)
        {
            throw invalid(
                "contentURLLifetime", "contentURLLifetime is \(lifetime) seconds, outside 1 second to a week.",
                fix: "Use a number of seconds from 1 to 604800, or leave it out for 900.")
        }
        guard !configuration.apps.isEmpty else {
            throw invalid("apps", "The configuration names no app.", fix: "Add an entry to apps.")
        }
        let tlsRoots = try (configuration.tlsRootCertificates ?? []).enumerated().flatMap { position, file in
            try TLSTrust.certificates(inPEMFile: resolve(file).path, field: "tlsRootCertificates[\(position)]")
        }
        var apps: [String: LoadedApp] = [:]
        for (index, app) in configuration.apps.enumerated() {
            let place = "apps[\(index)]"
            guard apps[app.bundleId] == nil else {
                throw invalid("\(place).bundleId", "\(app.bundleId) is configured twice.", fix: "Merge the entries.")
            }
            var environments = Set<StoreEnvironment>()
            for (position, name) in (app.environments ?? ["Sandbox", "Production"]).enumerated() {
                guard let environment = StoreEnvironment(appleName: name) else {
                    throw invalid(
                        "\(place).environments[\(position)]", "'\(name)' is not an environment.",
                        fix: "Use Sandbox or Production.")
                }
                environments.insert(environment)
            }
            var roots: [StoreEnvironment: [Certificate]] = [:]
            for (name, files) in app.rootCertificates {
                guard let environment = StoreEnvironment(appleName: name) else {
                    throw invalid(
                        "\(place).rootCertificates.\(name)", "'\(name)' is not an environment.",
                        fix: "Name the roots of Sandbox and Production.")
                }
                roots[environment] = try files.enumerated().map { position, file in
                    let field = "\(place).rootCertificates.\(name)[\(position)]"
                    guard let data = try? Data(contentsOf: resolve(file)) else {
                        throw invalid(
                            field, "Cannot read the certificate file \(resolve(file).path).",
                            fix: "Export it with `kiosk certs export --environment \(name.lowercased())`.")
                    }
                    do {
                        if let pem = String(data: data, encoding: .utf8), pem.contains("-----BEGIN") {
                            return try Certificate(pemEncoded: pem)
                        }
                        return try Certificate(derEncoded: Array(data))
                    } catch {
                        throw invalid(field, "\(file) is not a PEM or DER certificate.", fix: "Export it again.")
                    }
                }
            }
            for environment in environments where (roots[environment] ?? []).isEmpty {
                throw invalid(
                    "\(place).rootCertificates.\(environment.appleName)",
                    "No root certificate for \(environment.appleName), which the app accepts.",
                    fix: "Add the root's PEM file, or drop \(environment.appleName) from environments.")
            }
            var key: ServerAPICredentials?
            if let settings = app.serverAPIKey {
                let field = "\(place).serverAPIKey"
                let pem: String
                if let inline = settings.privateKey {
                    pem = inline
                } else if let file = settings.privateKeyFile,
                    let text = try? String(contentsOf: resolve(file), encoding: .utf8)
                {
                    pem = text
                } else {
                    throw invalid(
                        field, "The Server API key has no readable privateKey or privateKeyFile.",
                        fix: "Create a key with `kiosk keys create --app \(app.bundleId)` and name its PEM.")
                }
                key = try ServerAPICredentials(
                    keyId: settings.keyId, issuerId: settings.issuerId, bundleId: app.bundleId, privateKeyPEM: pem,
                    field: field)
            }
            if app.confirmWithServerAPI == true, key == nil {
                throw invalid(
                    "\(place).confirmWithServerAPI", "confirmWithServerAPI needs a serverAPIKey.",
                    fix: "Add serverAPIKey or turn the confirmation off.")
            }
            var products: [String: MerchantConfiguration.ProductSettings] = [:]
            var content: [String: URL] = [:]
            for (position, product) in app.products.enumerated() {
                let field = "\(place).products[\(position)]"
                guard products[product.productId] == nil else {
                    throw invalid("\(field).productId", "\(product.productId) is listed twice.", fix: "Keep one.")
                }
                switch product.type {
                case .consumable:
                    guard product.balance != nil, let amount = product.amount, amount > 0 else {
                        throw invalid(
                            "\(field).balance", "The consumable \(product.productId) credits nothing.",
                            fix: "Give it a balance name and a positive amount per unit, e.g. coins and 100.")
                    }
                    guard MerchantConfiguration.ProductSettings.amounts.contains(amount) else {
                        throw invalid(
                            "\(field).amount",
                            "The consumable \(product.productId) credits \(amount) a unit, too many.",
                            fix: "Use an amount from 1 to 1000000000000.")
                    }
                case .nonConsumable, .autoRenewable:
                    guard product.entitlement != nil else {
                        throw invalid(
                            "\(field).entitlement", "\(product.productId) unlocks no entitlement.",
                            fix: "Name the entitlement it grants, e.g. \"pro\".")
                    }
                    if let level = product.level {
                        guard product.type == .autoRenewable,
                            MerchantConfiguration.ProductSettings.levels.contains(level)
                        else {
                            throw invalid(
                                "\(field).level",
                                "\(product.productId) has level \(level); only auto-renewables have levels, 1–1000.",
                                fix: "Give an auto-renewable its level in its subscription group (1 is the highest), "
                                    + "or remove level.")
                        }
                    }
                case .nonRenewing:
                    guard product.entitlement != nil, let days = product.durationDays, days > 0 else {
                        throw invalid(
                            "\(field).durationDays",
                            "The non-renewing \(product.productId) needs an entitlement and durationDays.",
                            fix: "Add both, e.g. \"season\" and 90.")
                    }
                    guard MerchantConfiguration.ProductSettings.durationDaysRange.contains(days) else {
                        throw invalid(
                            "\(field).durationDays",
                            "The non-renewing \(product.productId) lasts \(days) days, too long.",
                            fix: "Use from 1 to 36500 days.")
                    }
                }
                if let folder = product.content {
                    var isDirectory: ObjCBool = false
                    let url = resolve(folder)
                    guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory),
                        isDirectory.boolValue
                    else {
                        throw invalid(
                            "\(field).content", "The content folder \(url.path) does not exist.",
                            fix: "Create it with the product's files, or remove content.")
                    }
                    content[product.productId] = url.standardizedFileURL
                }
                products[product.productId] = product
            }
            apps[app.bundleId] = LoadedApp(
                settings: app, environments: environments, roots: roots, serverAPIKey: key, products: products,
                contentDirectories: content, tlsRoots: tlsRoots)
        }
        self.raw = configuration
        self.apps = apps
        self.tlsRoots = tlsRoots
        self.modifiedDate = modifiedDate
    }

    /// The app `bundleId` names, or the only one when it is nil.
    public func app(_ bundleId: String?, field: String = "bundleId") throws -> LoadedApp {
        if let bundleId {
            guard let app = apps[bundleId] else {
                throw KioskError(
                    .unknownApp, "This merchant sells nothing for \(bundleId).", field: field,
                    fix: "Use one of: \(apps.keys.sorted().joined(separator: ", ")).")
            }
            return app
        }
        guard apps.count == 1, let only = apps.values.first else {
            throw KioskError(
                .missingField, "The merchant serves several apps: say which.", field: field,
                fix: "Add bundleId (one of: \(apps.keys.sorted().joined(separator: ", "))).")
        }
        return only
    }
}

/// The In-App Purchase key that signs App Store Server API tokens.
public struct ServerAPICredentials: Sendable {
    public let keyId: String
    public let issuerId: String
    public let bundleId: String
    public let privateKeyPEM: String

    init(keyId: String, issuerId: String, bundleId: String, privateKeyPEM: String, field: String) throws {
        // Signing once proves the key is usable before the first call needs it.
        do {
            _ = try ServerAPIToken.sign(
                keyId: keyId, issuerId: issuerId, bundleId: bundleId, privateKeyPEM: privateKeyPEM,
                expiresAt: Date().addingTimeInterval(300))
        } catch {
            throw KioskError(
                .configurationInvalid, "The Server API key is not a PKCS#8 P-256 private key.", field: field,
                fix: "Use the PEM that `kiosk keys create` printed (the .p8 file).")
        }
        self.keyId = keyId
        self.issuerId = issuerId
        self.bundleId = bundleId
        self.privateKeyPEM = privateKeyPEM
    }

    /// A fresh bearer token, valid 5 minutes, as Apple's clients make them.
    func token(now: Date) throws -> String {
        try ServerAPIToken.sign(
            keyId: keyId, issuerId: issuerId, bundleId: bundleId, privateKeyPEM: privateKeyPEM,
            expiresAt: now.addingTimeInterval(300))
    }
}
