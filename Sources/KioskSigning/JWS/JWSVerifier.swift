import Crypto
import ExtrasBase64
import Foundation
import KioskCore
import Synchronization
import X509

/// Verifies App Store-style signed data the way Apple's `SignedDataVerifier` does with online checks off.
///
/// The checks, in order: three base64url segments; a JSON header whose `alg` is exactly `ES256`, with no
/// `crit`; `x5c` of exactly three standard-base64 DER certificates; `x5c[0] ← x5c[1] ←` one of the trusted
/// roots under RFC 5280 at the validation time; the leaf and intermediate marker extensions, non-critical;
/// a P-256 leaf; the leaf's ES256 signature over `header.payload`.
///
/// The validation time is the payload's `signedDate` (ms), else its `receiptCreationDate` (ms), else the
/// clock's now, as Apple's verifiers choose it offline. So a payload signed while the leaf was valid stays
/// verifiable after the leaf expires.
///
/// ```swift
/// let verifier = JWSVerifier(rootCertificates: [identity.root], clock: clock)
/// if case .verified(_, let payloadJSON) = await verifier.verify(signedTransaction) { … }
/// ```
public struct JWSVerifier: Sendable {
    /// The roots a chain must lead to.
    public let rootCertificates: [Certificate]
    private let clock: any KioskClock
    private let validatedChains = ValidatedChainCache<String>()

    /// Creates a verifier trusting exactly these roots.
    ///
    /// - Parameters:
    ///   - rootCertificates: The trusted roots (for Kiosk, the exported root of one environment).
    ///   - clock: Supplies the validation time for payloads that carry no signing date.
    public init(rootCertificates: [Certificate], clock: any KioskClock = SystemClock()) {
        self.rootCertificates = rootCertificates
        self.clock = clock
    }

    /// Verifies a compact JWS at the payload's own signing date (see the type's documentation).
    ///
    /// - Parameter jws: `header.payload.signature`.
    /// - Returns: `.verified` with the header and the exact payload bytes, or `.invalid` with the reason.
    public func verify(_ jws: String) async -> JWSVerificationResult {
        await verify(jws) { payloadJSON throws(JWSVerificationFailure) in
            try Self.signingDate(ofPayload: payloadJSON) ?? clock.now()
        }
    }

