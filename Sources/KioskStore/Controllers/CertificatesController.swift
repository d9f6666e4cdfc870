import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskProtocol
import KioskSigning

/// `/admin/v1/certificates` and `/admin/v1/apps/{bundleId}/signed-test-notification`: the roots merchants must
/// trust, revocations of the chains' intermediate and leaf, and a signed payload to check a verifier against them.
struct CertificatesController {
    let catalog: CatalogService
    let signing: StoreSigning
    let status: CertificateStatusService
    let clock: any KioskClock

    func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.get(AdminRoutes.rootCertificate.routerPath) { request, context in
            let environment = try request.environment(context.parameters.get("environment"))
            let identity = signing.identity(environment)
            var headers = HTTPFields()
            switch request.uri.queryParameters.get("format")?.lowercased() ?? "pem" {
            case "pem":
                headers[.contentType] = "application/x-pem-file"
                return Response(
                    status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: identity.rootPEM)))
            case "der":
                headers[.contentType] = "application/pkix-cert"
                return Response(
                    status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: identity.rootDER)))
            case let other:
                throw KioskError(
                    .invalidFormat, "Unknown certificate format '\(other)'.", field: "format",
                    fix: "Use 'pem' or 'der'.")
            }
        }
        // Revokes the leaf or intermediate; the OCSP responder answers `revoked` from then on. Idempotent.
        group.post(AdminRoutes.certificateRevocations.routerPath) { request, context in
            let environment = try request.environment(context.parameters.get("environment"))
            let body = try await request.decodeJSON(as: RevocationBody.self, context: context)
            let (revocation, created) = try await status.revoke(
                body.certificate, environment: environment, reason: body.reason)
            return EditedResponse(status: created ? .created : .ok, response: RevocationResource(revocation))
        }
        group.get(AdminRoutes.certificateRevocations.routerPath) { request, context in
            let environment = try request.environment(context.parameters.get("environment"))
            return RevocationList(
                revocations: try await status.revocations(environment: environment).map(RevocationResource.init))
        }
        // A signed TEST notification, as Apple's "Request a Test Notification" makes; nothing is delivered.
        group.post(AdminRoutes.signedTestNotification.routerPath) { request, context in
            let environment = try request.environment(request.uri.queryParameters.get("environment"))
            let app = try await catalog.app(bundleId: try context.parameters.require("bundleId"))
            let payload = TestNotificationPayload(
                notificationUUID: UUID().uuidString.lowercased(),
                signedDate: clock.now().millisecondsSince1970,
                data: .init(appAppleId: app.id, bundleId: app.bundleId, environment: environment.appleName))
            return SignedTestNotification(
                environment: environment, notificationUUID: payload.notificationUUID,
                signedPayload: try signing.sign(payload, environment: environment))
        }
    }
}

/// The decoded payload of a V2 `TEST` notification (Apple's `ResponseBodyV2DecodedPayload`).
struct TestNotificationPayload: Codable, Sendable {
    struct Data: Codable, Sendable {
        var appAppleId: Int64
        var bundleId: String
        var environment: String
    }

    var notificationType = NotificationType.test
    var notificationUUID: String
    var version = "2.0"
    var signedDate: Int64
    var data: Data
}

struct SignedTestNotification: ResponseCodable {
    var environment: StoreEnvironment
    var notificationUUID: String
    var signedPayload: String
}

/// `POST /admin/v1/certificates/{environment}/revocations`.
struct RevocationBody: Codable {
    /// `leaf` or `intermediate`.
    var certificate: CertificateRevocation.Role
    /// A CRLReason code, 0…10 except 7.
    var reason: Int?
}

/// A revoked certificate as the admin API shows it.
struct RevocationResource: ResponseCodable {
    var environment: StoreEnvironment
    var certificate: CertificateRevocation.Role
    /// Upper-case hex of the serial number.
    var serialNumber: String
    var revokedAt: Date
    var reason: Int?

    init(_ revocation: CertificateRevocation) {
        environment = revocation.environment
        certificate = revocation.role
        serialNumber = revocation.serialNumber
        revokedAt = revocation.revokedAt
        reason = revocation.reason
    }
}

struct RevocationList: ResponseCodable {
    var revocations: [RevocationResource]
}
