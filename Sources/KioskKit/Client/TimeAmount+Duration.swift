import NIOCore

extension TimeAmount {
    /// `duration` in NIO's nanoseconds, held at NIO's longest (about 292 years) when it is longer, so a large
    /// configured timeout cannot trap.
    init(clamping duration: Duration) {
        self = .nanoseconds(Int64(exactly: (duration / .nanoseconds(1)).rounded(.down)) ?? .max)
    }
}
