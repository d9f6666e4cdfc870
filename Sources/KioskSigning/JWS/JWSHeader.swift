/// The protected header of a compact JWS, as far as App Store signed data uses it.
public struct JWSHeader: Sendable, Hashable, Codable {
    /// The signature algorithm; App Store data uses exactly `ES256`.
    public var alg: String
    /// The certificate chain, leaf first, each entry standard base64 of DER.
    public var x5c: [String]?
    /// A key id; Apple's Xcode signer sets one, the App Store does not.
    public var kid: String?
    /// A media type; some signers set `JWT`.
    public var typ: String?
    /// Extensions the verifier must understand; Kiosk understands none.
    public var crit: [String]?

    /// Creates a header.
    public init(alg: String, x5c: [String]? = nil, kid: String? = nil, typ: String? = nil, crit: [String]? = nil) {
        self.alg = alg
        self.x5c = x5c
        self.kid = kid
        self.typ = typ
        self.crit = crit
    }
}
