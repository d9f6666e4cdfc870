import Foundation
import Hummingbird
import KioskCore
import KioskHTTP

/// An App Store Connect API error, answered in Apple's JSON:API envelope:
/// `{"errors": [{"id", "status", "code", "title", "detail"}]}` with `Content-Type: application/json`.
struct ConnectAPIError: Error, Sendable {
    var status: HTTPResponse.Status
    var code: String
    var title: String
    var detail: String
    /// What in the request it is about: `["pointer": "/data/attributes/name"]` or `["parameter": "limit"]`.
    var source: [String: String]? = nil

    /// Apple's 401 for a missing, badly signed or expired token.
    static let notAuthorized = ConnectAPIError(
        status: .unauthorized, code: "NOT_AUTHORIZED", title: "Authentication credentials are missing or invalid.",
        detail: "Provide a properly configured and signed bearer token, and make sure that it has not expired.")

    /// Apple's 403 for a key whose roles do not allow the request.
    static func forbidden(_ detail: String) -> ConnectAPIError {
        ConnectAPIError(
            status: .forbidden, code: "FORBIDDEN_ERROR", title: "This request is forbidden for security reasons",
            detail: detail)
    }

    /// A required `filter[…]` parameter is absent.
    static func missing(_ parameter: String) -> ConnectAPIError {
        ConnectAPIError(
            status: .badRequest, code: "PARAMETER_ERROR.REQUIRED", title: "A required parameter is missing.",
            detail: "The parameter '\(parameter)' is required.")
    }

    /// A parameter's value is not one the API accepts; `allowed` lists what is, when that is a short list, or
    /// `reason` says why.
    static func invalid(
        _ parameter: String, _ value: String, allowed: [String] = [], reason: String? = nil
    ) -> ConnectAPIError {
        let choices = allowed.isEmpty ? "" : " Allowed values: \(allowed.joined(separator: ", "))."
        return ConnectAPIError(
            status: .badRequest, code: "PARAMETER_ERROR.INVALID", title: "A parameter has an invalid value",
            detail: "'\(value.prefix(40))' is not a valid value for the parameter '\(parameter.prefix(60))'."
                + choices + (reason.map { " " + $0 } ?? ""),
            source: ["parameter": String(parameter.prefix(60))])
    }

    /// A request body that breaks the resource's rules, at `pointer` (`/data/attributes/name`).
    static func entity(_ code: String, _ detail: String, pointer: String? = nil) -> ConnectAPIError {
        ConnectAPIError(
            status: .conflict, code: code, title: "The provided entity is invalid", detail: detail,
            source: pointer.map { ["pointer": $0] })
    }

    /// The resource the path names does not exist (or is not one Kiosk has).
    static func notFound(_ type: String, _ id: String) -> ConnectAPIError {
        ConnectAPIError(
            status: .notFound, code: "NOT_FOUND", title: "The specified resource does not exist",
            detail: "There is no resource of type '\(type)' with id '\(id.prefix(80))'.")
    }

    /// No report for that period (none sold, or the period is not over).
    static func noReport(_ detail: String) -> ConnectAPIError {
        ConnectAPIError(
            status: .notFound, code: "NOT_FOUND", title: "The specified resource does not exist", detail: detail)
    }

    func response() -> Response {
        var error: [String: Any] = [
            "id": UUID().uuidString.lowercased(), "status": String(status.code), "code": code, "title": title,
            "detail": detail,
        ]
        if let source { error["source"] = source }
        let object: [String: Any] = ["errors": [error]]
        let body = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}

/// Answers every failure under `/v1` in Apple's envelope: ``ConnectAPIError`` as it is, anything the client got
/// wrong (an unknown path, a broken query) as its 4xx, anything else as 500 with the details only in the log.
struct ConnectAPIErrorMiddleware: RouterMiddleware {
    typealias Context = KioskRequestContext

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as ConnectAPIError {
            if error.status == .unauthorized {
                context.logger.info("App Store Connect API request refused", metadata: ["reason": "\(error.detail)"])
                return ConnectAPIError.notAuthorized.response()
            }
            return error.response()
        } catch let error as HTTPError where error.status.code < 500 {
            return ConnectAPIError(
                status: error.status, code: error.status == .notFound ? "NOT_FOUND" : "PARAMETER_ERROR.INVALID",
                title: error.status == .notFound ? "The specified resource does not exist" : "The request is invalid",
                detail: error.body ?? "The request is invalid."
            ).response()
        } catch let error as KioskError where error.kind == .invalidInput || error.kind == .tooLarge {
            return ConnectAPIError(
                status: .badRequest, code: "PARAMETER_ERROR.INVALID", title: "A parameter has an invalid value",
                detail: error.message
            ).response()
        } catch {
            context.logger.error(
                "App Store Connect API request failed",
                metadata: ["error": "\(error)", "path": "\(request.uri.path)", "method": "\(request.method)"])
            return ConnectAPIError(
                status: .internalServerError, code: "UNEXPECTED_ERROR", title: "An unexpected error occurred.",
                detail: "An unexpected error occurred on the server side. If this issue continues, check the log."
            ).response()
        }
    }
}

/// Answers a request under `/v1` or `/v2` that no route takes (a resource Kiosk does not serve, or a method a path
/// does not have) as Apple answers for a resource it does not have: its error envelope, not Kiosk's own.
struct ConnectAPIUnservedMiddleware: RouterMiddleware {
    typealias Context = KioskRequestContext

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let path = request.uri.path
        guard path.hasPrefix("/v1/") || path.hasPrefix("/v2/") else { return try await next(request, context) }
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound || error.status == .methodNotAllowed {
            let notFound = error.status == .notFound
            return ConnectAPIError(
                status: error.status, code: notFound ? "NOT_FOUND" : "METHOD_NOT_ALLOWED",
                title: notFound ? "The specified resource does not exist" : "The request method is not allowed.",
                detail: "Kiosk serves no \(request.method) \(path.prefix(120)). GET /app-store-connect-openapi.json "
                    + "lists the App Store Connect API operations it serves."
            ).response()
        }
    }
}
