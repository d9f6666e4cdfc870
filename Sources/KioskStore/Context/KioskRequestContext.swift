import Foundation
import Hummingbird
import KioskHTTP

/// The request context of every Kiosk route: ISO 8601 JSON, and room for large catalog uploads.
public struct KioskRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The signed-in client, set by `ClientAuthMiddleware` on client-protocol routes.
    public var client: ClientSession?
    /// The App Store Server API caller, set by `ServerAPIAuthMiddleware` on `/inApps` routes.
    public var serverAPI: ServerAPICaller?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }

    /// Catalog files can be large; everything else is small.
    public var maxUploadSize: Int { 16 * 1024 * 1024 }

    public var requestDecoder: JSONDecoder { .kiosk }
    public var responseEncoder: JSONEncoder { .kiosk }
}
