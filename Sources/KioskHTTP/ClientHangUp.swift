import NIOCore
import NIOHTTPTypes

/// Notices that a connection's client has stopped sending: TCP's FIN, or TLS's `close_notify`, which a client sends
/// when it closes a connection (cancelling a streamed answer, say).
///
/// Hummingbird allows half-closed connections and reads the next request only once the current answer has ended,
/// so an answer that never ends on its own (the store's updates stream) would go on after its client hung up, until
/// a write failed. Over TLS the client waits that long for the server's own `close_notify` (NIOSSL's shutdown
/// timeout, 5 s) before it gives up: every KioskKit client closing with its updates stream open took 5 s longer
/// over HTTPS than over HTTP. Such an answer ends when ``hangUp(on:)`` completes, and the connection then closes
/// at once, on both sides.
package final class ClientHangUp: ChannelInboundHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPRequestPart
    package typealias InboundOut = HTTPRequestPart

    private var promise: EventLoopPromise<Void>?

    package init() {}

    package func handlerAdded(context: ChannelHandlerContext) {
        promise = context.eventLoop.makePromise(of: Void.self)
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
    }

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed { hungUp() }
        context.fireUserInboundEventTriggered(event)
    }

    package func channelInactive(context: ChannelHandlerContext) {
        hungUp()
        context.fireChannelInactive()
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        hungUp()
    }

    private func hungUp() {
        promise?.succeed()
        promise = nil
    }

    /// Completes when the client of `channel` stops sending or the connection closes; nil when the channel has no
    /// ``ClientHangUp`` (a router test's channel, say).
    package static func hangUp(on channel: any Channel) async -> EventLoopFuture<Void>? {
        try? await channel.eventLoop.submit { () -> EventLoopFuture<Void>? in
            let handler = try channel.pipeline.syncOperations.handler(type: ClientHangUp.self)
            return handler.promise?.futureResult ?? channel.eventLoop.makeSucceededVoidFuture()
        }.get()
    }
}
