import AsyncHTTPClient
import Foundation
import KioskCore
import KioskHTTPClient
import KioskProtocol
import KioskSigning
import NIOCore
import NIOHTTP1
import X509

/// Makes a working merchant configuration from a running Kiosk store (`kiosk merchant init`): reads the app's
/// Apple id and shared secret (generating one if it has none), exports both root certificates, creates an
/// In-App Purchase key for the Server API, derives products from the store's catalog unless given, and can point
/// the app's notification URLs at the merchant.
public enum MerchantSetup {
    /// Where `init` writes the TLS roots it was given, beside the configuration.
    public static let tlsRootFileName = "kiosk-tls-root.pem"

    /// Writes `kiosk-sandbox-root.pem`, `kiosk-production-root.pem` and `merchant-key.p8` into `directory` and
    /// returns the configuration naming them (relative paths: save it in the same folder).
    ///
    /// - Parameters:
    ///   - storeURL: The store's base URL, e.g. `http://127.0.0.1:8080`.
    ///   - adminToken: The store's admin token.
    ///   - products: What each product grants; nil derives it from the catalog (``GrantNames``): "100 Coins"
    ///     credits 100 `coins`, "Remove Ads" unlocks `remove-ads`, a subscription its group's entitlement.
    ///   - notificationURL: Set as the app's sandbox and production notification URL when given.
    ///   - tlsRoots: Trusted for an https:// store besides the system's roots (the Kiosk TLS root); written into
    ///     `kiosk-tls-root.pem` and named in `tlsRootCertificates`, so the merchant trusts them too.
    public static func configuration(
        storeURL: String, adminToken: String, bundleId: String,
        products: [MerchantConfiguration.ProductSettings]? = nil, directory: URL, notificationURL: String? = nil,
        tlsRoots: [Certificate] = []
    ) async throws -> MerchantConfiguration {
        let baseURL = storeURL.hasSuffix("/") ? String(storeURL.dropLast()) : storeURL
        let client = try JSONHTTPClient.makeHTTPClient(trusting: tlsRoots, failFast: true)
        do {
            let made = try await configuration(
                admin: StoreAdmin(baseURL: baseURL, token: adminToken, client: JSONHTTPClient(http: client)),
                bundleId: bundleId, products: products, directory: directory, notificationURL: notificationURL,
                tlsRoots: tlsRoots)
            try await client.shutdown()
            return made
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    private static func configuration(
        admin: StoreAdmin, bundleId: String, products: [MerchantConfiguration.ProductSettings]?, directory: URL,
        notificationURL: String?, tlsRoots: [Certificate]
    ) async throws -> MerchantConfiguration {
        var app: AppResource = try await admin.call(.GET, AdminRoutes.app.path(bundleId))
        if app.sharedSecret == nil {
            app = try await admin.call(.POST, AdminRoutes.sharedSecret.path(bundleId))
        }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var roots: [String: [String]] = [:]
        for environment in StoreEnvironment.allCases {
            let file = "kiosk-\(environment.rawValue)-root.pem"
            let pem = try await admin.text(
                .GET, AdminRoutes.rootCertificate.path(environment.rawValue, query: ["format": "pem"]))
            try Data(pem.utf8).write(to: directory.appendingPathComponent(file), options: .atomic)
            roots[environment.appleName] = [file]
        }
        let key: KeyResource = try await admin.call(
            .POST, AdminRoutes.keys.path(bundleId), body: ["name": "Merchant server"])
        guard let issuerId = key.issuerId, let privateKey = key.privateKey else {
            throw StoreAdmin.unexpected("the new key has no issuerId or privateKey")
        }
        let keyId = key.keyId
        let keyFile = "merchant-key.p8"
        let keyURL = directory.appendingPathComponent(keyFile)
        try Data(privateKey.utf8).write(to: keyURL, options: .atomic)
        // The key signs Server API calls as the app: owner-only, like an SSH key.
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyURL.path)
        var tlsRootFiles: [String]?
        if !tlsRoots.isEmpty {
            let pem = try tlsRoots.map { try $0.serializeAsPEM().pemString + "\n" }.joined()
            try Data(pem.utf8).write(to: directory.appendingPathComponent(tlsRootFileName), options: .atomic)
            tlsRootFiles = [tlsRootFileName]
        }
        if let notificationURL {
            let _: AppResource = try await admin.call(
                .PATCH, AdminRoutes.app.path(bundleId),
                body: ["sandboxNotificationURLs": [notificationURL], "productionNotificationURLs": [notificationURL]])
        }
        var settings = products
        if settings == nil {
            let catalog: ProductList = try await admin.call(.GET, AdminRoutes.products.path(bundleId))
            let groups: GroupList = try await admin.call(.GET, AdminRoutes.subscriptionGroups.path(bundleId))
            let groupNames = Dictionary(
                groups.subscriptionGroups.map { ($0.groupId, $0.referenceName) },
                uniquingKeysWith: { first, _ in first })
            settings = catalog.products.compactMap { derivedProduct($0, groupNames: groupNames) }
        }
        return MerchantConfiguration(
            adminToken: SecretGenerator.token(), userTokenSecret: SecretGenerator.token(), publicURL: nil,
            contentURLLifetime: nil, tlsRootCertificates: tlsRootFiles,
            apps: [
                .init(
                    bundleId: bundleId, appAppleId: app.appAppleId, sharedSecret: app.sharedSecret,
                    store: .kiosk(admin.baseURL), rootCertificates: roots,
                    serverAPIKey: .init(keyId: keyId, issuerId: issuerId, privateKey: nil, privateKeyFile: keyFile),
                    confirmWithServerAPI: nil, environments: nil, products: settings ?? [])
            ])
    }

    /// A product's settings derived from the store's catalog entry, named as ``GrantNames`` names them (a
    /// subscription unlocks its group's entitlement, at its level in the group).
    public static func derivedProduct(
        _ product: ProductResource, groupNames: [Int64: String]
    ) -> MerchantConfiguration.ProductSettings? {
        guard product.deletedAt == nil,
            let kind = MerchantConfiguration.ProductKind(rawValue: product.type.rawValue)
        else { return nil }
        let productId = product.productId
        let english =
            product.localizations.first { $0.locale.hasPrefix("en") } ?? product.localizations.first
        let displayName = english.flatMap { $0.displayName.isEmpty ? nil : $0.displayName }
        switch kind {
        case .consumable:
            let (balance, amount) = GrantNames.consumable(displayName: displayName, productId: productId)
            return .init(productId: productId, type: kind, balance: balance, amount: amount)
        case .autoRenewable:
            let group = product.subscription.flatMap { groupNames[$0.groupId] }
            let entitlement =
                group.map(GrantNames.slug).flatMap { $0.isEmpty ? nil : $0 }
                ?? GrantNames.entitlement(displayName: displayName, productId: productId)
            let level = product.subscription?.level
            return .init(productId: productId, type: kind, entitlement: entitlement, level: level)
        case .nonConsumable, .nonRenewing:
            return .init(
                productId: productId, type: kind,
                entitlement: GrantNames.entitlement(displayName: displayName, productId: productId),
                durationDays: kind == .nonRenewing ? 30 : nil)
        }
    }
}

/// The few admin calls setup makes.
private struct StoreAdmin {
    let baseURL: String
    let token: String
    let client: JSONHTTPClient

