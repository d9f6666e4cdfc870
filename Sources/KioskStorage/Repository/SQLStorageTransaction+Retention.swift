import Foundation
import KioskCore
import KioskSQL
import SQLKit

/// Apple's Retention Messaging API, per app and environment: images, messages, default messages, the real-time URL,
/// performance tests; the cancellations the real-time flow saw; and each app's retention offers.
public protocol RetentionRepository: Sendable {
    /// Stores a new image; throws `StorageError.uniqueViolation` when its identifier is taken.
    func insertRetentionImage(_ image: RetentionImage, appId: App.ID, environment: StoreEnvironment) async throws
    /// The image without its PNG (`png` is empty): what checks of its existence, size and state need.
    func retentionImage(appId: App.ID, environment: StoreEnvironment, identifier: String) async throws
        -> RetentionImage?
    /// The image's PNG file, base64.
    func retentionImagePNG(appId: App.ID, environment: StoreEnvironment, identifier: String) async throws -> String?
    /// The environment's images by creation, without their PNG (`png` is empty).
    func retentionImages(appId: App.ID, environment: StoreEnvironment) async throws -> [RetentionImage]
    func countRetentionImages(appId: App.ID, environment: StoreEnvironment) async throws -> Int
    /// False when there was no such image.
    func deleteRetentionImage(appId: App.ID, environment: StoreEnvironment, identifier: String) async throws -> Bool
    /// False when there is no such image.
    func setRetentionImageState(
        _ state: RetentionMessaging.ReviewState, appId: App.ID, environment: StoreEnvironment, identifier: String,
        at date: Date
    ) async throws -> Bool

    /// Stores a new message; throws `StorageError.uniqueViolation` when its identifier is taken.
    func insertRetentionMessage(_ message: RetentionMessage, appId: App.ID, environment: StoreEnvironment)
        async throws
    func retentionMessage(appId: App.ID, environment: StoreEnvironment, identifier: String) async throws
        -> RetentionMessage?
    /// The environment's messages by creation.
    func retentionMessages(appId: App.ID, environment: StoreEnvironment) async throws -> [RetentionMessage]
    func countRetentionMessages(appId: App.ID, environment: StoreEnvironment) async throws -> Int
    /// Deletes the message and the default configurations that named it; false when there was no such message.
    func deleteRetentionMessage(appId: App.ID, environment: StoreEnvironment, identifier: String) async throws -> Bool
    func setRetentionMessageState(
        _ state: RetentionMessaging.ReviewState, appId: App.ID, environment: StoreEnvironment, identifier: String,
        at date: Date
    ) async throws -> Bool

    /// Sets (or replaces) the default message of a product in a locale.
    func setRetentionDefaultMessage(
        appId: App.ID, environment: StoreEnvironment, productId: String, locale: String, messageIdentifier: String,
        at date: Date
    ) async throws
    func retentionDefaultMessage(appId: App.ID, environment: StoreEnvironment, productId: String, locale: String)
        async throws -> String?
    /// False when none was configured.
    func deleteRetentionDefaultMessage(
        appId: App.ID, environment: StoreEnvironment, productId: String, locale: String
    ) async throws -> Bool
    /// Every default configuration of the environment: product, locale, message.
    func retentionDefaultMessages(appId: App.ID, environment: StoreEnvironment) async throws
        -> [(productId: String, locale: String, messageIdentifier: String)]

    /// Sets the real-time URL, or with nil deletes it.
    func setRetentionRealtimeURL(_ url: String?, appId: App.ID, environment: StoreEnvironment, at date: Date)
        async throws
    func retentionRealtimeURL(appId: App.ID, environment: StoreEnvironment) async throws -> String?

    /// Stores a new test; throws `StorageError.uniqueViolation(constraint: "retention_performance_tests.pending")`
    /// when one of the app is pending in the environment.
    func insertRetentionPerformanceTest(_ test: RetentionPerformanceTestRecord) async throws
    /// Saves the state, the result, the failure reason and the finish date.
    func updateRetentionPerformanceTest(_ test: RetentionPerformanceTestRecord) async throws
    func retentionPerformanceTest(requestId: String) async throws -> RetentionPerformanceTestRecord?
    /// The app's tests in the environment, newest first.
    func retentionPerformanceTests(appId: App.ID, environment: StoreEnvironment, limit: Int) async throws
        -> [RetentionPerformanceTestRecord]
    /// Every test still `PENDING`, of every app.
    func pendingRetentionPerformanceTests() async throws -> [RetentionPerformanceTestRecord]

