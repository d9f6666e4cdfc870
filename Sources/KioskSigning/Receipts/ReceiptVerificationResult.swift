/// The outcome of checking a receipt. Refusal is an expected answer, so it is a value, not a throw.
public enum ReceiptVerificationResult<Receipt: Sendable & Hashable>: Sendable, Hashable {
    /// The chain leads to a trusted root at the signing date, and the leaf signed exactly this receipt.
    case verified(Receipt)
    /// The receipt must not be trusted; the failure says why.
    case invalid(ReceiptVerificationFailure)

    /// The verified receipt, or `nil` when verification failed.
    public var receipt: Receipt? {
        if case .verified(let receipt) = self { return receipt }
        return nil
    }

    /// The failure, or `nil` when the receipt verified.
    public var failure: ReceiptVerificationFailure? {
        if case .invalid(let failure) = self { return failure }
        return nil
    }
}
