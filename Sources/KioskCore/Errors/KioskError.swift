/// An error a user can act on: what was wrong, where, and what to do.
///
/// The HTTP layer turns it into a 4xx JSON body `{"error": {"code", "message", "field", "fix"}}`; the CLI prints
/// it readably. `code` is stable and machine-readable; `message` and `fix` are for people.
public struct KioskError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The class of failure, which decides the HTTP status.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// 400: the request is malformed or a value is invalid.
        case invalidInput
        /// 401: no or wrong credentials.
        case unauthorized
        /// 403: the credentials are fine but not for this.
        case forbidden
        /// 404: the named thing does not exist.
        case notFound
        /// 409: the request conflicts with what exists (duplicates, reused ids, wrong state).
        case conflict
        /// 413: the request body is larger than the route accepts.
        case tooLarge
        /// 503: the store cannot serve this now (e.g. a failure the sandbox test controls armed); retry later.
        case unavailable
    }

    /// Stable and machine-readable (`duplicate_bundle_id` on the wire); every code is listed in ``ErrorCode``.
    public var code: ErrorCode
    /// The class of failure, which the code decides.
    public var kind: Kind { code.kind }
    public var message: String
    /// Where the problem is: a JSON path (`products[2].localizations`), a field name, or a file line.
    public var field: String?
    /// What to do about it.
    public var fix: String?
    /// The `SKError.Code` raw value a StoreKit app sees for this failure, on the client protocol.
    public var storeKitCode: Int?
    /// The product the problem concerns, when it concerns one (a catalog file's entry).
    public var productId: String?
    /// Further problems the same request found (a catalog file is checked whole, and every problem reported at
    /// once); this error is the first.
    public var additional: [KioskError] = []

    /// This error followed by the `additional` ones.
    public var all: [KioskError] {
        var first = self
        first.additional = []
        return [first] + additional
    }

    public init(
        _ code: ErrorCode, _ message: String, field: String? = nil, fix: String? = nil, storeKitCode: Int? = nil
    ) {
        self.code = code
        self.message = message
        self.field = field
        self.fix = fix
        self.storeKitCode = storeKitCode
    }

    public var description: String {
        var text = productId.map { "\($0): \(message)" } ?? message
        if let field { text += " (at \(field))" }
        if let fix { text += " Fix: \(fix)" }
        return text
    }

    /// The first of `errors`, carrying the others as `additional`; nil when there are none.
    public static func combined(_ errors: [KioskError]) -> KioskError? {
        guard var first = errors.first else { return nil }
        first.additional = first.additional + errors.dropFirst().flatMap(\.all)
        return first
    }
}

/// An error of a lower layer that may stand for something the client can act on (a unique value already taken,
/// say): the HTTP layer answers it with that ``KioskError``, and as the server's own failure (500) when it is nil.
public protocol KioskErrorConvertible: Error {
    var kioskError: KioskError? { get }
}
