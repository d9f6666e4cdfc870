import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskProtocol

extension ServerAPIController {
    /// Apple's Retention Messaging API (`/inApps/v1/messaging/…`): images, messages, default messages and the
    /// real-time URL in both environments; the performance test in the sandbox only, as Apple serves it.
    func addMessagingRoutes(to group: RouterGroup<KioskRequestContext>) {
        guard let retention else { return }
        let images = group.group("v1/messaging/image")
            .add(middleware: BodyLimitMiddleware(RetentionMessaging.imageMaxBytes))
        images.put(":imageIdentifier") { request, context in
            let caller = try context.requireServerAPICaller()
            let identifier = try Self.uuid(context.parameters.get("imageIdentifier"), what: "image identifier")
            var size = RetentionMessaging.ImageSize.fullSize
            if let text = request.uri.queryParameters.get("imageSize") {
                guard let parsed = RetentionMessaging.ImageSize(rawValue: text) else {
                    throw ServerAPIError.badRequestImageSize("'\(text.prefix(32))' is not FULL_SIZE or BULLET_POINT")
                }
                size = parsed
            }
            if let type = request.headers[.contentType],
                type.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() != "image/png"
            {
                throw ServerAPIError.invalidImage("the body is \(type.prefix(64)), not image/png")
            }
            let data: Data
            do {
                data = try await request.collectBody(context: context)
            } catch let error as KioskError where error.kind == .tooLarge {
                throw ServerAPIError.invalidImage(
                    "the file is larger than \(RetentionMessaging.imageMaxBytes / 1_048_576) MiB")
            }
            try await retention.uploadImage(identifier, size: size, png: data, caller: caller)
            return ServerAPIAnswer.empty(.ok)
        }
        group.delete("v1/messaging/image/:imageIdentifier") { _, context in
            let caller = try context.requireServerAPICaller()
            try await retention.deleteImage(
                try Self.uuid(context.parameters.get("imageIdentifier"), what: "image identifier"), caller: caller)
            return ServerAPIAnswer.empty(.ok)
        }
        group.get("v1/messaging/image/list") { _, context in
            try ServerAPIAnswer.json(try await retention.imageList(caller: try context.requireServerAPICaller()))
        }
        group.put("v1/messaging/message/:messageIdentifier") { request, context in
            let caller = try context.requireServerAPICaller()
            let identifier = try Self.uuid(context.parameters.get("messageIdentifier"), what: "message identifier")
            let body = try await Self.decodeBody(UploadMessageRequestBody.self, request, context: context)
            try await retention.uploadMessage(try body.message(identifier), caller: caller)
            return ServerAPIAnswer.empty(.ok)
        }
        group.delete("v1/messaging/message/:messageIdentifier") { _, context in
            let caller = try context.requireServerAPICaller()
            try await retention.deleteMessage(
                try Self.uuid(context.parameters.get("messageIdentifier"), what: "message identifier"),
                caller: caller)
            return ServerAPIAnswer.empty(.ok)
        }
        group.get("v1/messaging/message/list") { _, context in
            try ServerAPIAnswer.json(try await retention.messageList(caller: try context.requireServerAPICaller()))
        }
        group.put("v1/messaging/default/:productId/:locale") { request, context in
            let caller = try context.requireServerAPICaller()
            let (productId, locale) = try Self.defaultMessageKey(context)
            let body = try await Self.decodeBody(DefaultConfigurationRequestBody.self, request, context: context)
            guard let text = body.messageIdentifier else {
                throw ServerAPIError.badRequest("The message identifier is required.")
            }
            try await retention.configureDefaultMessage(
                productId: productId, locale: locale,
                messageIdentifier: try Self.uuid(text, what: "message identifier"), caller: caller)
            return ServerAPIAnswer.empty(.ok)
        }
        group.get("v1/messaging/default/:productId/:locale") { _, context in
            let caller = try context.requireServerAPICaller()
            let (productId, locale) = try Self.defaultMessageKey(context)
            return try ServerAPIAnswer.json(
                DefaultConfigurationResponse(
                    messageIdentifier: try await retention.defaultMessage(
                        productId: productId, locale: locale, caller: caller)))
        }
        group.delete("v1/messaging/default/:productId/:locale") { _, context in
            let caller = try context.requireServerAPICaller()
            let (productId, locale) = try Self.defaultMessageKey(context)
            try await retention.deleteDefaultMessage(productId: productId, locale: locale, caller: caller)
            return ServerAPIAnswer.empty(.ok)
        }
        group.put("v1/messaging/realtime/url") { request, context in
            let caller = try context.requireServerAPICaller()
            let body = try await Self.decodeBody(RealtimeUrlRequestBody.self, request, context: context)
            try await retention.configureRealtimeURL(try Self.realtimeURL(body.realtimeURL), caller: caller)
            return ServerAPIAnswer.empty(.ok)
        }
        group.get("v1/messaging/realtime/url") { _, context in
            try ServerAPIAnswer.json(
                RealtimeUrlResponse(
                    realtimeURL: try await retention.realtimeURL(caller: context.requireServerAPICaller())))
        }
        group.delete("v1/messaging/realtime/url") { _, context in
            try await retention.deleteRealtimeURL(caller: try context.requireServerAPICaller())
            return ServerAPIAnswer.empty(.ok)
        }
        guard environment == .sandbox else { return }
        group.post("v1/messaging/performanceTest") { request, context in
            let caller = try context.requireServerAPICaller()
            let body = try await Self.decodeBody(PerformanceTestRequestBody.self, request, context: context)
            return try ServerAPIAnswer.json(
                try await retention.startPerformanceTest(
                    originalTransactionId: body.originalTransactionId, caller: caller))
        }
        group.get("v1/messaging/performanceTest/result/:requestId") { _, context in
            let caller = try context.requireServerAPICaller()
            return try ServerAPIAnswer.json(
                try await retention.performanceTestResult(
                    requestId: context.parameters.get("requestId") ?? "", caller: caller))
        }
    }

