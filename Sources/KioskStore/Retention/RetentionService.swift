import AsyncHTTPClient
import Foundation
import KioskCore
import KioskProtocol
import KioskSQL
import KioskStorage
import Logging
import ServiceLifecycle

/// Apple's Retention Messaging API in the store: what developers configure through Apple's endpoints (images,
/// messages, default messages, the real-time URL, the sandbox performance test; `ServerAPIController+Messaging`),
/// what an operator decides as App Review (approve or reject; the console and `kiosk retention`), and the real-time
/// cancel flow: when a subscriber turns auto-renew off, the store asks the app's Get Retention Message endpoint what
/// to show, within Apple's time budget, and applies what the subscriber does with it
/// (`RetentionService+Cancel.swift`).
///
/// As a service it runs the performance tests in the background, resuming those a stopped store left pending.
public struct RetentionService: Service {
    let context: StoreContext
    let purchases: PurchaseService
    let lifecycle: SubscriptionLifecycle
    /// Calls the developers' endpoints (the store's outbound client, which trusts the Kiosk TLS root when given).
    let http: HTTPClient
    /// Where real-time requests may go (`--outbound-urls`).
    let policy: OutboundURLPolicy
    /// How long the store waits for a Get Retention Message endpoint: Apple's 700 ms unless configured.
    let budget: Duration
    private let started: AsyncStream<String>
    private let startedContinuation: AsyncStream<String>.Continuation

    var database: any KioskDatabase { context.database }
    var clocks: StoreClocks { context.clocks }
    var ledger: StoreLedger { context.ledger }
    var logger: Logger { context.logger }

    /// Apple's time budget for a Get Retention Message endpoint ("Setting up your Get Retention Message endpoint":
    /// respond within 700 ms, or the request fails).
    public static let appleBudget: Duration = .milliseconds(700)

    init(
        context: StoreContext, purchases: PurchaseService, lifecycle: SubscriptionLifecycle, http: HTTPClient,
        policy: OutboundURLPolicy = .any, budget: Duration = RetentionService.appleBudget
    ) {
        self.context = context
        self.purchases = purchases
        self.lifecycle = lifecycle
        self.http = http
        self.policy = policy
        self.budget = budget
        (started, startedContinuation) = AsyncStream.makeStream(of: String.self)
    }

    /// Runs the performance tests started from now on, and those a stopped store left pending, until shutdown.
    public func run() async throws {
        let pending = (try? await database.transaction { tx in try await tx.pendingRetentionPerformanceTests() }) ?? []
        await withDiscardingTaskGroup { group in
            for test in pending {
                group.addTask { await runPerformanceTest(requestId: test.requestId) }
            }
            for await requestId in started.cancelOnGracefulShutdown() {
                group.addTask { await runPerformanceTest(requestId: requestId) }
            }
        }
    }

    /// Starts the performance test `requestId` in the background.
    func startInBackground(_ requestId: String) {
        startedContinuation.yield(requestId)
    }

    /// The review state a new upload starts in: Apple approves sandbox uploads at once ("In the sandbox testing
    /// environment, the system automatically sets the message and image states to APPROVED"); production ones wait
    /// for App Review, which in Kiosk is an operator.
    static func initialState(_ environment: StoreEnvironment) -> RetentionMessaging.ReviewState {
        environment == .sandbox ? .approved : .pending
    }

    // MARK: - Images

    /// Upload Image: a PNG without transparency of the size `size` asks for.
    func uploadImage(
        _ identifier: String, size: RetentionMessaging.ImageSize, png data: Data, caller: ServerAPICaller
    ) async throws {
        let info: PNGImageInfo
        do {
            info = try PNGImageInfo(data)
        } catch let refusal as PNGImageInfo.Refusal {
            throw ServerAPIError.invalidImage(refusal.description)
        }
        guard size.fits(width: info.width, height: info.height) else {
            throw ServerAPIError.invalidImage(
                "a \(size.rawValue) image is \(size.rule); this one is \(info.width) × \(info.height)")
        }
        let environment = caller.environment
        let image = RetentionImage(
            identifier: identifier, size: size, state: Self.initialState(environment), width: info.width,
            height: info.height, bytes: data.count, png: data.base64EncodedString(),
            createdAt: clocks.now(environment))
        try await database.transaction { tx in
            if try await tx.retentionImage(appId: caller.app.id, environment: environment, identifier: identifier)
                != nil
            {
                throw ServerAPIError.imageAlreadyExists
            }
            guard
                try await tx.countRetentionImages(appId: caller.app.id, environment: environment)
                    < RetentionMessaging.imagesPerApp
            else { throw ServerAPIError.maximumNumberOfImagesReached }
            do {
                try await tx.insertRetentionImage(image, appId: caller.app.id, environment: environment)
            } catch StorageError.uniqueViolation {
                throw ServerAPIError.imageAlreadyExists
            }
        }
    }

