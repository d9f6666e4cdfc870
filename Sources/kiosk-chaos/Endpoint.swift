import AsyncHTTPClient
import Foundation
import KioskHTTPClient
import NIOCore
import NIOHTTP1

/// A server the campaign talks to itself (the store's console and test controls, the merchant's admin routes),
/// with its bearer token.
struct Endpoint: Sendable {
    let base: String
    let token: String
    let http: HTTPClient

    /// One answer: its status and body.
    struct Answer: Sendable {
        var status: Int
        var body: Data
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Sends a request (a JSON body when `json` is given) and collects the answer; throws only when no answer came.
    func send(_ method: HTTPMethod, _ path: String, json: [String: Any]? = nil) async throws -> Answer {
        // A connection of its own per request: a server killed and started again leaves no pooled connection
        // behind that a later request could fail on. Generous deadline: a clock advance renews and notifies
        // before it answers, on a loaded machine.
        let answer = try await JSONHTTPClient(http: http).send(
            method, base + path, bearer: token, headers: ["Connection": "close"],
            json: try json.map { try JSONSerialization.data(withJSONObject: $0) }, timeout: .seconds(300),
            limit: 256 << 20)
        return Answer(status: Int(answer.status.code), body: answer.body)
    }

    /// ``send(_:_:json:)`` that requires a 2xx answer and decodes it as `T`.
    func call<T: Decodable>(
        _ method: HTTPMethod, _ path: String, json: [String: Any]? = nil, as type: T.Type
    ) async throws -> T {
        let answer = try await send(method, path, json: json)
        guard (200..<300).contains(answer.status) else {
            throw ChaosError("\(method) \(base)\(path) answered \(answer.status): \(answer.text.prefix(500))")
        }
        do {
            return try JSONDecoder().decode(T.self, from: answer.body)
        } catch {
            throw ChaosError("\(method) \(base)\(path): unexpected answer (\(error)): \(answer.text.prefix(500))")
        }
    }

    /// ``send(_:_:json:)`` that requires a 2xx answer.
    func perform(_ method: HTTPMethod, _ path: String, json: [String: Any]? = nil) async throws {
        let answer = try await send(method, path, json: json)
        guard (200..<300).contains(answer.status) else {
            throw ChaosError("\(method) \(base)\(path) answered \(answer.status): \(answer.text.prefix(500))")
        }
    }
}

/// Something that went wrong in the campaign itself (not a violation of the system under test).
struct ChaosError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Any JSON body's value, decoded without caring what it is.
struct Ignored: Decodable {}
