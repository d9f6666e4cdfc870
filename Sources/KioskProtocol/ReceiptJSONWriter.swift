/// Writes one receipt object as the JSON bytes `JSONEncoder` writes with `.sortedKeys` and
/// `.withoutEscapingSlashes`: members in the byte order of their names, strings escaped as the encoder escapes them
/// (`"`, `\` and control characters; `/` and non-ASCII as they are), no spaces.
struct ReceiptJSONWriter: ReceiptFieldSink {
    /// Each member's `"name":value`, one after another, in the order they were written.
    private var members: [UInt8] = []
    private var names: [(name: String, bytes: Range<Int>)] = []

    init() {
        members.reserveCapacity(1024)
        names.reserveCapacity(16)
    }

    mutating func value(_ name: String, _ value: String?) {
        guard let value else { return }
        member(name) { Self.appendString(value, to: &$0) }
    }

    mutating func value(_ name: String, _ value: Int64?) {
        guard let value else { return }
        member(name) { $0.append(contentsOf: String(value).utf8) }
    }

    mutating func value(_ name: String, _ value: Bool?) {
        guard let value else { return }
        member(name) { $0.append(contentsOf: (value ? "true" : "false").utf8) }
    }

    mutating func value(_ name: String, _ value: (some ReceiptObject)?) throws {
        guard let value else { return }
        let object = try Self.object(value)
        member(name) { $0.append(contentsOf: object) }
    }

    mutating func value(_ name: String, _ value: [some ReceiptObject]?) throws {
        guard let value else { return }
        let objects = try value.map { try Self.object($0) }
        member(name) { bytes in
            bytes.append(UInt8(ascii: "["))
            for (index, object) in objects.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                bytes.append(contentsOf: object)
            }
            bytes.append(UInt8(ascii: "]"))
        }
    }

    /// The object of the members written so far: `{…}`, sorted by name.
    func object() -> [UInt8] {
        var object: [UInt8] = []
        object.reserveCapacity(members.count + names.count + 2)
        object.append(UInt8(ascii: "{"))
        let sorted = names.sorted { $0.name < $1.name }  // Apple's names are ASCII: this is byte order
        for (index, member) in sorted.enumerated() {
            if index > 0 { object.append(UInt8(ascii: ",")) }
            object.append(contentsOf: members[member.bytes])
        }
        object.append(UInt8(ascii: "}"))
        return object
    }

    private static func object(_ value: some ReceiptObject) throws -> [UInt8] {
        var writer = ReceiptJSONWriter()
        try value.writeFields(to: &writer)
        return writer.object()
    }

    private mutating func member(_ name: String, value: (inout [UInt8]) -> Void) {
        let start = members.count
        Self.appendString(name, to: &members)
        members.append(UInt8(ascii: ":"))
        value(&members)
        names.append((name, start..<members.count))
    }

    /// `text` as a JSON string, escaped as `JSONEncoder` escapes it; the runs between escapes are copied whole (a
    /// `latest_receipt` is kilobytes of base64 with nothing to escape).
    private static func appendString(_ text: String, to bytes: inout [UInt8]) {
        var text = text
        bytes.append(UInt8(ascii: "\""))
        text.withUTF8 { utf8 in
            var runStart = 0
            for (index, byte) in utf8.enumerated()
            where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                bytes.append(contentsOf: utf8[runStart..<index])
                appendEscape(byte, to: &bytes)
                runStart = index + 1
            }
            bytes.append(contentsOf: utf8[runStart...])
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static func appendEscape(_ byte: UInt8, to bytes: inout [UInt8]) {
        switch byte {
        case UInt8(ascii: "\""): bytes.append(contentsOf: #"\""#.utf8)
        case UInt8(ascii: "\\"): bytes.append(contentsOf: #"\\"#.utf8)
        case 0x08: bytes.append(contentsOf: #"\b"#.utf8)
        case 0x0C: bytes.append(contentsOf: #"\f"#.utf8)
        case UInt8(ascii: "\n"): bytes.append(contentsOf: #"\n"#.utf8)
        case UInt8(ascii: "\r"): bytes.append(contentsOf: #"\r"#.utf8)
        case UInt8(ascii: "\t"): bytes.append(contentsOf: #"\t"#.utf8)
        default:
            bytes.append(contentsOf: #"\u00"#.utf8)
            bytes.append(hexDigits[Int(byte >> 4)])
            bytes.append(hexDigits[Int(byte & 0x0F)])
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
