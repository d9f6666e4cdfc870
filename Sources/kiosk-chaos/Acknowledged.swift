import Foundation
import KioskProtocol
import Synchronization

/// What the servers said was done, as the campaign's proxy relayed it: the purchases the store answered to the
/// app (their transactions), and the deliveries and notifications the merchant acknowledged (to the app, to the
/// store). A power cut must lose none of them: an answer is a promise that it is on disk.
final class Acknowledged: Sendable {
    private let state = Mutex<(purchases: Set<String>, grants: [String: Bool])>(([], [:]))

    /// The transactions of the purchases the store answered.
    var purchases: Set<String> { state.withLock { $0.purchases } }
    /// The transactions the merchant acknowledged, each with whether one of the acknowledgements was of its refund.
    var grants: [String: Bool] { state.withLock { $0.grants } }

    /// Takes in one relayed answer (the proxy's observer).
    func observe(method: String, path: String, request: Data, status: Int, answer: Data) {
        guard method == "POST", (200..<300).contains(status) else { return }
        if path.hasSuffix(StoreKitPaths.payments) {
            let ids = Self.transactionIds(in: Self.json(answer))
            state.withLock { $0.purchases.formUnion(ids) }
        } else if path == MerchantPaths.transactions || path == MerchantPaths.notifications {
            let sent = Self.json(request)
            let isRefund = ["REFUND", "REVOKE"].contains(Self.value(of: "notificationType", in: sent) ?? "")
            let ids = Self.transactionIds(in: sent)
            state.withLock { state in
                for id in ids { state.grants[id] = state.grants[id] == true || isRefund }
            }
        }
    }

    /// Every `transactionId` in a JSON value, JWS strings in it decoded and searched too (a notification's
    /// payload holds the transaction's).
    static func transactionIds(in value: Any?) -> Set<String> {
        switch value {
        case let object as [String: Any]:
            var ids = object.values.reduce(into: Set<String>()) { $0.formUnion(transactionIds(in: $1)) }
            if let id = object["transactionId"] as? String { ids.insert(id) }
            return ids
        case let array as [Any]:
            return array.reduce(into: []) { $0.formUnion(transactionIds(in: $1)) }
        case let text as String:
            return transactionIds(in: payload(of: text))
        default:
            return []
        }
    }

    /// The first string value of `key` in a JSON value (JWS payloads searched too).
    static func value(of key: String, in value: Any?) -> String? {
        switch value {
        case let object as [String: Any]:
            if let found = object[key] as? String { return found }
            return object.values.lazy.compactMap { Self.value(of: key, in: $0) }.first
        case let text as String:
            return Self.value(of: key, in: payload(of: text))
        default:
            return nil
        }
    }

    private static func json(_ data: Data) -> Any? { try? JSONSerialization.jsonObject(with: data) }

    /// A JWS's decoded payload; nil for any other string.
    private static func payload(of text: String) -> Any? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, text.count > 40 else { return nil }
        return Data(base64URL: String(parts[1])).flatMap(json)
    }
}
