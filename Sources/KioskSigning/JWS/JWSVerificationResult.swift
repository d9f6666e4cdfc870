/// The outcome of checking a signed payload. Refusal is an expected answer, so it is a value, not a throw.
public enum JWSVerificationResult: Sendable, Hashable {
    /// The chain leads to a trusted root, carries the markers, and the leaf signed exactly these bytes.
    case verified(header: JWSHeader, payloadJSON: [UInt8])
    /// The payload must not be trusted; the failure says why.
    case invalid(JWSVerificationFailure)

    /// The verified payload bytes, or `nil` when verification failed.
    public var payloadJSON: [UInt8]? {
        if case .verified(_, let payloadJSON) = self { return payloadJSON }
        return nil
    }

    /// The failure, or `nil` when the payload verified.
    public var failure: JWSVerificationFailure? {
        if case .invalid(let failure) = self { return failure }
        return nil
    }
}
