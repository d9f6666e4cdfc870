/// Finds the first JSON syntax error in a document and says where it is as a line and column.
///
/// Foundation's `JSONDecoder` on Linux reports only "not valid JSON", without a position, so catalog files are
/// checked by this small recursive-descent scanner (RFC 8259 grammar) before they are decoded.
package enum JSONSyntaxCheck {
    /// A syntax error: what is wrong and where, with 1-based line and column (columns count bytes).
    package struct Failure: Equatable {
        package var message: String
        package var line: Int
        package var column: Int
    }

    /// The first syntax error in `bytes`, or nil if they are one well-formed JSON value.
    package static func firstFailure(in bytes: [UInt8]) -> Failure? {
        var scanner = Scanner(bytes: bytes)
        do throws(Problem) {
            scanner.skipWhitespace()
            try scanner.value(depth: 0)
            scanner.skipWhitespace()
            if scanner.index < bytes.count { throw scanner.failure("unexpected text after the end of the document") }
            return nil
        } catch {
            return scanner.position(of: error)
        }
    }

    private struct Problem: Error {
        var message: String
        var offset: Int
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0
        /// Deeper nesting than this is refused rather than risking the stack.
        static let maximumDepth = 512

        init(bytes: [UInt8]) { self.bytes = bytes }

        func failure(_ message: String) -> Problem { Problem(message: message, offset: index) }

        func position(of problem: Problem) -> Failure {
            var line = 1
            var column = 1
            for byte in bytes[..<min(problem.offset, bytes.count)] {
                if byte == UInt8(ascii: "\n") {
                    line += 1
                    column = 1
                } else if byte & 0xC0 != 0x80 {
                    column += 1
                }
            }
            return Failure(message: problem.message, line: line, column: column)
        }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
        }

        mutating func value(depth: Int) throws(Problem) {
            guard depth < Self.maximumDepth else { throw failure("the document is nested too deeply") }
            guard let byte = current else { throw failure("the document ends where a value was expected") }
            switch byte {
            case UInt8(ascii: "{"): try object(depth: depth)
            case UInt8(ascii: "["): try array(depth: depth)
            case UInt8(ascii: "\""): try string()
            case UInt8(ascii: "t"): try literal("true")
            case UInt8(ascii: "f"): try literal("false")
            case UInt8(ascii: "n"): try literal("null")
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
            default:
                throw failure("unexpected character '\(Character(Unicode.Scalar(byte)))' where a value was expected")
            }
        }

        mutating func object(depth: Int) throws(Problem) {
            index += 1
            skipWhitespace()
            if current == UInt8(ascii: "}") {
                index += 1
                return
            }
            while true {
                guard current == UInt8(ascii: "\"") else { throw failure("expected a quoted key") }
                try string()
                skipWhitespace()
                guard current == UInt8(ascii: ":") else { throw failure("expected ':' after the key") }
                index += 1
                skipWhitespace()
                try value(depth: depth + 1)
                skipWhitespace()
                switch current {
                case UInt8(ascii: ","):
                    index += 1
                    skipWhitespace()
                case UInt8(ascii: "}"):
                    index += 1
                    return
                case nil: throw failure("the document ends inside an object (missing '}')")
                default: throw failure("expected ',' or '}' in an object")
                }
            }
        }

        mutating func array(depth: Int) throws(Problem) {
            index += 1
            skipWhitespace()
            if current == UInt8(ascii: "]") {
                index += 1
                return
            }
            while true {
                try value(depth: depth + 1)
                skipWhitespace()
                switch current {
                case UInt8(ascii: ","):
                    index += 1
                    skipWhitespace()
                case UInt8(ascii: "]"):
                    index += 1
                    return
                case nil: throw failure("the document ends inside an array (missing ']')")
                default: throw failure("expected ',' or ']' in an array")
                }
            }
        }

        mutating func string() throws(Problem) {
            index += 1
            while let byte = current {
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    return
                case UInt8(ascii: "\\"):
                    index += 1
                    guard let escaped = current else { break }
                    if escaped == UInt8(ascii: "u") {
                        for _ in 0..<4 {
                            index += 1
                            guard let hex = current, Self.isHexDigit(hex) else {
                                throw failure("expected four hex digits after \\u")
                            }
                        }
                    } else if !"\"\\/bfnrt".utf8.contains(escaped) {
                        throw failure("invalid escape sequence in a string")
                    }
                    index += 1
                case 0..<0x20: throw failure("control character inside a string (escape it or close the quote)")
                default: index += 1
                }
            }
            throw failure("the document ends inside a string (missing closing quote)")
        }

        mutating func literal(_ word: String) throws(Problem) {
            for expected in word.utf8 {
                guard current == expected else { throw failure("expected '\(word)'") }
                index += 1
            }
        }

        mutating func number() throws(Problem) {
            if current == UInt8(ascii: "-") { index += 1 }
            guard let first = current, Self.isDigit(first) else { throw failure("expected a digit") }
            index += 1
            if first != UInt8(ascii: "0") { skipDigits() }
            if current == UInt8(ascii: ".") {
                index += 1
                guard let digit = current, Self.isDigit(digit) else { throw failure("expected a digit after '.'") }
                skipDigits()
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                guard let digit = current, Self.isDigit(digit) else {
                    throw failure("expected a digit in the exponent")
                }
                skipDigits()
            }
        }

        mutating func skipDigits() {
            while let byte = current, Self.isDigit(byte) { index += 1 }
        }

        static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

        static func isHexDigit(_ byte: UInt8) -> Bool {
            isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
        }
    }
}
