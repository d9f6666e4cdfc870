import Foundation
import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs `body` with a TCP connection to `127.0.0.1:port` that sends exactly the bytes it is given, for requests
/// no well-behaved HTTP client sends: broken chunked bodies, a head that never ends, a body shorter than its
/// `Content-Length`. The connection is closed afterwards.
///
/// ```swift
/// try await withRawConnection(port: store.port) { connection in
///     try await connection.send("GET /health HTTP/1.1\r\nHost: kiosk\r\n")   // and never the blank line
///     let rest = try await connection.readUntilClosed()                      // returns once the store closes it
/// }
/// ```
public func withRawConnection<T>(port: Int, _ body: (RawConnection) async throws -> T) async throws -> T {
    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .connect(host: "127.0.0.1", port: port) { channel in
            channel.eventLoop.makeCompletedFuture {
                try NIOAsyncChannel<ByteBuffer, ByteBuffer>(
                    wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
            }
        }
    return try await channel.executeThenClose { inbound, outbound in
        try await body(RawConnection(inbound: inbound.makeAsyncIterator(), outbound: outbound))
    }
}

/// A connection of ``withRawConnection(port:_:)``.
public final class RawConnection {
    private var inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    /// Bytes read but not yet returned.
    private var received: [UInt8] = []

    init(
        inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator,
        outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    ) {
        self.inbound = inbound
        self.outbound = outbound
    }

    /// Sends `text`'s UTF-8 bytes as they are.
    public func send(_ text: String) async throws {
        try await send(Array(text.utf8))
    }

    /// Sends `bytes` as they are. A connection the server has already closed takes nothing, without an error: the
    /// read that follows sees the close, which is what a test of the server closing it waits for (on a loaded
    /// machine a short timeout can close it before the bytes leave).
    public func send(_ bytes: [UInt8]) async throws {
        do {
            try await outbound.write(ByteBuffer(bytes: bytes))
        } catch let error as ChannelError where error == .ioOnClosedChannel || error == .outputClosed {
            return
        }
    }

    /// Stops sending: the connection's sending side closes (TCP's FIN) while its receiving side stays open, as a
    /// client that has nothing more to ask does.
    public func finishSending() {
        outbound.finish()
    }

    /// Waits until the server closes the connection, and returns what it sent meanwhile as text.
    public func readUntilClosed() async throws -> String {
        while try await readMore() {}
        defer { received = [] }
        return String(decoding: received, as: UTF8.self)
    }

    /// Sends `text` again and again, `interval` apart, until the server closes the connection; returns what the
    /// server sent meanwhile, as text.
    public func trickleUntilClosed(_ text: String, every interval: Duration) async throws -> String {
        let outbound = outbound
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                // Writes fail once the server has closed; the read below notices the close and ends this.
                while !Task.isCancelled {
                    try? await outbound.write(ByteBuffer(string: text))
                    try? await Task.sleep(for: interval)
                }
            }
            defer { group.cancelAll() }
            return try await readUntilClosed()
        }
    }

    /// The next whole response (with a `Content-Length` body, as Kiosk answers), or nil when the server closes the
    /// connection first.
    public func readResponse() async throws -> RawResponse? {
        while true {
            if let response = RawResponse.take(from: &received) { return response }
            guard try await readMore() else { return nil }
        }
    }

    /// Reads what has arrived into `received`; false once the server closed the connection (a reset counts).
    private func readMore() async throws -> Bool {
        let chunk: ByteBuffer?
        do {
            chunk = try await inbound.next()
        } catch let error as IOError where error.errnoCode == ECONNRESET {
            chunk = nil
        }
        try Task.checkCancellation()
        guard let chunk else { return false }
        received += chunk.readableBytesView
        return true
    }
}

/// A response read off a ``RawConnection``.
public struct RawResponse: Sendable {
    public var status: Int
    /// Header lines as sent, names lowercased.
    public var headers: [(name: String, value: String)]
    public var body: Data

    /// The body as a JSON object; empty if it is not one.
    public var json: [String: Any] {
        ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any]) ?? [:]
    }

    /// The `error.code` of a Kiosk error body.
    public var errorCode: String? {
        (json["error"] as? [String: Any])?["code"] as? String
    }

    /// Removes the first whole response from the front of `bytes`; nil (and `bytes` untouched) while it is
    /// incomplete.
    static func take(from bytes: inout [UInt8]) -> RawResponse? {
        let separator = Array("\r\n\r\n".utf8)
        guard let headEnd = bytes.firstRange(of: separator)?.upperBound else { return nil }
        let lines = String(decoding: bytes[..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
        let statusWords = lines[0].split(separator: " ")
        guard statusWords.count >= 2, let status = Int(statusWords[1]) else { return nil }
        let headers = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (
                line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            )
        }
        let length = headers.first { $0.name == "content-length" }.flatMap { Int($0.value) } ?? 0
        guard bytes.count >= headEnd + length else { return nil }
        let body = Data(bytes[headEnd..<(headEnd + length)])
        bytes.removeFirst(headEnd + length)
        return RawResponse(status: status, headers: headers, body: body)
    }
}
