import Crypto
import ExtrasBase64
import Foundation
import KioskCore
import KioskProtocol
import KioskSQL

extension MerchantService {
    /// The product's downloadable files, each with a URL signed for this user, if the user holds a standing
    /// grant of it (and, for subscriptions, the entitlement is active).
    func content(userId: String, productId: String, baseURL: String) async throws -> MerchantContent {
        guard let (app, directory) = contentDirectory(productId) else {
            throw KioskError(
                .noContent, "\(productId) has no downloadable content.", field: "productId",
                fix: "Ask for a product whose configuration names a content folder.")
        }
        let owned = try await database.withSession {
            try await GrantLedger(session: $0).grants(userId: userId, productId: productId)
        }.filter { $0.bundleId == app.bundleId && !$0.isRevoked }
        let entitlements = try await entitlements(userId: userId)
        let product = app.products[productId]
        let active = product?.entitlement.map { entitlements.entitlement($0)?.active == true } ?? true
        guard !owned.isEmpty, active else {
            throw KioskError(
                .notEntitled, "You do not own \(productId) now.", field: "productId",
                fix: "Buy it (or restore it) first.")
        }
        let expires = clock.now().addingTimeInterval(TimeInterval(configuration.raw.contentURLLifetime ?? 900))
        let files = try Self.files(in: directory)
        return MerchantContent(
            productId: productId,
            files: try files.map { relative in
                let url = directory.appendingPathComponent(relative)
                let data = try Data(contentsOf: url)
                let signature = contentSignature(productId: productId, path: relative, userId: userId, expires: expires)
                let user = Base64.encodeToString(
                    bytes: Array(userId.utf8), options: [.base64UrlAlphabet, .omitPaddingCharacter])
                let path = relative.split(separator: "/").map {
                    String($0).addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? String($0)
                }.joined(separator: "/")
                return MerchantContent.File(
                    name: relative, size: Int64(data.count),
                    sha256: SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined(),
                    url:
                        "\(baseURL)\(MerchantPaths.content(productId: productId))/files/\(path)?user=\(user)&expires=\(expires.secondsSince1970)&signature=\(signature)",
                    expiresDate: expires)
            })
    }

    /// The bytes of one content file, if the signed URL's user, expiry and signature hold.
    func download(productId: String, path: String, user: String?, expires: String?, signature: String?) throws -> Data {
        let refusal = KioskError(
            .invalidDownloadUrl, "The download URL is not valid (or has expired).",
            field: "signature", fix: "Ask GET \(MerchantPaths.content(productId: productId)) for fresh URLs.")
        guard let user, let expires, let seconds = Int64(expires), let expiry = Date(checkedSecondsSince1970: seconds),
            let signature,
            let userBytes = try? Base64.decode(string: user, options: [.base64UrlAlphabet, .omitPaddingCharacter]),
            let userId = String(bytes: userBytes, encoding: .utf8)
        else { throw refusal }
        let expected = contentSignature(productId: productId, path: path, userId: userId, expires: expiry)
        guard expiry > clock.now(), Array(expected.utf8).elementsEqualInConstantTime(Array(signature.utf8)) else {
            throw refusal
        }
        guard let (_, directory) = contentDirectory(productId),
            !path.split(separator: "/").contains(where: { $0 == ".." || $0 == "." }),
            let data = try? Data(contentsOf: directory.appendingPathComponent(path))
        else {
            throw KioskError(.unknownFile, "\(productId) has no file \(path).", field: "path")
        }
        return data
    }

    private func contentDirectory(_ productId: String) -> (LoadedMerchantConfiguration.LoadedApp, URL)? {
        for app in configuration.apps.values {
            if let directory = app.contentDirectories[productId] { return (app, directory) }
        }
        return nil
    }

    /// HMAC-SHA256 over product, path, user and expiry, keyed by the user-token secret; base64url.
    private func contentSignature(productId: String, path: String, userId: String, expires: Date) -> String {
        let message = "content\n\(productId)\n\(path)\n\(userId)\n\(expires.secondsSince1970)"
        let key = SymmetricKey(data: Array(configuration.raw.userTokenSecret.utf8))
        let mac = HMAC<SHA256>.authenticationCode(for: Array(message.utf8), using: key)
        return Base64.encodeToString(bytes: Array(mac), options: [.base64UrlAlphabet, .omitPaddingCharacter])
    }

    /// Regular files under `directory`, as sorted relative paths.
    private static func files(in directory: URL) throws -> [String] {
        let base = directory.standardizedFileURL.path
        let enumerator = FileManager.default.enumerator(
            at: directory, includingPropertiesForKeys: [.isRegularFileKey], options: [.skipsHiddenFiles])
        var paths: [String] = []
        while let url = enumerator?.nextObject() as? URL {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true else { continue }
            let full = url.standardizedFileURL.path
            guard full.hasPrefix(base + "/") else { continue }
            paths.append(String(full.dropFirst(base.count + 1)))
        }
        return paths.sorted()
    }
}

extension Array where Element == UInt8 {
    /// Equal length and bytes, compared without stopping at the first difference.
    func elementsEqualInConstantTime(_ other: [UInt8]) -> Bool {
        count == other.count && zip(self, other).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