    /// Stores an event; throws `StorageError.uniqueViolation(constraint: "retention_events.request_id")` when one
    /// with its request identifier is stored.
    func insertRetentionEvent(_ event: RetentionEventRecord) async throws
    func retentionEvent(requestId: String) async throws -> RetentionEventRecord?
    /// The newest `limit` events of the app in the environment, the latest recorded first.
    func retentionEvents(appId: App.ID, environment: StoreEnvironment, limit: Int) async throws
        -> [RetentionEventRecord]

    /// Adds a retention offer or replaces the one with its product and identifier.
    func upsertRetentionOffer(_ offer: RetentionOffer, appId: App.ID) async throws
    /// False when there was no such offer.
    func deleteRetentionOffer(appId: App.ID, productId: String, identifier: String) async throws -> Bool
    /// The app's retention offers, by product and identifier.
    func retentionOffers(appId: App.ID) async throws -> [RetentionOffer]
}

/// A performance test of a Get Retention Message endpoint; `config` and `result` are the Server API's JSON.
public struct RetentionPerformanceTestRecord: Sendable, Hashable {
    public var requestId: String
    public var appId: App.ID
    public var environment: StoreEnvironment
    public var originalTransactionId: Int64
    public var target: String
    /// `PENDING`, `PASS` or `FAIL`.
    public var state: String
    public var config: String
    public var result: String?
    /// Why a test that could not run failed.
    public var failureReason: String?
    public var createdAt: Date
    public var finishedAt: Date?

    public init(
        requestId: String, appId: App.ID, environment: StoreEnvironment, originalTransactionId: Int64, target: String,
        state: String, config: String, result: String? = nil, failureReason: String? = nil, createdAt: Date,
        finishedAt: Date? = nil
    ) {
        self.requestId = requestId
        self.appId = appId
        self.environment = environment
        self.originalTransactionId = originalTransactionId
        self.target = target
        self.state = state
        self.config = config
        self.result = result
        self.failureReason = failureReason
        self.createdAt = createdAt
        self.finishedAt = finishedAt
    }
}

/// One cancellation the real-time flow saw; `event` is its JSON (`RetentionEvent`).
public struct RetentionEventRecord: Sendable, Hashable {
    public var requestId: String
    public var appId: App.ID
    public var environment: StoreEnvironment
    public var originalTransactionId: Int64
    public var createdAt: Date
    public var event: String

    public init(
        requestId: String, appId: App.ID, environment: StoreEnvironment, originalTransactionId: Int64, createdAt: Date,
        event: String
    ) {
        self.requestId = requestId
        self.appId = appId
        self.environment = environment
        self.originalTransactionId = originalTransactionId
        self.createdAt = createdAt
        self.event = event
    }
}

extension SQLStorageTransaction {
    // MARK: Images

    func insertRetentionImage(_ image: RetentionImage, appId: App.ID, environment: StoreEnvironment) async throws {
        try await session.run(
            """
            INSERT INTO retention_images (app_id, environment, image_id, image_size, state, width, height, bytes, png,
                created_at, reviewed_at)
            VALUES (\(bind: appId), \(bind: environment.rawValue), \(bind: image.identifier),
                \(bind: image.size.rawValue), \(bind: image.state.rawValue), \(bind: Int64(image.width)),
                \(bind: Int64(image.height)), \(bind: Int64(image.bytes)), \(bind: image.png),
                \(bind: image.createdAt.millisecondsSince1970), \(bind: image.reviewedAt?.millisecondsSince1970))
            """
        )
    }

    /// An image's columns but its PNG, which may be megabytes.
    private static let imageMetadata =
        "image_id, image_size, state, width, height, bytes, '' AS png, created_at, reviewed_at"

    func retentionImage(appId: App.ID, environment: StoreEnvironment, identifier: String) async throws
        -> RetentionImage?
    {
        try await session.first(
            """
            SELECT \(unsafeRaw: Self.imageMetadata) FROM retention_images WHERE app_id = \(bind: appId)
                AND environment = \(bind: environment.rawValue) AND image_id = \(bind: identifier)
            """
        ).map(Self.retentionImage)
    }