    /// The console's typed answer to one call.
    func call<Answer: Decodable>(
        _ method: HTTPMethod, _ path: String, body: (some Encodable)? = [String: String]?.none
    ) async throws -> Answer {
        let data = try await send(method, path, body: try body.map { try JSONEncoder().encode($0) })
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            return try decoder.decode(Answer.self, from: data)
        } catch {
            throw Self.unexpected("\(method) \(path) did not answer a \(Answer.self): \(error)")
        }
    }

    func text(_ method: HTTPMethod, _ path: String) async throws -> String {
        String(decoding: try await send(method, path, body: nil), as: UTF8.self)
    }

    private func send(_ method: HTTPMethod, _ path: String, body: Data?) async throws -> Data {
        let answer: JSONHTTPAnswer
        do {
            answer = try await client.send(method, baseURL + path, bearer: token, json: body, timeout: .seconds(60))
        } catch {
            switch error {
            case .cancelled: throw CancellationError()
            case .untrustedCertificate:
                throw KioskError(
                    .storeUntrusted,
                    "The store at \(baseURL) has a TLS certificate that does not lead to a trusted root.",
                    fix: TLSTrust.untrustedFix)
            case .unreachable(let cause):
                throw KioskError(
                    .storeUnreachable, "The store at \(baseURL) did not answer: \(cause)",
                    fix: "Start it (`kiosk serve`) or pass its URL with --server.")
            }
        }
        guard answer.isSuccess else {
            let detail = answer.kioskError
            throw KioskError(
                (detail?.code).flatMap(ErrorCode.init(rawValue:)) ?? .storeRefused,
                "The store refused \(method) \(path): \(detail?.message ?? "HTTP \(answer.status.code)")",
                fix: detail?.fix ?? "Check the bundle id and the admin token.")
        }
        return answer.body
    }

    static func unexpected(_ message: String) -> KioskError {
        KioskError(.unexpectedStoreAnswer, "Unexpected store answer: \(message).")
    }
}