    /// A UUID in a path or body, lower-cased; `4000000` otherwise (Apple names no code of its own for it).
    static func uuid(_ text: String?, what: String) throws -> String {
        guard let text, let uuid = UUID(uuidString: text) else {
            throw ServerAPIError.badRequest("The \(what) is not a UUID.")
        }
        return uuid.uuidString.lowercased()
    }

    /// The product id (`4000023` unless shaped like one) and the locale (`4000164` unless App Store Connect offers
    /// it; normalized, `en-US` → `en_US`) of a default message's path.
    private static func defaultMessageKey(_ context: KioskRequestContext) throws -> (String, String) {
        guard let productId = context.parameters.get("productId"),
            CatalogValidator.validateProductId(productId).isEmpty
        else { throw ServerAPIError.invalidProductId }
        guard let locale = context.parameters.get("locale").flatMap(AppStoreLocale.normalized) else {
            throw ServerAPIError.invalidLocale
        }
        return (productId, locale)
    }

    /// A Get Retention Message endpoint's URL as Apple takes it: an absolute `https` URL with a host, at most 256
    /// characters, no credentials, spaces or control characters.
    static func realtimeURL(_ text: String?) throws -> String {
        guard let text, !text.isEmpty else { throw ServerAPIError.badRequestRealtimeURL("realtimeURL is required") }
        guard RetentionMessaging.length(text) <= RetentionMessaging.realtimeURLMaxLength else {
            throw ServerAPIError.badRequestRealtimeURL("it is longer than 256 characters")
        }
        guard
            !text.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F }),
            let components = URLComponents(string: text), components.scheme?.lowercased() == "https",
            let host = components.host, !host.isEmpty, components.user == nil, components.password == nil,
            URL(string: text) != nil
        else {
            throw ServerAPIError.badRequestRealtimeURL("it is not an absolute https URL with a host")
        }
        return text
    }
}

// MARK: - Wire types

