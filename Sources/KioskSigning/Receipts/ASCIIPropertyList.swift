import Foundation

/// The flat old-style (NeXTSTEP) property lists of iOS 6 transaction receipts: a dictionary of quoted strings,
/// written exactly as Apple writes them, one `\t"key" = "value";` line per entry between `{` and `}` lines.
enum ASCIIPropertyList {
    /// Renders entries in the given order.
    static func render(_ entries: [(key: String, value: String)]) -> String {
        var text = "{\n"
        for (key, value) in entries {
            text += "\t\"\(escape(key))\" = \"\(escape(value))\";\n"
        }
        return text + "}"
    }

    /// Parses a dictionary of quoted strings with any whitespace between tokens.
    ///
    /// - Throws: ``ReceiptDecodingError`` when the text is not such a dictionary or repeats a key.
    static func parse(_ text: String) throws -> [String: String] {
        var scanner = Scanner(characters: Array(text))
        try scanner.expect("{")
        var entries: [String: String] = [:]
        while try scanner.peek() != "}" {
            let key = try scanner.quotedString()
            try scanner.expect("=")
            let value = try scanner.quotedString()
            try scanner.expect(";")
            guard entries.updateValue(value, forKey: key) == nil else {
                throw ReceiptDecodingError("the key \"\(key)\" appears twice")
            }
        }
        try scanner.expect("}")
        guard scanner.atEnd else { throw ReceiptDecodingError("text follows the closing brace") }
        return entries
    }

    /// A backslash before every backslash and quote. Written out by hand: Foundation's `replacingOccurrences` on
    /// Linux bridges to `NSString` and was a twentieth of a purchase's time in a profile.
    private static func escape(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") }) else { return text }
        // By scalar, not by Character: a quote followed by a combining mark is one Character but still a quote.
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar == "\\" || scalar == "\"" { escaped.append("\\") }
            escaped.append(scalar)
        }
        return String(escaped)
    }

    private struct Scanner {
        var characters: [Character]
        var index = 0

        var atEnd: Bool {
            mutating get {
                skipWhitespace()
                return index == characters.count
            }
        }

        mutating func peek() throws -> Character {
            skipWhitespace()
            guard index < characters.count else { throw ReceiptDecodingError("the property list ends early") }
            return characters[index]
        }

        mutating func expect(_ character: Character) throws {
            guard try peek() == character else {
                throw ReceiptDecodingError("expected '\(character)' at offset \(index)")
            }
            index += 1
        }

        /// A `"…"` string in which `\"` and `\\` stand for `"` and `\`.
        mutating func quotedString() throws -> String {
            try expect("\"")
            var text = ""
            while index < characters.count {
                let character = characters[index]
                index += 1
                switch character {
                case "\"": return text
                case "\\" where index < characters.count:
                    text.append(characters[index])
                    index += 1
                default: text.append(character)
                }
            }
            throw ReceiptDecodingError("a quoted string is not closed")
        }

        private mutating func skipWhitespace() {
            while index < characters.count, characters[index].isWhitespace { index += 1 }
        }
    }
}
