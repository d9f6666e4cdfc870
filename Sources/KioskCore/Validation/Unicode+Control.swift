extension Unicode.Scalar {
    /// Whether this is a control character (Unicode category Cc: NUL, tab, line breaks, escape, DEL, C1), which no
    /// name or identifier may hold.
    package var isControl: Bool { properties.generalCategory == .control }

    /// The code point as four or more upper-case hex digits, as in `U+0000`.
    package var hexCode: String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
