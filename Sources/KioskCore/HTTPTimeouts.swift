/// How long a Kiosk server (the store, the merchant) waits on a client before it closes the connection.
public struct HTTPTimeouts: Sendable, Equatable, CustomStringConvertible {
    /// A connection with no request traffic for this long is closed: idle between requests (keep-alive), a request
    /// head that has not arrived whole (however steadily its bytes trickle in: only a complete head counts), or a
    /// body that stopped arriving.
    public var idle: Duration
    /// A request's body must have arrived whole this long after its head, however steadily it trickles in.
    public var body: Duration

    /// 30 seconds.
    public static let defaultIdle = Duration.seconds(30)
    /// 60 seconds.
    public static let defaultBody = Duration.seconds(60)

    public init(idle: Duration = defaultIdle, body: Duration = defaultBody) {
        self.idle = idle
        self.body = body
    }

    /// `idle 30 s, body 60 s`, as the servers print it at start.
    public var description: String {
        func seconds(_ duration: Duration) -> String {
            let (whole, fraction) = duration.components
            let value = Double(whole) + Double(fraction) / 1e18
            return value.rounded() == value ? String(whole) : String(value)
        }
        return "idle \(seconds(idle)) s, body \(seconds(body)) s"
    }
}
