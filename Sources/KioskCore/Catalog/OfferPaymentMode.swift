/// How the customer pays during an introductory or promotional offer.
public enum OfferPaymentMode: String, Codable, Sendable, CaseIterable, Hashable {
    /// Nothing for the offer's periods.
    case freeTrial = "free_trial"
    /// A reduced price each period, for `numberOfPeriods` periods.
    case payAsYouGo = "pay_as_you_go"
    /// One reduced price for the whole offer duration, paid up front.
    case payUpFront = "pay_up_front"
}
