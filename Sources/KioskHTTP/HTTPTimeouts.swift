import HummingbirdCore
import KioskCore
import NIOCore
import NIOHTTPTypes

extension HTTPTimeouts {
    /// Hummingbird's HTTP/1.1 server with these timeouts, over TLS when `tls` is given: `idle` is Hummingbird's own
    /// `idleTimeout`, `body` a ``RequestBodyDeadline``; a ``ClientHangUp`` tells endless answers when to end.
    package func server(tls: ServerTLS? = nil) throws -> HTTPServerBuilder {
        let body = TimeAmount(body)
        let http: HTTPServerBuilder = .http1(
            configuration: .init(
                additionalChannelHandlers: [RequestBodyDeadline(timeout: body), ClientHangUp()],
                idleTimeout: TimeAmount(idle)))
        return try tls?.wrapping(http) ?? http
    }
}

/// Closes a connection whose request body has not ended `timeout` after its head arrived. Hummingbird's idle
/// timeout only bounds the gaps between a body's bytes, so without this a client sending a byte now and then holds
/// the connection for ever.
final class RequestBodyDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            deadline?.cancel()
            let channel = context.channel
            deadline = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
        case .body:
            break
        case .end:
            deadline?.cancel()
            deadline = nil
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
    }
}
