import Foundation
import KioskProtocol
import Testing

@testable import KioskKit

@Suite struct SKErrorTests {
    /// Codes keep Apple's numbers and the error bridges to NSError in SKErrorDomain.
    @Test func appleNumbers() {
        #expect(SKError.Code.unknown.rawValue == 0)
        #expect(SKError.Code.clientInvalid.rawValue == 1)
        #expect(SKError.Code.paymentCancelled.rawValue == 2)
        #expect(SKError.Code.paymentInvalid.rawValue == 3)
        #expect(SKError.Code.paymentNotAllowed.rawValue == 4)
        #expect(SKError.Code.storeProductNotAvailable.rawValue == 5)
        #expect(SKError.Code.cloudServiceNetworkConnectionFailed.rawValue == 7)
        #expect(SKError.Code.overlayPresentedInBackgroundScene.rawValue == 20)
        let error = SKError(.paymentCancelled, message: "Cancelled.")
        let bridged = error as NSError
        #expect(bridged.domain == "SKErrorDomain" && SKErrorDomain == "SKErrorDomain")
        #expect(bridged.code == 2)
        #expect(error.localizedDescription == "Cancelled.")
    }

    /// Transaction states keep StoreKit's raw values.
    @Test func transactionStates() {
        #expect(
            [SKPaymentTransactionState.purchasing, .purchased, .failed, .restored, .deferred].map(\.rawValue)
                == [0, 1, 2, 3, 4])
    }

    /// A store failure becomes the SKError it names; a network failure becomes
    /// cloudServiceNetworkConnectionFailed; no session becomes clientInvalid.
    @Test func fromKioskFailures() {
        #expect(
            SKError(StoreKitErrorInfo(skErrorCode: 3, code: "quantity_out_of_range", message: "m")).code
                == .paymentInvalid)
        #expect(SKError(StoreKitErrorInfo(skErrorCode: 999, code: "new", message: "m")).code == .unknown)
        #expect(SKError(KioskKitError(code: .network, message: "down")).code == .cloudServiceNetworkConnectionFailed)
        #expect(SKError(KioskKitError(code: .notSignedIn, message: "no")).code == .clientInvalid)
        #expect(SKError(wrapping: CancellationError()).code == .unknown)
    }

    /// Only network failures and bare 5xx answers are retried; 4xx and answers carrying an SKError code are final.
    @Test func retryable() {
        #expect(KioskKitError(code: .network, message: "").isRetryable)
        #expect(KioskKitError(code: .store, message: "", httpStatus: 503).isRetryable)
        #expect(!KioskKitError(code: .store, message: "", httpStatus: 400).isRetryable)
        #expect(!KioskKitError(code: .invalidResponse, message: "").isRetryable)
    }
}