/// Apple's `UploadMessageRequestBody`, read field by field: wrong types and missing text answer `4000000`, the
/// limits their own codes.
private struct UploadMessageRequestBody: Decodable {
    struct Image: Decodable {
        var imageIdentifier: String?
        var altText: String?
    }

    struct BulletPoint: Decodable {
        var text: String?
        var imageIdentifier: String?
        var altText: String?
    }

    var header: String?
    var body: String?
    var image: Image?
    var headerPosition: String?
    var bulletPoints: [BulletPoint]?

    /// The message this body uploads, after the checks Apple makes of its fields, in Apple's order of codes.
    func message(_ identifier: String) throws -> RetentionMessage {
        guard let header, !header.isEmpty else { throw ServerAPIError.badRequest("The header is required.") }
        guard let body, !body.isEmpty else { throw ServerAPIError.badRequest("The body is required.") }
        guard RetentionMessaging.length(header) <= RetentionMessaging.headerMaxLength else {
            throw ServerAPIError.headerTooLong
        }
        guard RetentionMessaging.length(body) <= RetentionMessaging.bodyMaxLength else {
            throw ServerAPIError.bodyTooLong
        }
        var messageImage: RetentionMessage.Image?
        if let image {
            guard let altText = image.altText else {
                throw ServerAPIError.badRequest("The image needs its alternative text.")
            }
            guard RetentionMessaging.length(altText) <= RetentionMessaging.altTextMaxLength else {
                throw ServerAPIError.altTextTooLong
            }
            messageImage = RetentionMessage.Image(
                imageIdentifier: try ServerAPIController.uuid(image.imageIdentifier, what: "image identifier"),
                altText: altText)
        }
        let points = bulletPoints ?? []
        guard points.count <= RetentionMessaging.bulletPointsMax else { throw ServerAPIError.tooManyBulletPoints }
        let bullets = try points.map { point in
            guard let text = point.text, !text.isEmpty, let altText = point.altText else {
                throw ServerAPIError.badRequest("A bullet point needs its text, image and alternative text.")
            }
            guard RetentionMessaging.length(text) <= RetentionMessaging.bulletPointTextMaxLength else {
                throw ServerAPIError.bulletPointTextTooLong
            }
            guard RetentionMessaging.length(altText) <= RetentionMessaging.altTextMaxLength else {
                throw ServerAPIError.altTextTooLong
            }
            return RetentionMessage.BulletPoint(
                text: text,
                imageIdentifier: try ServerAPIController.uuid(point.imageIdentifier, what: "image identifier"),
                altText: altText)
        }
        var position: RetentionMessaging.HeaderPosition?
        if let headerPosition {
            guard let parsed = RetentionMessaging.HeaderPosition(rawValue: headerPosition) else {
                throw ServerAPIError.badRequest("The header position is not ABOVE_BODY or ABOVE_IMAGE.")
            }
            position = parsed
        }
        if position == .aboveImage, messageImage == nil { throw ServerAPIError.aboveImageRequiresAnImage }
        return RetentionMessage(
            identifier: identifier, state: .pending, header: header, body: body, headerPosition: position,
            image: messageImage, bulletPoints: bullets, createdAt: Date(timeIntervalSince1970: 0))
    }
}

private struct DefaultConfigurationRequestBody: Decodable {
    var messageIdentifier: String?
}

private struct RealtimeUrlRequestBody: Decodable {
    var realtimeURL: String?

    private enum CodingKeys: String, CodingKey { case realtimeURL }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        realtimeURL = try container.serverAPIField(
            String.self, .realtimeURL, else: .badRequestRealtimeURL("realtimeURL is not a string"))
    }
}

private struct PerformanceTestRequestBody: Decodable {
    var originalTransactionId: String?

    private enum CodingKeys: String, CodingKey { case originalTransactionId }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        originalTransactionId = try container.serverAPIField(
            String.self, .originalTransactionId, else: .invalidPerformanceTestRequest)
    }
}
