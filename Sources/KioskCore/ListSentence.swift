extension Array where Element == String {
    /// The items as a sentence lists them, "a, b and c" (`conjunction` "or": "a, b or c"); `empty` when there are
    /// none.
    public func sentence(_ conjunction: String = "and", empty: String = "nothing") -> String {
        guard let last, count > 1 else { return first ?? empty }
        return dropLast().joined(separator: ", ") + " \(conjunction) " + last
    }
}