    /// Delete Image: refused while a message shows it.
    func deleteImage(_ identifier: String, caller: ServerAPICaller) async throws {
        try await database.transaction { tx in
            let (app, environment) = (caller.app.id, caller.environment)
            guard try await tx.retentionImage(appId: app, environment: environment, identifier: identifier) != nil
            else { throw ServerAPIError.imageNotFound }
            let messages = try await tx.retentionMessages(appId: app, environment: environment)
            guard !messages.contains(where: { $0.imageIdentifiers.contains(identifier) }) else {
                throw ServerAPIError.imageInUse
            }
            _ = try await tx.deleteRetentionImage(appId: app, environment: environment, identifier: identifier)
        }
    }

    func imageList(caller: ServerAPICaller) async throws -> GetImageListResponse {
        let images = try await database.transaction { tx in
            try await tx.retentionImages(appId: caller.app.id, environment: caller.environment)
        }
        return GetImageListResponse(
            imageIdentifiers: images.map {
                GetImageListResponseItem(
                    imageIdentifier: $0.identifier, imageState: $0.state.rawValue, imageSize: $0.size.rawValue)
            })
    }

    // MARK: - Messages

    /// Upload Message: `message` passed the checks of its own fields; here the images it names must exist and be of
    /// the right size (a message's image full size, a bullet point's icon bullet-point size).
    func uploadMessage(_ message: RetentionMessage, caller: ServerAPICaller) async throws {
        var message = message
        let environment = caller.environment
        message.state = Self.initialState(environment)
        message.createdAt = clocks.now(environment)
        try await database.transaction { [message] tx in
            let app = caller.app.id
            if try await tx.retentionMessage(appId: app, environment: environment, identifier: message.identifier)
                != nil
            {
                throw ServerAPIError.messageAlreadyExists
            }
            guard
                try await tx.countRetentionMessages(appId: app, environment: environment)
                    < RetentionMessaging.messagesPerApp
            else { throw ServerAPIError.maximumNumberOfMessagesReached }
            let uses =
                (message.image.map { [($0.imageIdentifier, RetentionMessaging.ImageSize.fullSize)] } ?? [])
                + message.bulletPoints.map { ($0.imageIdentifier, RetentionMessaging.ImageSize.bulletPoint) }
            for (identifier, size) in uses {
                guard
                    let image = try await tx.retentionImage(
                        appId: app, environment: environment, identifier: identifier)
                else { throw ServerAPIError.imageNotFound }
                guard image.size == size else {
                    throw ServerAPIError.badRequestImageSize(
                        "the image \(identifier) is \(image.size.rawValue); "
                            + (size == .fullSize
                                ? "a message's image must be FULL_SIZE" : "a bullet point's image must be BULLET_POINT")
                    )
                }
            }
            do {
                try await tx.insertRetentionMessage(message, appId: app, environment: environment)
            } catch StorageError.uniqueViolation {
                throw ServerAPIError.messageAlreadyExists
            }
        }
    }

    func deleteMessage(_ identifier: String, caller: ServerAPICaller) async throws {
        let deleted = try await database.transaction { tx in
            try await tx.deleteRetentionMessage(
                appId: caller.app.id, environment: caller.environment, identifier: identifier)
        }
        guard deleted else { throw ServerAPIError.messageNotFound }
    }

    func messageList(caller: ServerAPICaller) async throws -> GetMessageListResponse {
        let messages = try await database.transaction { tx in
            try await tx.retentionMessages(appId: caller.app.id, environment: caller.environment)
        }
        return GetMessageListResponse(
            messageIdentifiers: messages.map {
                GetMessageListResponseItem(messageIdentifier: $0.identifier, messageState: $0.state.rawValue)
            })
    }

    // MARK: - Default messages

