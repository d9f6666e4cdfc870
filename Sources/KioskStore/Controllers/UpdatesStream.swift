import Foundation
import HTTPTypes
import Hummingbird
import KioskCore
import KioskProtocol
import NIOCore
import ServiceLifecycle

/// `GET …/updates`: the account's queue entries as server-sent events, from a resumable cursor.
///
/// Each event is `id: <sequence>`, `event: entry`, `data: <QueueEntry JSON>`. Once the entries there were when it
/// opened are sent, one `event: caught-up`, `data: {"cursor": N}` lets a syncing client stop reading. The stream
/// answers at once when this process changes the queue (`QueueFeed`), polls every `pollInterval` for changes other
/// replicas made, and sends a `: keep-alive` comment when quiet for `keepAliveInterval`. It ends when the client
/// goes away (``ClientHangUp``: at its FIN or TLS `close_notify`, not at the next write that fails, so a TLS client
/// closing does not wait for the store's answer to its `close_notify`) or the store shuts down; the client
/// reconnects with `?after=` or `Last-Event-ID`.
struct UpdatesStream: Sendable {
    static let pollInterval: Duration = .seconds(2)
    static let keepAliveInterval: Duration = .seconds(15)
    static let batchSize = 100

    let purchases: PurchaseService
    let feed: QueueFeed
    let client: ClientSession
    let cursor: Int64
    /// Completes when the client hangs up; nil where nothing tells (router tests).
    let hangUp: EventLoopFuture<Void>?

    /// The cursor from `?after=N`, else `Last-Event-ID`, else 0 (everything).
    static func cursor(of request: Request) throws -> Int64 {
        let text = request.uri.queryParameters["after"].map(String.init) ?? request.headers[.lastEventID]
        guard let text else { return 0 }
        guard let cursor = Int64(text), cursor >= 0 else {
            throw KioskError(
                .invalidCursor, "The cursor '\(text)' is not a sequence number.", field: "after",
                fix: "Send the `id` of the last event received, or 0 for everything.")
        }
        return cursor
    }

    func response() -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-cache"
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                let (wakeups, continuation) = AsyncStream.makeStream(
                    of: Void.self, bufferingPolicy: .bufferingNewest(1))
                hangUp?.whenComplete { _ in continuation.finish() }
                try await withGracefulShutdownHandler {
                    try await stream(to: &writer, wakeups: wakeups, continuation: continuation)
                } onGracefulShutdown: {
                    continuation.finish()
                }
                try await writer.finish(nil)
            })
    }

    private func stream(
        to writer: inout any ResponseBodyWriter, wakeups: AsyncStream<Void>,
        continuation: AsyncStream<Void>.Continuation
    ) async throws {
        let listener = UUID()
        await feed.listen(client.feedKey, id: listener, continuation: continuation)
        let ticker = Task {
            while !Task.isCancelled {
                continuation.yield()
                try? await Task.sleep(for: Self.pollInterval)
            }
        }
        defer {
            ticker.cancel()
            continuation.finish()
            Task { [feed = feed, key = client.feedKey] in await feed.stopListening(key, id: listener) }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var cursor = self.cursor
        var lastWrite = ContinuousClock.now
        try await writer.write(ByteBuffer(string: ": connected\n\n"))
        var caughtUp = false
        for await _ in wakeups {
            try Task.checkCancellation()
            var batch = try await purchases.entries(after: cursor, limit: Self.batchSize, for: client)
            while !batch.isEmpty {
                var text = ""
                for entry in batch {
                    let json = String(decoding: try encoder.encode(entry), as: UTF8.self)
                    text += "id: \(entry.sequence)\nevent: entry\ndata: \(json)\n\n"
                    cursor = entry.sequence
                }
                try await writer.write(ByteBuffer(string: text))
                lastWrite = .now
                batch =
                    batch.count == Self.batchSize
                    ? try await purchases.entries(after: cursor, limit: Self.batchSize, for: client) : []
            }
            if !caughtUp {
                caughtUp = true
                try await writer.write(ByteBuffer(string: "event: caught-up\ndata: {\"cursor\":\(cursor)}\n\n"))
                lastWrite = .now
            }
            if ContinuousClock.now - lastWrite >= Self.keepAliveInterval {
                try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                lastWrite = .now
            }
        }
    }
}

extension HTTPField.Name {
    static let lastEventID = Self("Last-Event-ID")!
}
