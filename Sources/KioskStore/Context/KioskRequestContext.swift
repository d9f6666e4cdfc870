import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import NIOCore

/// The request context of every Kiosk route: ISO 8601 JSON, and the body limit of the route's family.
public struct KioskRequestContext: RequestContext, BodyLimitedContext {
    public var coreContext: CoreRequestContextStorage
    /// The signed-in client, set by `ClientAuthMiddleware` on client-protocol routes.
    public var client: ClientSession?
    /// The App Store Server API caller, set by `ServerAPIAuthMiddleware` on `/inApps` routes.
    public var serverAPI: ServerAPICaller?
    /// The App Store Connect API's team key, set by `ConnectAPIAuthMiddleware` on `/v1` routes.
    public var teamKey: TeamAPIKey?
    /// The console operator, set by `ConsoleAuthMiddleware` on `/console` pages.
    var consoleSession: ConsoleSession?
    /// The largest body the route reads: ``StoreBodyLimits/other`` unless the route's family sets its own.
    public var maxUploadSize = StoreBodyLimits.other
    /// The connection the request came on (the updates stream ends when its client hangs up).
    public let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    public var requestDecoder: JSONDecoder { .kiosk }
    public var responseEncoder: JSONEncoder { .kiosk }
}

/// The largest request body each family of the store's routes reads, in bytes. A larger body is refused before it
/// is read whole: 413 `body_too_large` on Kiosk's own APIs, Apple's answer on Apple's.
public enum StoreBodyLimits {
    /// `POST /admin/v1/apps/{bundleId}/catalog`, a whole catalog or `.storekit` file: 16 MiB.
    public static let catalogImport = 16 * 1_048_576
    /// The rest of the console API (`/admin/v1`): 1 MiB.
    public static let console = 1_048_576
    /// `verifyReceipt`, a base64 app receipt: 8 MiB; a larger body answers HTTP 200 with status 21000.
    public static let verifyReceipt = 8 * 1_048_576
    /// Everything else: the client protocol, the sandbox test controls, the App Store Server API (a larger body
    /// answers `4000000`), OCSP and operations: 64 KiB.
    public static let other = 64 * 1024
}
