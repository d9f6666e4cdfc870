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
        registry.makeCounter(descriptor: Self.requests, labels: labels).increment()
        registry.makeDurationHistogram(
            descriptor: Self.duration, labels: Array(labels.prefix(2)),
            buckets: [
                .milliseconds(1), .milliseconds(5), .milliseconds(25), .milliseconds(100), .milliseconds(500),
                .seconds(2),
            ]
        ).recordNanoseconds((ContinuousClock.now - start).nanoseconds)
        return response
    }

    /// `kiosk_http_requests_total`.
    static var requests: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "kiosk", subsystem: "http", metricName: "requests", unitName: "total",
            helpText: "HTTP requests answered, by method, route template and status.")
    }

    /// `kiosk_http_request_duration_seconds`.
    static var duration: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "kiosk", subsystem: "http", metricName: "request_duration", unitName: "seconds",
            helpText: "Time to answer an HTTP request, by method and route template.")
    }
}

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
