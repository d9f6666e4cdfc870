import Foundation
import Synchronization

/// Hears how an ``SKRequest`` ended. Called on the client's callback queue.
public protocol SKRequestDelegate: AnyObject {
    /// The request succeeded; for a products request this comes right after `productsRequest(_:didReceive:)`.
    func requestDidFinish(_ request: SKRequest)
    /// The request failed with an ``SKError``; do not retry the same request object, make a new one.
    func request(_ request: SKRequest, didFailWithError error: any Error)
}

extension SKRequestDelegate {
    public func requestDidFinish(_ request: SKRequest) {}
    public func request(_ request: SKRequest, didFailWithError error: any Error) {}
}

/// A request to the store that answers its delegate once: ``SKProductsRequest`` or ``SKReceiptRefreshRequest``.
///
/// A started request keeps itself alive until it has answered or is cancelled.
public class SKRequest: @unchecked Sendable {
    let client: KioskStoreClient
    private let state = Mutex(State())

    private struct State: @unchecked Sendable {
        weak var delegate: (any SKRequestDelegate)?
        var task: Task<Void, Never>?
        var isCancelled = false
    }

    init(client: KioskStoreClient) {
        self.client = client
    }

    /// Told how the request ended (held weakly, as in StoreKit).
    public var delegate: (any SKRequestDelegate)? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }

    /// Sends the request; the delegate hears the outcome on the client's callback queue.
    public func start() {
        state.withLock { state in
            guard state.task == nil, !state.isCancelled else { return }
            state.task = Task {
                let report: @Sendable (any SKRequestDelegate) -> Void
                do {
                    let deliver = try await self.perform()
                    report = { delegate in
                        deliver(delegate)
                        delegate.requestDidFinish(self)
                    }
                } catch {
                    let failure = SKError(wrapping: error)
                    report = { delegate in delegate.request(self, didFailWithError: failure) }
                }
                self.client.callbackQueue.async {
                    let delegate = self.state.withLock { $0.isCancelled ? nil : $0.delegate }
                    if let delegate { report(delegate) }
                }
            }
        }
    }

    /// Stops the request; its delegate hears nothing more.
    public func cancel() {
        state.withLock { state in
            state.isCancelled = true
            state.task?.cancel()
        }
    }

    /// Does the request's work and returns the success callbacks its delegate must get before
    /// `requestDidFinish`.
    func perform() async throws -> @Sendable (any SKRequestDelegate) -> Void {
        preconditionFailure("\(Self.self) must override perform()")
    }
}
