import Foundation
import Hummingbird
import KioskCore

/// Turns every error into a JSON answer. Errors users can act on keep their status and text; anything else
/// becomes a 500 whose details go only to the log, under the request id the body names.
package struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    /// What the 500 answer calls the server ("store", "merchant").
    let serverName: String

    package init(serverName: String = "store") {
        self.serverName = serverName
    }

    package func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as KioskError {
            return try error.response(from: request, context: context)
        } catch let error as any KioskErrorConvertible {
            guard let kioskError = error.kioskError else {
                return try internalError(error, request: request, context: context)
            }
            return try kioskError.response(from: request, context: context)
        } catch let error as HTTPError {
            let notFound = error.status == .notFound
            let kioskError = KioskError(
                notFound ? .notFound : .badRequest,
                notFound
                    ? "Nothing answers \(request.method) \(request.uri.path)."
                    : error.body ?? error.status.reasonPhrase,
                fix: notFound
                    ? "Check the method and path against the API description at GET /openapi.yaml."
                    : "Correct the path or query parameter the message names.")
            var response = try kioskError.response(from: request, context: context)
            response.status = error.status
            return response
        } catch {
            return try internalError(error, request: request, context: context)
        }
    }

    private func internalError(_ error: any Error, request: Request, context: Context) throws -> Response {
        let requestId = context.logger[metadataKey: "hb.request.id"]?.description ?? "unknown"
        context.logger.error(
            "Request failed",
            metadata: ["error": "\(error)", "path": "\(request.uri.path)", "method": "\(request.method)"])
        let body = ErrorBody(
            error: .init(
                code: "internal_error", message: "The \(serverName) failed to answer; the log has the details.",
                fix: "Report it with the request id.", requestId: requestId))
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(
            status: .internalServerError, headers: headers,
            body: .init(byteBuffer: ByteBuffer(bytes: try JSONEncoder.kiosk.encode(body))))
    }
}
