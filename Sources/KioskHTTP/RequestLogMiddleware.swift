import Hummingbird
import Logging

/// Logs every request before it is handled: method, route, path (never the query, which may hold a signature) and,
/// from the logger's metadata, the request id (`hb.request.id`). Log lines go out unbuffered, so if the process
/// dies while serving a request, the last line under its request id says what it was serving.
package struct RequestLogMiddleware<Context: RequestContext>: RouterMiddleware {
    package init() {}

    package func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        context.logger.info(
            "Request",
            metadata: [
                "method": .string(request.method.rawValue),
                "route": .string(context.endpointPath ?? "none"),
                "path": .string(request.uri.path),
            ])
        return try await next(request, context)
    }
}