    /// Configure Default Message: an approved message (whose images are approved) for an auto-renewable of the app in
    /// a locale. `locale` is App Store Connect's, normalized (`en_US`).
    func configureDefaultMessage(
        productId: String, locale: String, messageIdentifier: String, caller: ServerAPICaller
    ) async throws {
        let environment = caller.environment
        let now = clocks.now(environment)
        try await database.transaction { tx in
            let app = caller.app.id
            try await Self.requireAutoRenewable(productId, appId: app, in: tx)
            guard
                let message = try await tx.retentionMessage(
                    appId: app, environment: environment, identifier: messageIdentifier)
            else { throw ServerAPIError.messageNotFound }
            guard message.state == .approved else { throw ServerAPIError.messageNotApproved }
            for identifier in message.imageIdentifiers {
                let image = try await tx.retentionImage(appId: app, environment: environment, identifier: identifier)
                guard image?.state == .approved else { throw ServerAPIError.imageNotApproved }
            }
            try await tx.setRetentionDefaultMessage(
                appId: app, environment: environment, productId: productId, locale: locale,
                messageIdentifier: messageIdentifier, at: now)
        }
    }

    func defaultMessage(productId: String, locale: String, caller: ServerAPICaller) async throws -> String {
        let found = try await database.transaction { tx in
            try await Self.requireAutoRenewable(productId, appId: caller.app.id, in: tx)
            return try await tx.retentionDefaultMessage(
                appId: caller.app.id, environment: caller.environment, productId: productId, locale: locale)
        }
        guard let found else { throw ServerAPIError.defaultMessageNotFound }
        return found
    }

    func deleteDefaultMessage(productId: String, locale: String, caller: ServerAPICaller) async throws {
        let deleted = try await database.transaction { tx in
            try await Self.requireAutoRenewable(productId, appId: caller.app.id, in: tx)
            return try await tx.deleteRetentionDefaultMessage(
                appId: caller.app.id, environment: caller.environment, productId: productId, locale: locale)
        }
        guard deleted else { throw ServerAPIError.defaultMessageNotFound }
    }

    /// `4000023` unless `productId` is an auto-renewable of the app.
    private static func requireAutoRenewable(_ productId: String, appId: App.ID, in tx: any StorageTransaction)
        async throws
    {
        guard let product = try await tx.product(appId: appId, productId: productId), product.deletedAt == nil,
            product.type == .autoRenewable
        else { throw ServerAPIError.invalidProductId }
    }

    // MARK: - Real-time URL

    /// Configure Realtime URL: `url` passed its checks (https, at most 256 characters); a production URL needs a
    /// performance test of the sandbox endpoint that passed.
    func configureRealtimeURL(_ url: String, caller: ServerAPICaller) async throws {
        if let refusal = policy.refusal(toSet: url) { throw ServerAPIError.badRequestRealtimeURL(refusal) }
        let environment = caller.environment
        let now = clocks.now(environment)
        try await database.transaction { tx in
            if environment == .production {
                guard try await Self.performanceTestPassed(appId: caller.app.id, in: tx) else {
                    throw ServerAPIError.forbiddenNoPassingTest
                }
            }
            try await tx.setRetentionRealtimeURL(url, appId: caller.app.id, environment: environment, at: now)
        }
    }

    func realtimeURL(caller: ServerAPICaller) async throws -> String {
        let url = try await database.transaction { tx in
            try await tx.retentionRealtimeURL(appId: caller.app.id, environment: caller.environment)
        }
        guard let url else { throw ServerAPIError.realtimeURLNotFound }
        return url
    }

    func deleteRealtimeURL(caller: ServerAPICaller) async throws {
        let environment = caller.environment
        let now = clocks.now(environment)
        try await database.transaction { tx in
            guard try await tx.retentionRealtimeURL(appId: caller.app.id, environment: environment) != nil else {
                throw ServerAPIError.realtimeURLNotFound
            }
            try await tx.setRetentionRealtimeURL(nil, appId: caller.app.id, environment: environment, at: now)
        }
    }

    /// Whether a performance test of the app's sandbox endpoint passed.
    static func performanceTestPassed(appId: App.ID, in tx: any StorageTransaction) async throws -> Bool {
        try await tx.retentionPerformanceTests(appId: appId, environment: .sandbox, limit: 1000)
            .contains { $0.state == PerformanceTestState.pass.rawValue }
    }
}
