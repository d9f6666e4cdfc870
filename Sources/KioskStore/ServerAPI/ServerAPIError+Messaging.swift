import Foundation

/// Apple's Retention Messaging API errors (Apple's error codes and the statuses they imply; the texts say what was
/// wrong, since Apple documents the codes but not the messages).
extension ServerAPIError {
    static func invalidImage(_ reason: String) -> ServerAPIError {
        ServerAPIError(4_000_161, "Invalid request. The image is invalid: \(reason).")
    }
    static let headerTooLong = ServerAPIError(
        4_000_162, "Invalid request. The header is longer than 66 characters.")
    static let bodyTooLong = ServerAPIError(4_000_163, "Invalid request. The body is longer than 144 characters.")
    static let invalidLocale = ServerAPIError(4_000_164, "Invalid request. The locale is invalid.")
    static let altTextTooLong = ServerAPIError(
        4_000_175, "Invalid request. The alternative text is longer than 150 characters.")
    static let invalidPerformanceTestRequest = ServerAPIError(
        4_000_211, "Invalid request. The performance test request is invalid.")
    static let invalidRequestId = ServerAPIError(4_000_212, "Invalid request. The request ID is invalid.")
    static let existingPerformanceTestRun = ServerAPIError(
        4_000_213, "Invalid request. A performance test of this app is already running.")
    static func badRequestRealtimeURL(_ reason: String) -> ServerAPIError {
        ServerAPIError(4_000_215, "Invalid request. The URL is invalid: \(reason).")
    }
    static func badRequestImageSize(_ reason: String) -> ServerAPIError {
        ServerAPIError(4_000_216, "Invalid request. The image size is invalid: \(reason).")
    }
    static let tooManyBulletPoints = ServerAPIError(
        4_000_218, "Invalid request. A message has at most 5 bullet points.")
    static let bulletPointTextTooLong = ServerAPIError(
        4_000_219, "Invalid request. A bullet point's text is longer than 66 characters.")
    static let aboveImageRequiresAnImage = ServerAPIError(
        4_000_224, "Invalid request. The header can be placed above the image only when the message has an image.")
    static let maximumNumberOfImagesReached = ServerAPIError(
        4_030_014, "Forbidden. The app has the most images it may have (2000).")
    static let maximumNumberOfMessagesReached = ServerAPIError(
        4_030_016, "Forbidden. The app has the most messages it may have (2000).")
    static let messageNotApproved = ServerAPIError(4_030_017, "Forbidden. The message is not approved.")
    static let imageNotApproved = ServerAPIError(4_030_018, "Forbidden. An image of the message is not approved.")
    static let imageInUse = ServerAPIError(
        4_030_019, "Forbidden. The image is in use by a message; delete the message first.")
    static let forbiddenNoPassingTest = ServerAPIError(
        4_030_026,
        "Forbidden. A production URL needs a passing performance test of the sandbox endpoint first.")
    static let imageNotFound = ServerAPIError(4_040_014, "Image not found.")
    static let messageNotFound = ServerAPIError(4_040_015, "Message not found.")
    static let performanceTestRunNotFound = ServerAPIError(4_040_018, "Performance test run not found.")
    static let defaultMessageNotFound = ServerAPIError(4_040_020, "Default message not found.")
    static let realtimeURLNotFound = ServerAPIError(4_040_021, "Realtime URL not found.")
    static let imageAlreadyExists = ServerAPIError(4_090_000, "The image identifier already exists.")
    static let messageAlreadyExists = ServerAPIError(4_090_001, "The message identifier already exists.")

    static func badRequest(_ reason: String) -> ServerAPIError {
        ServerAPIError(4_000_000, "Invalid request. \(reason)")
    }
}