    /// Verifies a compact JWS at a validation time of the caller's choosing, e.g. the wall clock,
    /// as Apple's verifiers do when online checks are on.
    ///
    /// - Parameters:
    ///   - jws: `header.payload.signature`.
    ///   - validationTime: Given the decoded payload bytes, the instant the chain must be valid at, or the reason
    ///     the payload cannot name one.
    /// - Returns: `.verified` with the header and the exact payload bytes, or `.invalid` with the reason.
    public func verify(
        _ jws: String, validationTime: ([UInt8]) throws(JWSVerificationFailure) -> Date
    ) async -> JWSVerificationResult {
        switch decode(jws) {
        case .failure(let failure):
            return .invalid(failure)
        case .success(let parts):
            let time: Date
            do {
                time = try validationTime(parts.payloadJSON)
            } catch {
                return .invalid(error)
            }
            switch await leafKey(x5c: parts.x5c, at: time) {
            case .failure(let failure):
                return .invalid(failure)
            case .success(let leafKey):
                guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: parts.signature),
                    leafKey.isValidSignature(signature, for: parts.signingInput)
                else {
                    return .invalid(.invalidSignature)
                }
                return .verified(header: parts.header, payloadJSON: parts.payloadJSON)
            }
        }
    }

    /// The instant Apple's offline verifiers validate a payload's chain at: `signedDate`, else
    /// `receiptCreationDate`, each in milliseconds as a JSON number or a string of digits. Nothing else of the
    /// payload is read before the chain and the signature are checked.
    ///
    /// - Returns: `nil` when the payload carries neither date (or only `null`).
    /// - Throws: ``JWSVerificationFailure/malformed(_:)`` when the payload is not a JSON object, or a date is not
    ///   a millisecond count in `Date.kioskRange` (NaN, infinities, huge or negative numbers are never handed on).
    public static func signingDate(ofPayload payloadJSON: [UInt8]) throws(JWSVerificationFailure) -> Date? {
        do {
            let dates = try JSONDecoder().decode(PayloadDates.self, from: Data(payloadJSON))
            return dates.signedDate ?? dates.receiptCreationDate
        } catch let error as PayloadDates.OutOfRange {
            throw .malformed(
                "\(error.field) is not a number of milliseconds since 1970 from \(Date.kioskRangeText)")
        } catch {
            throw .malformed("the payload is not a JSON object")
        }
    }

    private struct DecodedJWS {
        var header: JWSHeader
        var payloadJSON: [UInt8]
        var signature: [UInt8]
        var signingInput: [UInt8]
        /// Exactly three entries; parsed only when the chain is not among the validated ones.
        var x5c: [String]
    }

    /// The leaf key of `x5c` if its chain validates at `time`: from the chains this verifier already validated
    /// when `time` lies within that path's validity, else by parsing and validating the certificates now.
    private func leafKey(x5c: [String], at time: Date) async -> Result<P256.Signing.PublicKey, JWSVerificationFailure> {
        let cacheKey = x5c.joined(separator: ",")
        if let known = validatedChains.chain(for: cacheKey, at: time) { return .success(known.leafKey) }
        var certificates: [Certificate] = []
        for (index, entry) in x5c.enumerated() {
            guard let der = try? Base64.decode(string: entry), let certificate = try? Certificate(derEncoded: der)
            else {
                return .failure(.invalidCertificate("x5c[\(index)] is not standard base64 of a DER certificate"))
            }
            certificates.append(certificate)
        }
        let chain = await ChainValidator.validate(
            leaf: certificates[0], intermediate: certificates[1], roots: rootCertificates, at: time)
        return chain.map { validated in
            validatedChains.insert(validated, for: cacheKey)
            return validated.leafKey
        }
    }

    private func decode(_ jws: String) -> Result<DecodedJWS, JWSVerificationFailure> {
        let bytes = Array(jws.utf8)
        let segments = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard segments.count == 3 else {
            return .failure(.malformed("expected 3 dot-separated segments, found \(segments.count)"))
        }
        let urlOptions: Base64.DecodingOptions = [.base64UrlAlphabet, .omitPaddingCharacter]
        guard let headerJSON = try? Base64.decode(bytes: segments[0], options: urlOptions),
            let payloadJSON = try? Base64.decode(bytes: segments[1], options: urlOptions),
            let signature = try? Base64.decode(bytes: segments[2], options: urlOptions)
        else {
            return .failure(.malformed("a segment is not base64url"))
        }
        guard let header = try? JSONDecoder().decode(JWSHeader.self, from: Data(headerJSON)) else {
            return .failure(.malformed("the header is not a JSON object with a string alg"))
        }
        guard header.alg == "ES256" else { return .failure(.unsupportedAlgorithm(header.alg)) }
        if let crit = header.crit {
            return .failure(.unsupportedAlgorithm("ES256 with crit \(crit)"))
        }
        guard let x5c = header.x5c, x5c.count == 3 else {
            return .failure(.invalidChainLength(header.x5c?.count ?? 0))
        }
        // The payload must be a JSON object, as PyJWT requires.
        guard (try? JSONDecoder().decode(JSONObjectProbe.self, from: Data(payloadJSON))) != nil else {
            return .failure(.malformed("the payload is not a JSON object"))
        }
        return .success(
            DecodedJWS(
                header: header,
                payloadJSON: payloadJSON,
                signature: signature,
                signingInput: Array(bytes[..<segments[1].endIndex]),
                x5c: x5c
            )
        )
    }
}

/// Decodes only from a JSON object; used to reject arrays, strings and numbers as payloads.
private struct JSONObjectProbe: Decodable {
    init(from decoder: any Decoder) throws {
        _ = try decoder.container(keyedBy: AnyKey.self)
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

/// The two dates Apple's verifiers read from a payload to choose the validation time, checked.
private struct PayloadDates: Decodable {
    var signedDate: Date?
    var receiptCreationDate: Date?

    /// A date field that is present but not milliseconds in `Date.kioskRange`.
    struct OutOfRange: Error {
        var field: String
    }

    private enum Field: String, CodingKey {
        case signedDate, receiptCreationDate
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Field.self)
        signedDate = try Self.date(container, .signedDate)
        receiptCreationDate = try Self.date(container, .receiptCreationDate)
    }

    private static func date(_ container: KeyedDecodingContainer<Field>, _ field: Field) throws -> Date? {
        guard container.contains(field), try !container.decodeNil(forKey: field) else { return nil }
        let date =
            if let number = try? container.decode(Double.self, forKey: field) {
                Date(checkedMillisecondsSince1970: number)
            } else {
                (try? container.decode(String.self, forKey: field)).flatMap { Date(checkedMillisecondsSince1970: $0) }
            }
        guard let date else { throw OutOfRange(field: field.rawValue) }
        return date
    }
}
