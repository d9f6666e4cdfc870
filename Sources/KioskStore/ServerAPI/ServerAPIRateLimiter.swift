import Foundation
import Hummingbird
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

/// Answers `429` with `4290000` and `Retry-After` when the caller's key is over its rate; runs after
/// ``ServerAPIAuthMiddleware``, so only accepted keys are counted.
struct ServerAPIRateLimitMiddleware: RouterMiddleware {
    typealias Context = KioskRequestContext

    let limiter: ServerAPIRateLimiter

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        if let retryAfter = limiter.take(try context.requireServerAPICaller().keyId) {
            throw ServerAPIError.rateLimitExceeded(retryAfter: retryAfter)
        }
        return try await next(request, context)
    }
}