    func retentionImagePNG(appId: App.ID, environment: StoreEnvironment, identifier: String) async throws -> String? {
        try await session.first(
            """
            SELECT png FROM retention_images WHERE app_id = \(bind: appId)
                AND environment = \(bind: environment.rawValue) AND image_id = \(bind: identifier)
            """
        )?.decode(column: "png", as: String.self)
    }

    func retentionImages(appId: App.ID, environment: StoreEnvironment) async throws -> [RetentionImage] {
        try await session.all(
            """
            SELECT \(unsafeRaw: Self.imageMetadata)
            FROM retention_images WHERE app_id = \(bind: appId) AND environment = \(bind: environment.rawValue)
            ORDER BY created_at, image_id
            """
        ).map(Self.retentionImage)
    }

    func countRetentionImages(appId: App.ID, environment: StoreEnvironment) async throws -> Int {
        try await retentionCount(
            "SELECT COUNT(*) AS n FROM retention_images WHERE app_id = \(bind: appId) AND environment = \(bind: environment.rawValue)"
        )
    }

    func deleteRetentionImage(appId: App.ID, environment: StoreEnvironment, identifier: String) async throws -> Bool {
        try await session.first(
            """
            DELETE FROM retention_images WHERE app_id = \(bind: appId) AND environment = \(bind: environment.rawValue)
                AND image_id = \(bind: identifier)
            RETURNING image_id
            """
        ) != nil
    }

    func setRetentionImageState(
        _ state: RetentionMessaging.ReviewState, appId: App.ID, environment: StoreEnvironment, identifier: String,
        at date: Date
    ) async throws -> Bool {
        try await session.first(
            """
            UPDATE retention_images SET state = \(bind: state.rawValue), reviewed_at = \(bind: date.millisecondsSince1970)
            WHERE app_id = \(bind: appId) AND environment = \(bind: environment.rawValue)
                AND image_id = \(bind: identifier)
            RETURNING image_id
            """
        ) != nil
    }

    private static func retentionImage(_ row: any SQLRow) throws -> RetentionImage {
        RetentionImage(
            identifier: try row.decode(column: "image_id", as: String.self),
            size: try row.enumeration("image_size", as: RetentionMessaging.ImageSize.self),
            state: try row.enumeration("state", as: RetentionMessaging.ReviewState.self),
            width: Int(try row.decode(column: "width", as: Int64.self)),
            height: Int(try row.decode(column: "height", as: Int64.self)),
            bytes: Int(try row.decode(column: "bytes", as: Int64.self)),
            png: try row.decode(column: "png", as: String.self), createdAt: try row.date("created_at"),
            reviewedAt: try row.optionalDate("reviewed_at"))
    }

    // MARK: Messages

    /// The message's text, image and bullet points, as stored in `content`.
    private struct MessageContent: Codable {
        var header: String
        var body: String
        var headerPosition: RetentionMessaging.HeaderPosition?
        var image: RetentionMessage.Image?
        var bulletPoints: [RetentionMessage.BulletPoint]
    }

    func insertRetentionMessage(_ message: RetentionMessage, appId: App.ID, environment: StoreEnvironment)
        async throws
    {
        let content = MessageContent(
            header: message.header, body: message.body, headerPosition: message.headerPosition, image: message.image,
            bulletPoints: message.bulletPoints)
        let json = String(decoding: try JSONEncoder().encode(content), as: UTF8.self)
        try await session.run(
            """
            INSERT INTO retention_messages (app_id, environment, message_id, state, content, created_at, reviewed_at)
            VALUES (\(bind: appId), \(bind: environment.rawValue), \(bind: message.identifier),
                \(bind: message.state.rawValue), \(bind: json), \(bind: message.createdAt.millisecondsSince1970),
                \(bind: message.reviewedAt?.millisecondsSince1970))
            """
        )
    }

    func retentionMessage(appId: App.ID, environment: StoreEnvironment, identifier: String) async throws
        -> RetentionMessage?
    {
        try await session.first(
            """
            SELECT * FROM retention_messages WHERE app_id = \(bind: appId)
                AND environment = \(bind: environment.rawValue) AND message_id = \(bind: identifier)
            """
        ).map(Self.retentionMessage)
    }

