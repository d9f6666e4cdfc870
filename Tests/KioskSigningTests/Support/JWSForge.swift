import Crypto
import ExtrasBase64
import Foundation

/// Hand-assembles compact JWS with arbitrary headers and keys, to forge what a real signer never produces.
enum JWSForge {
    static func base64URL(_ bytes: some Collection<UInt8>) -> String {
        Base64.encodeToString(bytes: Array(bytes), options: [.base64UrlAlphabet, .omitPaddingCharacter])
    }

    static func base64URL(_ text: String) -> String { base64URL(Array(text.utf8)) }

    static func header(alg: String, x5c: [String]) -> String {
        #"{"alg":"\#(alg)","x5c":["# + x5c.map { "\"\($0)\"" }.joined(separator: ",") + "]}"
    }

    /// `header.payload.signature` with an ES256 signature by `key` over exactly these header and payload texts.
    static func es256(header: String, payload: String, key: P256.Signing.PrivateKey) throws -> String {
        let input = base64URL(header) + "." + base64URL(payload)
        let signature = try key.signature(for: Array(input.utf8))
        return input + "." + base64URL(signature.rawRepresentation)
    }

    static func segments(_ jws: String) -> [String] {
        jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }
}
