import Testing

@testable import KioskKit

@Suite struct ServerSentEventParserTests {
    static let stream = """
        : keep-alive

        id: 7
        event: entry
        data: {"a":1}

        : a comment between events
        id: 8
        event: entry
        data: first line
        data: second line

        data: no id or name

        event: empty

        """

    /// Events come out the same whether the stream arrives whole or one byte at a time: comments are skipped,
    /// data lines are joined with newlines, the last id carries over and an event without data is dropped.
    @Test(arguments: [1, 2, 5, 64, 10_000])
    func chunked(chunkSize: Int) {
        var parser = ServerSentEventParser()
        let bytes = Array(Self.stream.utf8)
        var events: [ServerSentEvent] = []
        for start in stride(from: 0, to: bytes.count, by: chunkSize) {
            events += parser.feed(bytes[start..<min(start + chunkSize, bytes.count)])
        }
        #expect(
            events == [
                ServerSentEvent(id: "7", event: "entry", data: #"{"a":1}"#),
                ServerSentEvent(id: "8", event: "entry", data: "first line\nsecond line"),
                ServerSentEvent(id: "8", event: "message", data: "no id or name"),
            ])
    }

    /// CRLF and lone CR end lines too, even when the CR and LF of one line ending arrive in different chunks.
    @Test func lineEndings() {
        var parser = ServerSentEventParser()
        var events = parser.feed(Array("id: 1\r\nevent: entry\r\ndata: x\r".utf8))
        events += parser.feed(Array("\n\r".utf8))
        events += parser.feed(Array("data:y\r\rdata:  z\n\n".utf8))
        #expect(
            events == [
                ServerSentEvent(id: "1", event: "entry", data: "x"),
                ServerSentEvent(id: "1", event: "message", data: "y"),
                ServerSentEvent(id: "1", event: "message", data: " z"),
            ])
    }

    /// An unfinished event is held until its blank line arrives.
    @Test func incompleteEventWaits() {
        var parser = ServerSentEventParser()
        #expect(parser.feed(Array("id: 3\ndata: partial".utf8)).isEmpty)
        #expect(parser.feed(Array("\n\n".utf8)) == [ServerSentEvent(id: "3", event: "message", data: "partial")])
    }
}
