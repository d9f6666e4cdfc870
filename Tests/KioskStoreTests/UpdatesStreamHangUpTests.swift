import Foundation
import KioskTesting
import Testing

/// The updates stream never ends on its own, so it must end when its client hangs up. A client that stops sending
/// (TCP's FIN here; over TLS its `close_notify`, which KioskKit sends when it closes) gets the stream's end and the
/// connection closed, instead of keep-alives until a write fails: over TLS the client waits for that close, and
/// every KioskKit client took 5 s longer to exit over HTTPS than over HTTP.
@Suite struct UpdatesStreamHangUpTests {
    @Test func theStreamEndsWhenTheClientStopsSending() async throws {
        try await withTestStore { store in
            try await store.preparePurchaseCatalog()
            let token = try await store.signIn()
            let text = try await withRawConnection(port: store.port) { connection in
                try await connection.send(
                    "GET /sandbox/storekit/v1/updates?after=0 HTTP/1.1\r\nHost: kiosk\r\n"
                        + "Authorization: Bearer \(token)\r\nAccept: text/event-stream\r\n\r\n")
                connection.finishSending()
                return try await Self.readUntilClosed(connection)
            }
            Self.expectEndedStream(text)
        }
    }

    /// What the store sent until it closed the connection; nil if it kept it open for a minute after the client
    /// stopped sending (a bound on the wait, not a measure: the store closes it at once, or never).
    static func readUntilClosed(_ connection: RawConnection) async throws -> String? {
        nonisolated(unsafe) let connection = connection
        return try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask { try await connection.readUntilClosed() }
            group.addTask {
                try await Task.sleep(for: .seconds(60))
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
    }

    /// Checks the stream was answered, then ended (its last chunk sent) and the connection closed.
    static func expectEndedStream(_ text: String?) {
        guard let text else {
            Issue.record("the store kept the updates stream open after its client stopped sending")
            return
        }
        #expect(text.hasPrefix("HTTP/1.1 200"), "\(text)")
        #expect(text.contains(": connected"), "\(text)")
        #expect(text.hasSuffix("0\r\n\r\n"), "the stream's last chunk: \(text)")
    }
}
