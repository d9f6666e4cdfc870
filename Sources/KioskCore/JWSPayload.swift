import Foundation

/// Reads a compact JWS's payload without verifying it: for what the store itself signed (a notification stored
/// before migration 26) and for tools that look inside what they were sent.
public enum JWSPayload {
    /// The payload's bytes, or nil when `jws` is not three base64url parts.
    public static func decode(_ jws: String) -> Data? {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var standard = parts[1].map { $0 == "-" ? "+" : $0 == "_" ? "/" : String($0) }.joined()
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard)
    }
}