    func retentionMessages(appId: App.ID, environment: StoreEnvironment) async throws -> [RetentionMessage] {
        try await session.all(
            """
            SELECT * FROM retention_messages WHERE app_id = \(bind: appId)
                AND environment = \(bind: environment.rawValue)
            ORDER BY created_at, message_id
            """
        ).map(Self.retentionMessage)
    }

    func countRetentionMessages(appId: App.ID, environment: StoreEnvironment) async throws -> Int {
        try await retentionCount(
            "SELECT COUNT(*) AS n FROM retention_messages WHERE app_id = \(bind: appId) AND environment = \(bind: environment.rawValue)"
        )
    }

    func deleteRetentionMessage(appId: App.ID, environment: StoreEnvironment, identifier: String) async throws -> Bool {
        try await session.run(
            """
            DELETE FROM retention_default_messages WHERE app_id = \(bind: appId)
                AND environment = \(bind: environment.rawValue) AND message_id = \(bind: identifier)
            """
        )
        return try await session.first(
            """
            DELETE FROM retention_messages WHERE app_id = \(bind: appId)
                AND environment = \(bind: environment.rawValue) AND message_id = \(bind: identifier)
            RETURNING message_id
            """
        ) != nil
    }

    func setRetentionMessageState(
        _ state: RetentionMessaging.ReviewState, appId: App.ID, environment: StoreEnvironment, identifier: String,
        at date: Date
    ) async throws -> Bool {
        try await session.first(
            """
            UPDATE retention_messages SET state = \(bind: state.rawValue), reviewed_at = \(bind: date.millisecondsSince1970)
            WHERE app_id = \(bind: appId) AND environment = \(bind: environment.rawValue)
                AND message_id = \(bind: identifier)
            RETURNING message_id
            """
        ) != nil
    }

    private static func retentionMessage(_ row: any SQLRow) throws -> RetentionMessage {
        let json = try row.decode(column: "content", as: String.self)
        let content: MessageContent
        do {
            content = try JSONDecoder().decode(MessageContent.self, from: Data(json.utf8))
        } catch {
            throw StorageError.engine(message: "a retention message's content is not the JSON Kiosk stores: \(error)")
        }
        return RetentionMessage(
            identifier: try row.decode(column: "message_id", as: String.self),
            state: try row.enumeration("state", as: RetentionMessaging.ReviewState.self), header: content.header,
            body: content.body, headerPosition: content.headerPosition, image: content.image,
            bulletPoints: content.bulletPoints, createdAt: try row.date("created_at"),
            reviewedAt: try row.optionalDate("reviewed_at"))
    }

    // MARK: Default messages

    func setRetentionDefaultMessage(
        appId: App.ID, environment: StoreEnvironment, productId: String, locale: String, messageIdentifier: String,
        at date: Date
    ) async throws {
        try await session.run(
            """
            INSERT INTO retention_default_messages (app_id, environment, product_id, locale, message_id, updated_at)
            VALUES (\(bind: appId), \(bind: environment.rawValue), \(bind: productId), \(bind: locale),
                \(bind: messageIdentifier), \(bind: date.millisecondsSince1970))
            ON CONFLICT (app_id, environment, product_id, locale)
            DO UPDATE SET message_id = excluded.message_id, updated_at = excluded.updated_at
            """
        )
    }

    func retentionDefaultMessage(appId: App.ID, environment: StoreEnvironment, productId: String, locale: String)
        async throws -> String?
    {
        try await session.first(
            """
            SELECT message_id FROM retention_default_messages WHERE app_id = \(bind: appId)
                AND environment = \(bind: environment.rawValue) AND product_id = \(bind: productId)
                AND locale = \(bind: locale)
            """
        )?.decode(column: "message_id", as: String.self)
    }

    func deleteRetentionDefaultMessage(
        appId: App.ID, environment: StoreEnvironment, productId: String, locale: String
    ) async throws -> Bool {
        try await session.first(
            """
            DELETE FROM retention_default_messages WHERE app_id = \(bind: appId)
                AND environment = \(bind: environment.rawValue) AND product_id = \(bind: productId)
                AND locale = \(bind: locale)
            RETURNING message_id
            """
        ) != nil
    }

