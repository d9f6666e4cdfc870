import Foundation
import Hummingbird
import KioskCore
import Synchronization

/// A token bucket per In-App Purchase key, in memory: a key may make `requestsPerSecond` requests a second on
/// average and a second's worth (at least one) at once. Time is the monotonic clock, not the store's clock.
final class ServerAPIRateLimiter: Sendable {
    let requestsPerSecond: Double
    private let capacity: Double
    private let buckets = Mutex<[String: Bucket]>([:])

    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    init(requestsPerSecond: Double) {
        precondition(requestsPerSecond > 0, "the Server API rate limit must be positive")
        self.requestsPerSecond = requestsPerSecond
        self.capacity = max(1, requestsPerSecond)
    }

    /// Takes one request's token from `keyId`'s bucket. Returns nil when there was one, else the whole seconds
    /// until there will be (at least 1), for `Retry-After`.
    func take(_ keyId: String, at now: ContinuousClock.Instant = .now) -> Int? {
        buckets.withLock { buckets in
            var bucket = buckets[keyId] ?? Bucket(tokens: capacity, updated: now)
            let elapsed = now - bucket.updated
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
            bucket.tokens = min(capacity, bucket.tokens + max(0, seconds) * requestsPerSecond)
            bucket.updated = now
            defer { buckets[keyId] = bucket }
            guard bucket.tokens >= 1 else {
                // A tiny configured rate makes the wait too long for an Int: then Int's largest says "much later".
                let wait = ((1 - bucket.tokens) / requestsPerSecond).rounded(.up)
                return max(1, Int(exactly: wait) ?? .max)
            }
            bucket.tokens -= 1
            return nil
        }
    }
}

/// Answers `429` with `4290000` and `Retry-After` when the caller's key is over its rate, or its app over Apple's
/// limit for the endpoint (``ServerAPIEndpointLimits``); runs after ``ServerAPIAuthMiddleware``, so only accepted
/// keys are counted. The key's limit answers `Retry-After` in seconds; Apple's, as Apple does, in UNIX milliseconds.
struct ServerAPIRateLimitMiddleware: RouterMiddleware {
    typealias Context = KioskRequestContext

    let limiter: ServerAPIRateLimiter
    let endpoints: ServerAPIEndpointLimits
    let clock: any KioskClock

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let caller = try context.requireServerAPICaller()
        if let retryAfter = limiter.take(caller.keyId) {
            throw ServerAPIError.rateLimitExceeded(retryAfter: String(retryAfter))
        }
        if let endpoint = context.endpointPath.flatMap({
            ServerAPIEndpointLimits.endpoint(method: request.method.rawValue, endpointPath: $0)
        }),
            let nextAllowed = endpoints.admit(
                endpoint: endpoint, appId: caller.app.id, environment: caller.environment, now: clock.now())
        {
            throw ServerAPIError.rateLimitExceeded(retryAfter: String(nextAllowed.millisecondsSince1970))
        }
        return try await next(request, context)
    }
}
