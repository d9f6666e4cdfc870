import AsyncHTTPClient
import Foundation
import KioskCore
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
        guard !tlsRoots.isEmpty else {
            return try await configuration(
                admin: StoreAdmin(baseURL: baseURL, token: adminToken, http: .shared), bundleId: bundleId,
                products: products, directory: directory, notificationURL: notificationURL, tlsRoots: [])
        }
        var http = HTTPClient.Configuration()
        try http.trust(tlsRoots)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: http)
        do {
            let made = try await configuration(
                admin: StoreAdmin(baseURL: baseURL, token: adminToken, http: client), bundleId: bundleId,
                products: products, directory: directory, notificationURL: notificationURL, tlsRoots: tlsRoots)
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
        var app = try await admin.json(.GET, "/admin/v1/apps/\(bundleId)")
        if app["sharedSecret"] == nil {
            app = try await admin.json(.POST, "/admin/v1/apps/\(bundleId)/shared-secret")
        }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var roots: [String: [String]] = [:]
        for environment in StoreEnvironment.allCases {
            let file = "kiosk-\(environment.rawValue)-root.pem"
            let pem = try await admin.text(.GET, "/admin/v1/certificates/\(environment.rawValue)/root?format=pem")
            try Data(pem.utf8).write(to: directory.appendingPathComponent(file), options: .atomic)
            roots[environment.appleName] = [file]
        }
        let key = try await admin.json(.POST, "/admin/v1/apps/\(bundleId)/keys", body: ["name": "Merchant server"])
        guard let keyId = key["keyId"] as? String, let issuerId = key["issuerId"] as? String,
            let privateKey = key["privateKey"] as? String
        else { throw StoreAdmin.unexpected("the new key has no keyId, issuerId or privateKey") }
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
            _ = try await admin.json(
                .PATCH, "/admin/v1/apps/\(bundleId)",
                body: ["sandboxNotificationURLs": [notificationURL], "productionNotificationURLs": [notificationURL]])
        }
        var settings = products
        if settings == nil {
            let catalog = try await admin.json(.GET, "/admin/v1/apps/\(bundleId)/products")
            let groups = try await admin.json(.GET, "/admin/v1/apps/\(bundleId)/subscription-groups")
            var groupNames: [Int64: String] = [:]
            for group in groups["subscriptionGroups"] as? [[String: Any]] ?? [] {
                if let id = (group["groupId"] as? NSNumber)?.int64Value, let name = group["referenceName"] as? String {
                    groupNames[id] = name
                }
            }
            settings = (catalog["products"] as? [[String: Any]] ?? []).compactMap {
                derivedProduct($0, groupNames: groupNames)
            }
        }
        return MerchantConfiguration(
            adminToken: SecretGenerator.token(), userTokenSecret: SecretGenerator.token(), publicURL: nil,
            contentURLLifetime: nil, tlsRootCertificates: tlsRootFiles,
            apps: [
                .init(
                    bundleId: bundleId, appAppleId: (app["appAppleId"] as? NSNumber)?.int64Value,
                    sharedSecret: app["sharedSecret"] as? String, store: .kiosk(admin.baseURL), rootCertificates: roots,
                    serverAPIKey: .init(keyId: keyId, issuerId: issuerId, privateKey: nil, privateKeyFile: keyFile),
                    confirmWithServerAPI: nil, environments: nil, products: settings ?? [])
            ])
    }

    /// A product's settings derived from the store's catalog entry, named as ``GrantNames`` names them (a
    /// subscription unlocks its group's entitlement, at its level in the group).
    private static func derivedProduct(
        _ product: [String: Any], groupNames: [Int64: String]
    ) -> MerchantConfiguration.ProductSettings? {
        guard let productId = product["productId"] as? String, product["deletedAt"] == nil,
            let kind = (product["type"] as? String).flatMap(MerchantConfiguration.ProductKind.init(rawValue:))
        else { return nil }
        let localizations = product["localizations"] as? [[String: Any]] ?? []
        let english = localizations.first { ($0["locale"] as? String)?.hasPrefix("en") == true } ?? localizations.first
        let displayName = (english?["displayName"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        switch kind {
        case .consumable:
            let (balance, amount) = GrantNames.consumable(displayName: displayName, productId: productId)
            return .init(productId: productId, type: kind, balance: balance, amount: amount)
        case .autoRenewable:
            let membership = product["subscription"] as? [String: Any]
            let group = ((membership?["groupId"] as? NSNumber)?.int64Value).flatMap { groupNames[$0] }
            let entitlement =
                group.map(GrantNames.slug).flatMap { $0.isEmpty ? nil : $0 }
                ?? GrantNames.entitlement(displayName: displayName, productId: productId)
            let level = (membership?["level"] as? NSNumber)?.intValue
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
    let http: HTTPClient

    func json(_ method: HTTPMethod, _ path: String, body: [String: Any]? = nil) async throws -> [String: Any] {
        let data = try await send(method, path, body: body)
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw Self.unexpected("\(method) \(path) did not answer a JSON object")
        }
        return object
    }

    func text(_ method: HTTPMethod, _ path: String) async throws -> String {
        String(decoding: try await send(method, path, body: nil), as: UTF8.self)
    }

    private func send(_ method: HTTPMethod, _ path: String, body: [String: Any]?) async throws -> Data {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body)))
        }
        let response: HTTPClientResponse
        let data: Data
        do {
            response = try await http.execute(request, timeout: .seconds(60))
            data = Data(try await response.body.collect(upTo: 16 * 1024 * 1024).readableBytesView)
        } catch  where TLSTrust.isUntrustedCertificate(error) {
            throw KioskError(
                .unavailable, code: "store_untrusted",
                message: "The store at \(baseURL) has a TLS certificate that does not lead to a trusted root.",
                fix: TLSTrust.untrustedFix)
        } catch {
            throw KioskError(
                .unavailable, code: "store_unreachable", message: "The store at \(baseURL) did not answer: \(error)",
                fix: "Start it (`kiosk serve`) or pass its URL with --server.")
        }
        guard (200..<300).contains(Int(response.status.code)) else {
            let detail = (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["error"] as? [String: Any]
            throw KioskError(
                .invalidInput, code: detail?["code"] as? String ?? "store_refused",
                message:
                    "The store refused \(method) \(path): \(detail?["message"] as? String ?? "HTTP \(response.status.code)")",
                fix: detail?["fix"] as? String ?? "Check the bundle id and the admin token.")
        }
        return data
    }

    static func unexpected(_ message: String) -> KioskError {
        KioskError(.unavailable, code: "unexpected_store_answer", message: "Unexpected store answer: \(message).")
    }
}
