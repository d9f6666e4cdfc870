/// How the customer pays during an introductory or promotional offer.
public enum OfferPaymentMode: String, Codable, Sendable, CaseIterable, Hashable, NamedValues {
    /// Nothing for the offer's periods.
    case freeTrial = "free_trial"
    /// A reduced price each period, for `numberOfPeriods` periods.
    case payAsYouGo = "pay_as_you_go"
    /// One reduced price for the whole offer duration, paid up front.
    case payUpFront = "pay_up_front"

    /// Apple's `offerDiscountType`: `FREE_TRIAL`, `PAY_AS_YOU_GO`, `PAY_UP_FRONT`.
    public var appleName: String {
        switch self {
        case .freeTrial: "FREE_TRIAL"
        case .payAsYouGo: "PAY_AS_YOU_GO"
        case .payUpFront: "PAY_UP_FRONT"
        }
    }
}
