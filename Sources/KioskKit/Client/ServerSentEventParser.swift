/// One event of a `text/event-stream`.
struct ServerSentEvent: Sendable, Hashable {
    /// The `id:` in force when the event was dispatched (the stream's last event id), if any.
    var id: String?
    /// The `event:` name; `message` when the event named none.
    var event: String
    /// The `data:` lines joined with `\n`.
    var data: String
}

/// Turns the bytes of a `text/event-stream` into events, whatever the chunk boundaries (WHATWG HTML §9.2.6).
///
/// Lines end with `\n`, `\r\n` or `\r`; a line starting with `:` is a comment; a blank line dispatches the
/// event gathered so far, unless it has no data. The last event id carries over to later events, as the
/// specification says, so it can be sent back as `Last-Event-ID`.
///
/// ```swift
/// var parser = ServerSentEventParser()
/// for event in parser.feed(chunk) { … }
/// ```
struct ServerSentEventParser: Sendable {
    private var line: [UInt8] = []
    /// A `\r` ended the previous chunk; a `\n` starting the next one belongs to the same line ending.
    private var afterCarriageReturn = false
    private var lastEventId: String?
    private var eventName = ""
    private var dataLines: [String] = []

    init() {}

    /// Consumes a chunk and returns the events it completed.
    mutating func feed(_ bytes: some Sequence<UInt8>) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if afterCarriageReturn {
                afterCarriageReturn = false
                if byte == UInt8(ascii: "\n") { continue }
            }
            switch byte {
            case UInt8(ascii: "\n"):
                if let event = endLine() { events.append(event) }
            case UInt8(ascii: "\r"):
                afterCarriageReturn = true
                if let event = endLine() { events.append(event) }
            default:
                line.append(byte)
            }
        }
        return events
    }

    private mutating func endLine() -> ServerSentEvent? {
        defer { line.removeAll(keepingCapacity: true) }
        if line.isEmpty { return dispatch() }
        if line.first == UInt8(ascii: ":") { return nil }
        let field: String
        let value: String
        if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
            field = String(decoding: line[..<colon], as: UTF8.self)
            var valueStart = line.index(after: colon)
            if valueStart < line.endIndex, line[valueStart] == UInt8(ascii: " ") { valueStart += 1 }
            value = String(decoding: line[valueStart...], as: UTF8.self)
        } else {
            field = String(decoding: line, as: UTF8.self)
            value = ""
        }
        switch field {
        case "event": eventName = value
        case "data": dataLines.append(value)
        case "id" where !value.contains("\0"): lastEventId = value
        default: break  // `retry` and unknown fields: the client's reconnection policy is its own.
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer {
            eventName = ""
            dataLines = []
        }
        guard !dataLines.isEmpty else { return nil }
        return ServerSentEvent(
            id: lastEventId, event: eventName.isEmpty ? "message" : eventName, data: dataLines.joined(separator: "\n"))
    }
}
