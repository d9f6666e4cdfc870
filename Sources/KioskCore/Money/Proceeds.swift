import Foundation

/// What one sale (or its refund) is worth to whom, in integer minor units of the customer's currency, fixed when it
/// happens: the price the customer was shown, the tax in it (or added to it), Apple's — here the store's —
/// commission on the price net of tax, and the developer's proceeds.
public struct Proceeds: Codable, Sendable, Hashable {
    /// The price as listed (what `priceMinorUnits` of the transaction says).
    public var customerPriceMinorUnits: Int
    /// Included in the price where the storefront's prices include tax, else added on top at checkout.
    public var taxMinorUnits: Int
    public var commissionMinorUnits: Int
    public var proceedsMinorUnits: Int
    /// The terms the amounts were computed with.
    public var pricesIncludeTax: Bool
    public var taxRateBasisPoints: Int
    public var commissionBasisPoints: Int
    /// Apple's `Proceeds Reason` column: "Rate After One Year" when the 15% subscription rate applied, else nil.
    public var reason: String?

    /// Apple's standard commission: 30%.
    public static let standardCommission = 3_000
    /// The reduced commission: the Small Business Program, and a subscriber's second year of paid service.
    public static let reducedCommission = 1_500
    /// The `Proceeds Reason` of the reduced subscription rate.
    public static let rateAfterOneYear = "Rate After One Year"

    public init(
        customerPriceMinorUnits: Int, taxMinorUnits: Int, commissionMinorUnits: Int, proceedsMinorUnits: Int,
        pricesIncludeTax: Bool, taxRateBasisPoints: Int, commissionBasisPoints: Int, reason: String? = nil
    ) {
        self.customerPriceMinorUnits = customerPriceMinorUnits
        self.taxMinorUnits = taxMinorUnits
        self.commissionMinorUnits = commissionMinorUnits
        self.proceedsMinorUnits = proceedsMinorUnits
        self.pricesIncludeTax = pricesIncludeTax
        self.taxRateBasisPoints = taxRateBasisPoints
        self.commissionBasisPoints = commissionBasisPoints
        self.reason = reason
    }

    /// The split of a sale at `priceMinorUnits` (at least 0) under `tax` and a commission of `commissionBasisPoints`.
    ///
    /// Tax-inclusive: the tax is the price less the price divided by (1 + rate); tax-exclusive: the tax is the rate of
    /// the price, added on top, and the price is already net. The commission is its rate of the net price; proceeds
    /// are the rest. Each division rounds half up, once, so the three parts always add up to the net price exactly.
    public static func of(
        priceMinorUnits: Int, tax: TaxRule, commissionBasisPoints: Int, reason: String? = nil
    ) -> Proceeds {
        let price = Int128(max(0, priceMinorUnits))
        let rate = Int128(min(max(tax.rateBasisPoints, 0), 10_000))
        let taxAmount: Int128
        let net: Int128
        if tax.pricesIncludeTax {
            net = rounded(price * 10_000, dividedBy: 10_000 + rate)
            taxAmount = price - net
        } else {
            net = price
            taxAmount = rounded(price * rate, dividedBy: 10_000)
        }
        let commission = rounded(net * Int128(commissionBasisPoints), dividedBy: 10_000)
        return Proceeds(
            customerPriceMinorUnits: Int(clamping: price), taxMinorUnits: Int(clamping: taxAmount),
            commissionMinorUnits: Int(clamping: commission), proceedsMinorUnits: Int(clamping: net - commission),
            pricesIncludeTax: tax.pricesIncludeTax, taxRateBasisPoints: Int(clamping: rate),
            commissionBasisPoints: commissionBasisPoints, reason: reason)
    }

    /// `fraction` of these amounts (a prorated refund), each rounded half up; the terms stay. `fraction` is
    /// `numerator / denominator` with 0 ≤ numerator ≤ denominator.
    public func scaled(by numerator: Int, of denominator: Int) -> Proceeds {
        guard denominator > 0, numerator != denominator else { return self }
        let part = Int128(min(max(numerator, 0), denominator))
        func scale(_ amount: Int) -> Int {
            Int(clamping: Self.rounded(Int128(amount) * part, dividedBy: Int128(denominator)))
        }
        var scaled = self
        scaled.customerPriceMinorUnits = scale(customerPriceMinorUnits)
        scaled.taxMinorUnits = scale(taxMinorUnits)
        scaled.commissionMinorUnits = scale(commissionMinorUnits)
        scaled.proceedsMinorUnits =
            scaled.customerPriceMinorUnits - (pricesIncludeTax ? scaled.taxMinorUnits : 0) - scaled.commissionMinorUnits
        return scaled
    }

    /// The same amounts with the opposite sign: what a refund takes back.
    public var negated: Proceeds {
        var negated = self
        negated.customerPriceMinorUnits = -customerPriceMinorUnits
        negated.taxMinorUnits = -taxMinorUnits
        negated.commissionMinorUnits = -commissionMinorUnits
        negated.proceedsMinorUnits = -proceedsMinorUnits
        return negated
    }

    /// `value / divisor` for a positive `divisor`, rounded half away from zero (half up for the non-negative
    /// amounts of a sale; a negative value rounds as its magnitude does).
    public static func rounded(_ value: Int128, dividedBy divisor: Int128) -> Int128 {
        let magnitude = (value.magnitude * 2 + divisor.magnitude) / (divisor.magnitude * 2)
        return value < 0 ? -Int128(magnitude) : Int128(magnitude)
    }
}
