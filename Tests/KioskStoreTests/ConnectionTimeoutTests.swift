import Foundation
import KioskCore
import KioskTesting
import Testing

/// The store closes connections that stop making progress: a head that never completes (slowloris, also when its
/// bytes trickle in), a body shorter than its `Content-Length`, a body that trickles in for longer than the body
/// timeout, an idle keep-alive connection. Each test waits for the close itself, never for a time; the time limit
/// only stops a test whose connection is never closed (generous, for a loaded machine and the wait for a load
/// slot).
@Suite(.timeLimit(.minutes(20))) struct ConnectionTimeoutTests {
    static let short = HTTPTimeouts(idle: .seconds(1), body: .seconds(1))

    /// A head that never ends is closed without an answer, and one whose bytes keep trickling in too: only a
    /// complete head is activity.
    @Test func aHeadThatNeverCompletesIsClosed() async throws {
        try await withTestStore(timeouts: Self.short) { store in
            let silent = try await withRawConnection(port: store.port) { connection in
                try await connection.send("GET /health HTTP/1.1\r\nHost: kiosk\r\n")
                return try await connection.readUntilClosed()
            }
            #expect(silent.isEmpty, "closed without an answer: \(silent)")
            let trickled = try await withRawConnection(port: store.port) { connection in
                try await connection.send("GET /health HTTP/1.1\r\nHost: kiosk\r\nX-Slow: ")
                return try await connection.trickleUntilClosed("a", every: .milliseconds(100))
            }
            #expect(trickled.isEmpty, "closed without an answer: \(trickled)")
            try await expectHealthy(store)
        }
    }

    /// A body shorter than its `Content-Length` is closed when it stops arriving, and the part that came is not
    /// acted on, even though it is a whole JSON object.
    @Test func aBodyShorterThanItsContentLengthIsClosedAndNotActedOn() async throws {
        try await withTestStore(timeouts: Self.short) { store in
            let json = #"{"bundleId": "com.example.partial", "name": "Partial"}"#
            _ = try await withRawConnection(port: store.port) { connection in
                try await connection.send(
                    "POST /admin/v1/apps HTTP/1.1\r\nHost: kiosk\r\nAuthorization: Bearer \(store.adminToken)\r\n"
                        + "Content-Type: application/json\r\nContent-Length: \(json.utf8.count + 50)\r\n\r\n\(json)")
                return try await connection.readUntilClosed()
            }
            #expect(try await store.request(.GET, "/admin/v1/apps/com.example.partial").status == 404)
            try await expectHealthy(store)
        }
    }

    /// A body that keeps trickling in, never idle, is closed once the body timeout has passed since its head.
    @Test func aBodyTricklingInPastTheBodyTimeoutIsClosed() async throws {
        try await withTestStore(timeouts: HTTPTimeouts(idle: .seconds(60), body: .seconds(1))) { store in
            let answer = try await withRawConnection(port: store.port) { connection in
                try await connection.send(
                    "POST /admin/v1/apps HTTP/1.1\r\nHost: kiosk\r\nAuthorization: Bearer \(store.adminToken)\r\n"
                        + "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
                return try await connection.trickleUntilClosed(" ", every: .milliseconds(50))
            }
            #expect(!answer.contains("201"), "\(answer)")
            try await expectHealthy(store)
        }
    }

    /// After an answer, a keep-alive connection that sends nothing more is closed.
    @Test func anIdleKeepAliveConnectionIsClosed() async throws {
        try await withTestStore(timeouts: HTTPTimeouts(idle: .seconds(3), body: .seconds(3))) { store in
            // On a loaded machine the fresh connection can idle out before its request leaves; that connection
            // tested nothing, so another one is tried.
            var answered = false
            for _ in 0..<5 where !answered {
                try await withRawConnection(port: store.port) { connection in
                    try await connection.send("GET /health HTTP/1.1\r\nHost: kiosk\r\n\r\n")
                    guard let response = try await connection.readResponse() else { return }
                    answered = true
                    #expect(response.status == 200)
                    #expect(try await connection.readUntilClosed().isEmpty)
                }
            }
            #expect(answered, "a request on a fresh connection was answered")
        }
    }
}
