/// Arithmetic that cannot trap, for numbers that came from outside. Swift's `+`, `-` and `*` stop the whole
/// server on overflow; these hold the result at the type's bounds instead, for values (messages, sums of counts)
/// where an out-of-range input may not kill the request, let alone the process. Where a wrong value matters,
/// refuse the input instead (`Int64(exactly:)`, `Date(checkedMillisecondsSince1970:)`).
extension FixedWidthInteger {
    /// `self + other`, or the nearest bound when the sum does not fit.
    public func saturatingAdding(_ other: Self) -> Self {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }

    /// `self - other`, or the nearest bound when the difference does not fit.
    public func saturatingSubtracting(_ other: Self) -> Self {
        let (difference, overflow) = subtractingReportingOverflow(other)
        return overflow ? (other < 0 ? .max : .min) : difference
    }

    /// `self × other`, or the nearest bound when the product does not fit.
    public func saturatingMultiplied(by other: Self) -> Self {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        return overflow ? ((self < 0) == (other < 0) ? .max : .min) : product
    }
}
