import Foundation
import Hummingbird
import Prometheus

/// Counts requests and measures their duration per route, method and status, into the store's own
/// Prometheus registry (served at `/metrics`).
struct RequestMetricsMiddleware: RouterMiddleware {
    typealias Context = KioskRequestContext

    let registry: PrometheusCollectorRegistry

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        // The route template, not the raw path, keeps label cardinality bounded.
        let route = context.endpointPath ?? "unmatched"
        let labels = [("method", request.method.rawValue), ("route", route), ("status", String(response.status.code))]
        registry.makeCounter(name: "kiosk_http_requests_total", labels: labels).increment()
        registry.makeDurationHistogram(
            name: "kiosk_http_request_duration_seconds", labels: Array(labels.prefix(2)),
            buckets: [.milliseconds(1), .milliseconds(5), .milliseconds(25), .milliseconds(100), .milliseconds(500), .seconds(2)]
        ).recordNanoseconds((ContinuousClock.now - start).nanoseconds)
        return response
    }
}

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
