import Foundation
import Hummingbird
import Prometheus
import Synchronization

/// Counts requests and measures their duration per route, method and status, into the server's own
/// Prometheus registry (served at `/metrics`).
public struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    private let series: RequestSeries

    public init(registry: PrometheusCollectorRegistry) { series = RequestSeries(registry: registry) }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        // The route template, not the raw path, keeps label cardinality bounded.
        let (requests, duration) = series.metrics(
            method: request.method.rawValue, route: context.endpointPath ?? "unmatched",
            status: response.status.code)
        requests.increment()
        duration.recordNanoseconds((ContinuousClock.now - start).nanoseconds)
        return response
    }
}

/// The request counter and duration histogram of each method, route and status, taken from the registry once: the
/// registry builds a metric's name and compares its labels on every call, 2% of Get Transaction Info's time at 64
/// connections (`perf`). Past ``limit`` series (methods are whatever clients send) it asks the registry each time.
private final class RequestSeries: Sendable {
    private struct Key: Hashable {
        let method: String
        let route: String
        let status: Int
    }

    static let limit = 1_000
    private let registry: PrometheusCollectorRegistry
    private let known = Mutex<[Key: (Counter, DurationHistogram)]>([:])

    init(registry: PrometheusCollectorRegistry) { self.registry = registry }

    func metrics(method: String, route: String, status: Int) -> (Counter, DurationHistogram) {
        let key = Key(method: method, route: route, status: status)
        if let metrics = known.withLock({ $0[key] }) { return metrics }
        let labels = [("method", method), ("route", route), ("status", String(status))]
        let metrics = (
            registry.makeCounter(descriptor: Self.requests, labels: labels),
            registry.makeDurationHistogram(
                descriptor: Self.duration, labels: Array(labels.prefix(2)),
                buckets: [
                    .milliseconds(1), .milliseconds(5), .milliseconds(25), .milliseconds(100), .milliseconds(500),
                    .seconds(2),
                ])
        )
        known.withLock { known in
            if known.count < Self.limit { known[key] = metrics }
        }
        return metrics
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

extension PrometheusCollectorRegistry {
    /// Sets the database pool's gauges: `kiosk_database_pool_size`, `kiosk_database_sessions{state="in_use"}` and
    /// `{state="waiting"}` (a transaction waits while every connection is held).
    public func recordDatabasePool(size: Int, inUse: Int, waiting: Int) {
        makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "kiosk", subsystem: "database", metricName: "pool_size", unitName: "",
                helpText: "The most database transactions that run at once (connections; 1 for SQLite's writer).")
        ).set(Double(size))
        let sessions = MetricNameDescriptor(
            namespace: "kiosk", subsystem: "database", metricName: "sessions", unitName: "",
            helpText: "Database transactions running (in_use) and waiting for a connection (waiting).")
        makeGauge(descriptor: sessions, labels: [("state", "in_use")]).set(Double(inUse))
        makeGauge(descriptor: sessions, labels: [("state", "waiting")]).set(Double(waiting))
    }

    /// The registry as Prometheus text, the answer to `GET /metrics`.
    public func response() -> Response {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(4096)
        emit(into: &buffer)
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: buffer)))
    }
}

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