    func retentionDefaultMessages(appId: App.ID, environment: StoreEnvironment) async throws
        -> [(productId: String, locale: String, messageIdentifier: String)]
    {
        try await session.all(
            """
            SELECT product_id, locale, message_id FROM retention_default_messages WHERE app_id = \(bind: appId)
                AND environment = \(bind: environment.rawValue)
            ORDER BY product_id, locale
            """
        ).map { row in
            (
                try row.decode(column: "product_id", as: String.self),
                try row.decode(column: "locale", as: String.self),
                try row.decode(column: "message_id", as: String.self)
            )
        }
    }

    // MARK: Real-time URL

    func setRetentionRealtimeURL(_ url: String?, appId: App.ID, environment: StoreEnvironment, at date: Date)
        async throws
    {
        guard let url else {
            try await session.run(
                """
                DELETE FROM retention_realtime_urls WHERE app_id = \(bind: appId)
                    AND environment = \(bind: environment.rawValue)
                """
            )
            return
        }
        try await session.run(
            """
            INSERT INTO retention_realtime_urls (app_id, environment, url, updated_at)
            VALUES (\(bind: appId), \(bind: environment.rawValue), \(bind: url), \(bind: date.millisecondsSince1970))
            ON CONFLICT (app_id, environment) DO UPDATE SET url = excluded.url, updated_at = excluded.updated_at
            """
        )
    }

    func retentionRealtimeURL(appId: App.ID, environment: StoreEnvironment) async throws -> String? {
        try await session.first(
            """
            SELECT url FROM retention_realtime_urls WHERE app_id = \(bind: appId)
                AND environment = \(bind: environment.rawValue)
            """
        )?.decode(column: "url", as: String.self)
    }

    // MARK: Performance tests

    func insertRetentionPerformanceTest(_ test: RetentionPerformanceTestRecord) async throws {
        try await session.run(
            """
            INSERT INTO retention_performance_tests (request_id, app_id, environment, original_transaction_id, target,
                state, config, result, failure_reason, created_at, finished_at)
            VALUES (\(bind: test.requestId), \(bind: test.appId), \(bind: test.environment.rawValue),
                \(bind: test.originalTransactionId), \(bind: test.target), \(bind: test.state), \(bind: test.config),
                \(bind: test.result), \(bind: test.failureReason), \(bind: test.createdAt.millisecondsSince1970),
                \(bind: test.finishedAt?.millisecondsSince1970))
            """
        )
    }

    func updateRetentionPerformanceTest(_ test: RetentionPerformanceTestRecord) async throws {
        try await session.run(
            """
            UPDATE retention_performance_tests SET state = \(bind: test.state), result = \(bind: test.result),
                failure_reason = \(bind: test.failureReason), finished_at = \(bind: test.finishedAt?.millisecondsSince1970)
            WHERE request_id = \(bind: test.requestId)
            """
        )
    }

    func retentionPerformanceTest(requestId: String) async throws -> RetentionPerformanceTestRecord? {
        try await session.first(
            "SELECT * FROM retention_performance_tests WHERE request_id = \(bind: requestId)"
        ).map(Self.performanceTest)
    }

    func retentionPerformanceTests(appId: App.ID, environment: StoreEnvironment, limit: Int) async throws
        -> [RetentionPerformanceTestRecord]
    {
        try await session.all(
            """
            SELECT * FROM retention_performance_tests WHERE app_id = \(bind: appId)
                AND environment = \(bind: environment.rawValue)
            ORDER BY created_at DESC, request_id DESC LIMIT \(bind: limit)
            """
        ).map(Self.performanceTest)
    }

    func pendingRetentionPerformanceTests() async throws -> [RetentionPerformanceTestRecord] {
        try await session.all(
            "SELECT * FROM retention_performance_tests WHERE state = 'PENDING' ORDER BY created_at, request_id"
        ).map(Self.performanceTest)
    }

    private static func performanceTest(_ row: any SQLRow) throws -> RetentionPerformanceTestRecord {
        RetentionPerformanceTestRecord(
            requestId: try row.decode(column: "request_id", as: String.self),
            appId: try row.decode(column: "app_id", as: Int64.self),
            environment: try row.enumeration("environment", as: StoreEnvironment.self),
            originalTransactionId: try row.decode(column: "original_transaction_id", as: Int64.self),
            target: try row.decode(column: "target", as: String.self),
            state: try row.decode(column: "state", as: String.self),
            config: try row.decode(column: "config", as: String.self),
            result: try row.optional("result", as: String.self),
            failureReason: try row.optional("failure_reason", as: String.self), createdAt: try row.date("created_at"),
            finishedAt: try row.optionalDate("finished_at"))
    }

