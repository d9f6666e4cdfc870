import Foundation
import Hummingbird
import KioskCore
import NIOCore
import NIOHTTP1

/// A request context whose body limit the route group sets (``BodyLimitMiddleware``), so each family of routes
/// reads at most what it needs.
package protocol BodyLimitedContext: RequestContext {
    var maxUploadSize: Int { get set }
}

/// Sets the largest request body the routes after it read, in bytes.
package struct BodyLimitMiddleware<Context: BodyLimitedContext>: RouterMiddleware {
    let bytes: Int

    package init(_ bytes: Int) {
        self.bytes = bytes
    }

    package func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        context.maxUploadSize = bytes
        return try await next(request, context)
    }
}

extension Request {
    /// Reads the whole body, up to the context's limit.
    ///
    /// - Throws: `KioskError` 413 `body_too_large` naming the limit (before reading when `Content-Length` says so);
    ///   400 `malformed_body` when the chunked framing is broken; 400 `incomplete_body` when the connection ends
    ///   before the body does.
    package func collectBody(context: some RequestContext) async throws -> Data {
        let limit = context.maxUploadSize
        let declared = headers[.contentLength].flatMap { Int($0) }
        if let declared, declared > limit { throw KioskError.bodyTooLarge(limit: limit) }
        let buffer: ByteBuffer
        do {
            buffer = try await body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw KioskError.bodyTooLarge(limit: limit)
        } catch let error as HTTPParserError {
            throw KioskError(
                .malformedBody, "The request body's framing is not valid HTTP/1.1 (\(error)).",
                fix: "Send the body with a correct Content-Length, or as valid chunked transfer encoding.")
        } catch {
            throw KioskError.incompleteBody
        }
        return Data(buffer.readableBytesView)
    }
}

extension KioskError {
    /// 413 `body_too_large`: the body is larger than `limit` bytes, the most the route reads.
    package static func bodyTooLarge(limit: Int) -> KioskError {
        KioskError(
            .bodyTooLarge, "The request body is larger than \(ByteCount.text(limit)), the most this route accepts.",
            fix: "Send at most \(limit) bytes; split a larger upload.")
    }

    /// 400 `incomplete_body`: the connection ended before the body its head announced.
    static let incompleteBody = KioskError(
        .incompleteBody, "The connection ended before the request body did.",
        fix: "Send the whole body its Content-Length announces, or end a chunked body with its last chunk.")
}

/// Sizes as people read them.
package enum ByteCount {
    /// `16 MiB`, `64 KiB`, `100 bytes`.
    package static func text(_ bytes: Int) -> String {
        if bytes >= 1_048_576, bytes % 1_048_576 == 0 { return "\(bytes / 1_048_576) MiB" }
        if bytes >= 1024, bytes % 1024 == 0 { return "\(bytes / 1024) KiB" }
        return "\(bytes) bytes"
    }
}