    // MARK: Events

    func insertRetentionEvent(_ event: RetentionEventRecord) async throws {
        try await session.run(
            """
            INSERT INTO retention_events (request_id, app_id, environment, original_transaction_id, created_at, seq,
                event)
            SELECT \(bind: event.requestId), \(bind: event.appId), \(bind: event.environment.rawValue),
                \(bind: event.originalTransactionId), \(bind: event.createdAt.millisecondsSince1970),
                COALESCE(MAX(seq), 0) + 1, \(bind: event.event)
            FROM retention_events WHERE app_id = \(bind: event.appId) AND environment = \(bind: event.environment.rawValue)
            """
        )
    }

    func retentionEvent(requestId: String) async throws -> RetentionEventRecord? {
        try await session.first("SELECT * FROM retention_events WHERE request_id = \(bind: requestId)")
            .map(Self.retentionEvent)
    }

    func retentionEvents(appId: App.ID, environment: StoreEnvironment, limit: Int) async throws
        -> [RetentionEventRecord]
    {
        try await session.all(
            """
            SELECT * FROM retention_events WHERE app_id = \(bind: appId) AND environment = \(bind: environment.rawValue)
            ORDER BY seq DESC LIMIT \(bind: limit)
            """
        ).map(Self.retentionEvent)
    }

    private static func retentionEvent(_ row: any SQLRow) throws -> RetentionEventRecord {
        RetentionEventRecord(
            requestId: try row.decode(column: "request_id", as: String.self),
            appId: try row.decode(column: "app_id", as: Int64.self),
            environment: try row.enumeration("environment", as: StoreEnvironment.self),
            originalTransactionId: try row.decode(column: "original_transaction_id", as: Int64.self),
            createdAt: try row.date("created_at"), event: try row.decode(column: "event", as: String.self))
    }

    // MARK: Retention offers

    func upsertRetentionOffer(_ offer: RetentionOffer, appId: App.ID) async throws {
        let schedule = String(decoding: try JSONEncoder().encode(offer.schedule), as: UTF8.self)
        try await session.run(
            """
            INSERT INTO retention_offers (app_id, product_id, identifier, reference_name, schedule, created_at)
            VALUES (\(bind: appId), \(bind: offer.productId), \(bind: offer.identifier), \(bind: offer.referenceName),
                \(bind: schedule), \(bind: offer.createdAt.millisecondsSince1970))
            ON CONFLICT (app_id, product_id, identifier)
            DO UPDATE SET reference_name = excluded.reference_name, schedule = excluded.schedule
            """
        )
    }

    func deleteRetentionOffer(appId: App.ID, productId: String, identifier: String) async throws -> Bool {
        try await session.first(
            """
            DELETE FROM retention_offers WHERE app_id = \(bind: appId) AND product_id = \(bind: productId)
                AND identifier = \(bind: identifier)
            RETURNING identifier
            """
        ) != nil
    }

    func retentionOffers(appId: App.ID) async throws -> [RetentionOffer] {
        try await session.all(
            "SELECT * FROM retention_offers WHERE app_id = \(bind: appId) ORDER BY product_id, identifier"
        ).map { row in
            let json = try row.decode(column: "schedule", as: String.self)
            let schedule: OfferSchedule
            do {
                schedule = try JSONDecoder().decode(OfferSchedule.self, from: Data(json.utf8))
            } catch {
                throw StorageError.engine(
                    message: "a retention offer's schedule is not the JSON Kiosk stores: \(error)")
            }
            return RetentionOffer(
                productId: try row.decode(column: "product_id", as: String.self),
                identifier: try row.decode(column: "identifier", as: String.self),
                referenceName: try row.decode(column: "reference_name", as: String.self), schedule: schedule,
                createdAt: try row.date("created_at"))
        }
    }

    private func retentionCount(_ query: SQLQueryString) async throws -> Int {
        Int(try await session.first(query)?.decode(column: "n", as: Int64.self) ?? 0)
    }
}
