import Crypto
import Foundation
import SwiftASN1
import X509

/// The messages of the Online Certificate Status Protocol (RFC 6960 §4), as far as Kiosk's responder and
/// client need them, each decodable from and encodable to DER with SwiftASN1.
///
/// swift-certificates has the same types but keeps them internal, and its client hashes CertIDs with SHA-1 only,
/// while Apple's verifiers send SHA-256; so Kiosk carries this small codec of its own. What is not used is left
/// out: requests are never signed (`optionalSignature` is refused), `requestorName` is skipped, and responses
/// never embed delegated responder certificates (the issuer key signs).
public enum OCSP {
    /// `id-pkix-ocsp-basic`, the only response type (RFC 6960 §4.2.1).
    public static let basicResponseOID: ASN1ObjectIdentifier = [1, 3, 6, 1, 5, 5, 7, 48, 1, 1]
    /// `id-pkix-ocsp-nonce`: an extension a request may carry and a response echoes (RFC 8954).
    public static let nonceOID: ASN1ObjectIdentifier = [1, 3, 6, 1, 5, 5, 7, 48, 1, 2]
    /// `id-sha1`, the CertID hash RFC 6960 names; OpenSSL and swift-certificates send it.
    public static let sha1OID: ASN1ObjectIdentifier = [1, 3, 14, 3, 2, 26]
    /// `id-sha256`, the CertID hash Apple's verifiers send.
    public static let sha256OID: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 1]
    /// `ecdsa-with-SHA256`.
    public static let ecdsaWithSHA256OID: ASN1ObjectIdentifier = [1, 2, 840, 10045, 4, 3, 2]
    /// `ecdsa-with-SHA384`.
    public static let ecdsaWithSHA384OID: ASN1ObjectIdentifier = [1, 2, 840, 10045, 4, 3, 3]

    /// `AlgorithmIdentifier ::= SEQUENCE { algorithm OID, parameters ANY OPTIONAL }`. Parameters are kept raw;
    /// the hashes and ECDSA algorithms used here have none (hashes may carry NULL).
    public struct AlgorithmIdentifier: DERImplicitlyTaggable, Sendable, Hashable {
        public static var defaultIdentifier: ASN1Identifier { .sequence }
        public var algorithm: ASN1ObjectIdentifier
        /// The parameters' DER bytes, or `nil` when absent.
        public var parameters: [UInt8]?

        public init(algorithm: ASN1ObjectIdentifier, parameters: [UInt8]? = nil) {
            self.algorithm = algorithm
            self.parameters = parameters
        }

        public init(derEncoded rootNode: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
            self = try DER.sequence(rootNode, identifier: identifier) { nodes in
                let algorithm = try ASN1ObjectIdentifier(derEncoded: &nodes)
                let parameters = nodes.next().map { Array($0.encodedBytes) }
                return AlgorithmIdentifier(algorithm: algorithm, parameters: parameters)
            }
        }

        public func serialize(into coder: inout DER.Serializer, withIdentifier identifier: ASN1Identifier) throws {
            try coder.appendConstructedNode(identifier: identifier) { coder in
                try coder.serialize(algorithm)
                if let parameters { coder.serializeRawBytes(parameters) }
            }
        }
    }

    /// `CertID`: which certificate a request asks about, named by its issuer's name and key hashes and its serial.
    public struct CertID: DERImplicitlyTaggable, Sendable, Hashable {
        public static var defaultIdentifier: ASN1Identifier { .sequence }
        public var hashAlgorithm: AlgorithmIdentifier
        /// The hash of the DER of the issuer's subject name.
        public var issuerNameHash: [UInt8]
        /// The hash of the issuer's public key bits (the BIT STRING's contents, without tag and length).
        public var issuerKeyHash: [UInt8]
        /// The serial number's INTEGER content bytes.
        public var serialNumber: [UInt8]

        public init(
            hashAlgorithm: AlgorithmIdentifier, issuerNameHash: [UInt8], issuerKeyHash: [UInt8], serialNumber: [UInt8]
        ) {
            self.hashAlgorithm = hashAlgorithm
            self.issuerNameHash = issuerNameHash
            self.issuerKeyHash = issuerKeyHash
            self.serialNumber = serialNumber
        }

        /// The CertID of `certificate`, issued by `issuer`, hashed with SHA-256 (`sha256: true`, Apple's choice) or SHA-1.
        public init(certificate: Certificate, issuer: Certificate, sha256: Bool = true) throws {
            let nameDER = try issuer.subject.derBytes
            let keyBits = issuer.publicKey.subjectPublicKeyInfoBytes
            self.init(
                hashAlgorithm: AlgorithmIdentifier(
                    algorithm: sha256 ? OCSP.sha256OID : OCSP.sha1OID, parameters: [0x05, 0x00]),
                issuerNameHash: sha256 ? Array(SHA256.hash(data: nameDER)) : Array(Insecure.SHA1.hash(data: nameDER)),
                issuerKeyHash: sha256 ? Array(SHA256.hash(data: keyBits)) : Array(Insecure.SHA1.hash(data: keyBits)),
                serialNumber: Array(certificate.serialNumber.bytes)
            )
        }

        public init(derEncoded rootNode: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
            self = try DER.sequence(rootNode, identifier: identifier) { nodes in
                CertID(
                    hashAlgorithm: try AlgorithmIdentifier(derEncoded: &nodes),
                    issuerNameHash: Array(try ASN1OctetString(derEncoded: &nodes).bytes),
                    issuerKeyHash: Array(try ASN1OctetString(derEncoded: &nodes).bytes),
                    serialNumber: Array(try ArraySlice<UInt8>(derEncoded: &nodes))
                )
            }
        }

        public func serialize(into coder: inout DER.Serializer, withIdentifier identifier: ASN1Identifier) throws {
            try coder.appendConstructedNode(identifier: identifier) { coder in
                try coder.serialize(hashAlgorithm)
                try coder.serialize(ASN1OctetString(contentBytes: issuerNameHash[...]))
                try coder.serialize(ASN1OctetString(contentBytes: issuerKeyHash[...]))
                try coder.serialize(serialNumber[...])
            }
        }
    }

    /// `OCSPRequest` with its `TBSRequest` flattened: the CertIDs asked about and the request extensions.
    ///
    /// ```
    /// OCSPRequest ::= SEQUENCE { tbsRequest TBSRequest, optionalSignature [0] EXPLICIT Signature OPTIONAL }
    /// TBSRequest  ::= SEQUENCE { version [0] EXPLICIT INTEGER DEFAULT v1, requestorName [1] EXPLICIT GeneralName OPTIONAL,
    ///                            requestList SEQUENCE OF Request, requestExtensions [2] EXPLICIT Extensions OPTIONAL }
    /// Request     ::= SEQUENCE { reqCert CertID, singleRequestExtensions [0] EXPLICIT Extensions OPTIONAL }
    /// ```
    public struct Request: DERImplicitlyTaggable, Sendable, Hashable {
        public static var defaultIdentifier: ASN1Identifier { .sequence }
        public var certIDs: [CertID]
        /// The `requestExtensions`, e.g. the nonce; empty when absent.
        public var extensions: [Certificate.Extension]

        public init(certIDs: [CertID], extensions: [Certificate.Extension] = []) {
            self.certIDs = certIDs
            self.extensions = extensions
        }

        /// The request's nonce extension, if it has one.
        public var nonce: Certificate.Extension? { extensions.first { $0.oid == OCSP.nonceOID } }

        public init(derEncoded rootNode: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
            self = try DER.sequence(rootNode, identifier: identifier) { nodes in
                let request = try DER.sequence(try nodes.next().orThrow("tbsRequest"), identifier: .sequence) { tbs in
                    let version = try DER.optionalExplicitlyTagged(&tbs, tagNumber: 0, tagClass: .contextSpecific) {
                        try Int(derEncoded: $0)
                    }
                    guard version == nil || version == 0 else {
                        throw ASN1Error.invalidASN1Object(reason: "OCSP request version \(version ?? 0) is not v1")
                    }
                    _ = try DER.optionalExplicitlyTagged(&tbs, tagNumber: 1, tagClass: .contextSpecific) { $0 }
                    let certIDs = try DER.sequence(of: SingleRequest.self, identifier: .sequence, nodes: &tbs).map(
                        \.certID)
                    let extensions = try DER.optionalExplicitlyTagged(&tbs, tagNumber: 2, tagClass: .contextSpecific) {
                        try DER.sequence(of: Certificate.Extension.self, identifier: .sequence, rootNode: $0)
                    }
                    return Request(certIDs: certIDs, extensions: extensions ?? [])
                }
                if nodes.next() != nil {
                    throw ASN1Error.invalidASN1Object(reason: "signed OCSP requests are not supported")
                }
                return request
            }
        }

        public func serialize(into coder: inout DER.Serializer, withIdentifier identifier: ASN1Identifier) throws {
            try coder.appendConstructedNode(identifier: identifier) { coder in
                try coder.appendConstructedNode(identifier: .sequence) { coder in
                    try coder.serializeSequenceOf(certIDs.map(SingleRequest.init))
                    if !extensions.isEmpty {
                        try coder.serialize(explicitlyTaggedWithTagNumber: 2, tagClass: .contextSpecific) { coder in
                            try coder.serializeSequenceOf(extensions)
                        }
                    }
                }
            }
        }

        private struct SingleRequest: DERImplicitlyTaggable {
            static var defaultIdentifier: ASN1Identifier { .sequence }
            var certID: CertID

            init(certID: CertID) { self.certID = certID }

            init(derEncoded rootNode: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
                self = try DER.sequence(rootNode, identifier: identifier) { nodes in
                    let certID = try CertID(derEncoded: &nodes)
                    _ = try DER.optionalExplicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) { $0 }
                    return SingleRequest(certID: certID)
                }
            }

            func serialize(into coder: inout DER.Serializer, withIdentifier identifier: ASN1Identifier) throws {
                try coder.appendConstructedNode(identifier: identifier) { coder in try coder.serialize(certID) }
            }
        }
    }

    /// `OCSPResponseStatus ::= ENUMERATED`.
    public enum ResponseStatus: Int, Sendable, Hashable {
        case successful = 0
        case malformedRequest = 1
        case internalError = 2
        case tryLater = 3
        case sigRequired = 5
        case unauthorized = 6
    }

    /// `CertStatus ::= CHOICE { good [0] IMPLICIT NULL, revoked [1] IMPLICIT RevokedInfo, unknown [2] IMPLICIT NULL }`.
    public enum CertStatus: Sendable, Hashable {
        case good
        /// `RevokedInfo ::= SEQUENCE { revocationTime GeneralizedTime, revocationReason [0] EXPLICIT CRLReason OPTIONAL }`.
        case revoked(at: Date, reason: Int?)
        case unknown
    }

    /// `SingleResponse ::= SEQUENCE { certID, certStatus, thisUpdate GeneralizedTime,
    /// nextUpdate [0] EXPLICIT GeneralizedTime OPTIONAL, singleExtensions [1] EXPLICIT Extensions OPTIONAL }`.
    public struct SingleResponse: DERImplicitlyTaggable, Sendable, Hashable {
        public static var defaultIdentifier: ASN1Identifier { .sequence }
        public var certID: CertID
        public var status: CertStatus
        public var thisUpdate: Date
        public var nextUpdate: Date?

        public init(certID: CertID, status: CertStatus, thisUpdate: Date, nextUpdate: Date?) {
            self.certID = certID
            self.status = status
            self.thisUpdate = thisUpdate
            self.nextUpdate = nextUpdate
        }

        public init(derEncoded rootNode: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
            self = try DER.sequence(rootNode, identifier: identifier) { nodes in
                let certID = try CertID(derEncoded: &nodes)
                let statusNode = try nodes.next().orThrow("certStatus")
                let status: CertStatus
                switch statusNode.identifier {
                case ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific): status = .good
                case ASN1Identifier(tagWithNumber: 2, tagClass: .contextSpecific): status = .unknown
                case ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific):
                    status = try DER.sequence(statusNode, identifier: statusNode.identifier) { info in
                        let time = try GeneralizedTime(derEncoded: &info)
                        let reason = try DER.optionalExplicitlyTagged(&info, tagNumber: 0, tagClass: .contextSpecific) {
                            try Int(derEncoded: $0, withIdentifier: .enumerated)
                        }
                        return .revoked(at: Date(time), reason: reason)
                    }
                default:
                    throw ASN1Error.unexpectedFieldType(statusNode.identifier)
                }
                let thisUpdate = Date(try GeneralizedTime(derEncoded: &nodes))
                let nextUpdate = try DER.optionalExplicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) {
                    Date(try GeneralizedTime(derEncoded: $0))
                }
                _ = try DER.optionalExplicitlyTagged(&nodes, tagNumber: 1, tagClass: .contextSpecific) { $0 }
                return SingleResponse(certID: certID, status: status, thisUpdate: thisUpdate, nextUpdate: nextUpdate)
            }
        }

        public func serialize(into coder: inout DER.Serializer, withIdentifier identifier: ASN1Identifier) throws {
            try coder.appendConstructedNode(identifier: identifier) { coder in
                try coder.serialize(certID)
                switch status {
                case .good:
                    ASN1Null().serialize(
                        into: &coder, withIdentifier: ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific))
                case .unknown:
                    ASN1Null().serialize(
                        into: &coder, withIdentifier: ASN1Identifier(tagWithNumber: 2, tagClass: .contextSpecific))
                case .revoked(let time, let reason):
                    try coder.appendConstructedNode(
                        identifier: ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific)
                    ) {
                        coder in
                        try coder.serialize(try GeneralizedTime(time))
                        if let reason {
                            try coder.serialize(explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific) { coder in
                                try reason.serialize(into: &coder, withIdentifier: .enumerated)
                            }
                        }
                    }
                }
                try coder.serialize(try GeneralizedTime(thisUpdate))
                if let nextUpdate {
                    try coder.serialize(
                        try GeneralizedTime(nextUpdate), explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific)
                }
            }
        }
    }

    /// `ResponderID ::= CHOICE { byName [1] EXPLICIT Name, byKey [2] EXPLICIT KeyHash }`; `KeyHash` is the SHA-1 of
    /// the responder's public key bits. Kiosk answers byKey, the only form Apple's Python verifier matches.
    public enum ResponderID: Sendable, Hashable {
        case byName(DistinguishedName)
        case byKey([UInt8])

        /// The byKey id of a certificate's key.
        public static func byKey(of certificate: Certificate) -> ResponderID {
            .byKey(Array(Insecure.SHA1.hash(data: certificate.publicKey.subjectPublicKeyInfoBytes)))
        }
    }

    /// `ResponseData ::= SEQUENCE { version [0] EXPLICIT DEFAULT v1, responderID, producedAt GeneralizedTime,
    /// responses SEQUENCE OF SingleResponse, responseExtensions [1] EXPLICIT Extensions OPTIONAL }`.
    public struct ResponseData: DERImplicitlyTaggable, Sendable, Hashable {
        public static var defaultIdentifier: ASN1Identifier { .sequence }
        public var responderID: ResponderID
        public var producedAt: Date
        public var responses: [SingleResponse]
        /// The `responseExtensions`, e.g. the echoed nonce; empty when absent.
        public var extensions: [Certificate.Extension]

        public init(
            responderID: ResponderID, producedAt: Date, responses: [SingleResponse], extensions: [Certificate.Extension]
        ) {
            self.responderID = responderID
            self.producedAt = producedAt
            self.responses = responses
            self.extensions = extensions
        }

        public init(derEncoded rootNode: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
            self = try DER.sequence(rootNode, identifier: identifier) { nodes in
                let version = try DER.optionalExplicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) {
                    try Int(derEncoded: $0)
                }
                guard version == nil || version == 0 else {
                    throw ASN1Error.invalidASN1Object(reason: "OCSP response version \(version ?? 0) is not v1")
                }
                let idNode = try nodes.next().orThrow("responderID")
                let responderID: ResponderID
                switch idNode.identifier {
                case ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific):
                    responderID = .byName(
                        try DER.explicitlyTagged(idNode, tagNumber: 1, tagClass: .contextSpecific) {
                            try DistinguishedName(derEncoded: $0)
                        })
                case ASN1Identifier(tagWithNumber: 2, tagClass: .contextSpecific):
                    responderID = .byKey(
                        try DER.explicitlyTagged(idNode, tagNumber: 2, tagClass: .contextSpecific) {
                            Array(try ASN1OctetString(derEncoded: $0).bytes)
                        })
                default:
                    throw ASN1Error.unexpectedFieldType(idNode.identifier)
                }
                let producedAt = Date(try GeneralizedTime(derEncoded: &nodes))
                let responses = try DER.sequence(of: SingleResponse.self, identifier: .sequence, nodes: &nodes)
                let extensions = try DER.optionalExplicitlyTagged(&nodes, tagNumber: 1, tagClass: .contextSpecific) {
                    try DER.sequence(of: Certificate.Extension.self, identifier: .sequence, rootNode: $0)
                }
                return ResponseData(
                    responderID: responderID, producedAt: producedAt, responses: responses,
                    extensions: extensions ?? [])
            }
        }

        public func serialize(into coder: inout DER.Serializer, withIdentifier identifier: ASN1Identifier) throws {
            try coder.appendConstructedNode(identifier: identifier) { coder in
                switch responderID {
                case .byName(let name):
                    try coder.serialize(name, explicitlyTaggedWithTagNumber: 1, tagClass: .contextSpecific)
                case .byKey(let hash):
                    try coder.serialize(
                        ASN1OctetString(contentBytes: hash[...]), explicitlyTaggedWithTagNumber: 2,
                        tagClass: .contextSpecific)
                }
                try coder.serialize(try GeneralizedTime(producedAt))
                try coder.serializeSequenceOf(responses)
                if !extensions.isEmpty {
                    try coder.serialize(explicitlyTaggedWithTagNumber: 1, tagClass: .contextSpecific) { coder in
                        try coder.serializeSequenceOf(extensions)
                    }
                }
            }
        }
    }

    /// `BasicOCSPResponse ::= SEQUENCE { tbsResponseData ResponseData, signatureAlgorithm AlgorithmIdentifier,
    /// signature BIT STRING, certs [0] EXPLICIT SEQUENCE OF Certificate OPTIONAL }`.
    public struct BasicResponse: DERImplicitlyTaggable, Sendable, Hashable {
        public static var defaultIdentifier: ASN1Identifier { .sequence }
        public var responseData: ResponseData
        /// The exact DER of `tbsResponseData`, the bytes the signature covers.
        public var responseDataDER: [UInt8]
        public var signatureAlgorithm: AlgorithmIdentifier
        /// The signature; for ECDSA, a DER `Ecdsa-Sig-Value`.
        public var signature: [UInt8]

        /// Signs `responseData` with a CA's P-384 key, ecdsa-with-SHA384 (the algorithm of Kiosk's and Apple's CAs).
        public init(signing responseData: ResponseData, with key: P384.Signing.PrivateKey) throws {
            let tbs = try responseData.derBytes
            self.responseData = responseData
            self.responseDataDER = tbs
            signatureAlgorithm = AlgorithmIdentifier(algorithm: OCSP.ecdsaWithSHA384OID)
            signature = Array(try key.signature(for: SHA384.hash(data: tbs)).derRepresentation)
        }

        /// Whether the signature is `certificate`'s key's ECDSA signature over `tbsResponseData`.
        public func isSigned(by certificate: Certificate) -> Bool {
            switch signatureAlgorithm.algorithm {
            case OCSP.ecdsaWithSHA384OID:
                let digest = SHA384.hash(data: responseDataDER)
                if let key = P384.Signing.PublicKey(certificate.publicKey),
                    let signature = try? P384.Signing.ECDSASignature(derRepresentation: signature)
                {
                    return key.isValidSignature(signature, for: digest)
                }
                if let key = P256.Signing.PublicKey(certificate.publicKey),
                    let signature = try? P256.Signing.ECDSASignature(derRepresentation: signature)
                {
                    return key.isValidSignature(signature, for: digest)
                }
                return false
            case OCSP.ecdsaWithSHA256OID:
                let digest = SHA256.hash(data: responseDataDER)
                if let key = P256.Signing.PublicKey(certificate.publicKey),
                    let signature = try? P256.Signing.ECDSASignature(derRepresentation: signature)
                {
                    return key.isValidSignature(signature, for: digest)
                }
                if let key = P384.Signing.PublicKey(certificate.publicKey),
                    let signature = try? P384.Signing.ECDSASignature(derRepresentation: signature)
                {
                    return key.isValidSignature(signature, for: digest)
                }
                return false
            default:
                return false
            }
        }

        public init(derEncoded rootNode: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
            self = try DER.sequence(rootNode, identifier: identifier) { nodes in
                let dataNode = try nodes.next().orThrow("tbsResponseData")
                let responseData = try ResponseData(derEncoded: dataNode)
                let algorithm = try AlgorithmIdentifier(derEncoded: &nodes)
                let signature = try ASN1BitString(derEncoded: &nodes)
                _ = try DER.optionalExplicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) { $0 }
                return BasicResponse(
                    responseData: responseData, responseDataDER: Array(dataNode.encodedBytes),
                    signatureAlgorithm: algorithm, signature: Array(signature.bytes))
            }
        }

        private init(
            responseData: ResponseData, responseDataDER: [UInt8], signatureAlgorithm: AlgorithmIdentifier,
            signature: [UInt8]
        ) {
            self.responseData = responseData
            self.responseDataDER = responseDataDER
            self.signatureAlgorithm = signatureAlgorithm
            self.signature = signature
        }

        public func serialize(into coder: inout DER.Serializer, withIdentifier identifier: ASN1Identifier) throws {
            try coder.appendConstructedNode(identifier: identifier) { coder in
                coder.serializeRawBytes(responseDataDER)
                try coder.serialize(signatureAlgorithm)
                try coder.serialize(ASN1BitString(bytes: signature[...]))
            }
        }
    }

    /// `OCSPResponse ::= SEQUENCE { responseStatus ENUMERATED, responseBytes [0] EXPLICIT ResponseBytes OPTIONAL }`,
    /// `ResponseBytes ::= SEQUENCE { responseType OID, response OCTET STRING }` holding a ``BasicResponse``.
    public struct Response: DERImplicitlyTaggable, Sendable, Hashable {
        public static var defaultIdentifier: ASN1Identifier { .sequence }
        public var status: ResponseStatus
        /// Present exactly when `status` is `successful`.
        public var basic: BasicResponse?

        /// A successful response.
        public init(basic: BasicResponse) {
            self.status = .successful
            self.basic = basic
        }

        /// An error response (no response bytes), e.g. `malformedRequest` or `unauthorized`.
        public init(error status: ResponseStatus) {
            self.status = status
            self.basic = nil
        }

        public init(derEncoded rootNode: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
            self = try DER.sequence(rootNode, identifier: identifier) { nodes in
                let raw = try Int(derEncoded: &nodes, withIdentifier: .enumerated)
                guard let status = ResponseStatus(rawValue: raw) else {
                    throw ASN1Error.invalidASN1Object(reason: "unknown OCSP response status \(raw)")
                }
                let basic = try DER.optionalExplicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) { node in
                    try DER.sequence(node, identifier: .sequence) { bytes in
                        let type = try ASN1ObjectIdentifier(derEncoded: &bytes)
                        guard type == OCSP.basicResponseOID else {
                            throw ASN1Error.invalidASN1Object(
                                reason: "OCSP response type \(type) is not id-pkix-ocsp-basic")
                        }
                        let octets = try ASN1OctetString(derEncoded: &bytes)
                        return try BasicResponse(derEncoded: octets.bytes)
                    }
                }
                if status == .successful {
                    guard let basic else {
                        throw ASN1Error.invalidASN1Object(reason: "a successful OCSP response lacks responseBytes")
                    }
                    return Response(basic: basic)
                }
                return Response(error: status)
            }
        }

        public func serialize(into coder: inout DER.Serializer, withIdentifier identifier: ASN1Identifier) throws {
            try coder.appendConstructedNode(identifier: identifier) { coder in
                try status.rawValue.serialize(into: &coder, withIdentifier: .enumerated)
                if let basic {
                    try coder.serialize(explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific) { coder in
                        try coder.appendConstructedNode(identifier: .sequence) { coder in
                            try coder.serialize(OCSP.basicResponseOID)
                            try coder.serialize(ASN1OctetString(contentBytes: try basic.derBytes[...]))
                        }
                    }
                }
            }
        }
    }
}

extension DERSerializable {
    /// This value's DER bytes.
    var derBytes: [UInt8] {
        get throws {
            var serializer = DER.Serializer()
            try serializer.serialize(self)
            return serializer.serializedBytes
        }
    }
}

extension OCSP.Request {
    /// The request's DER bytes, what a client POSTs.
    public func derEncoded() throws -> [UInt8] { try derBytes }
}

extension OCSP.Response {
    /// The response's DER bytes, what a responder answers.
    public func derEncoded() throws -> [UInt8] { try derBytes }
}

extension GeneralizedTime {
    /// The instant in whole seconds, UTC, without fractional seconds (DER forbids a zero fraction).
    init(_ date: Date) throws {
        let components = Calendar(identifier: .gregorian).dateComponents(
            in: TimeZone(identifier: "UTC")!,
            from: Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)))
        try self.init(
            year: components.year!, month: components.month!, day: components.day!, hours: components.hour!,
            minutes: components.minute!, seconds: components.second!, fractionalSeconds: 0)
    }
}

extension Date {
    /// The instant a GeneralizedTime names (whole seconds).
    init(_ time: GeneralizedTime) {
        var components = DateComponents()
        components.timeZone = TimeZone(identifier: "UTC")
        (components.year, components.month, components.day) = (time.year, time.month, time.day)
        (components.hour, components.minute, components.second) = (time.hours, time.minutes, time.seconds)
        self = Calendar(identifier: .gregorian).date(from: components) ?? Date(timeIntervalSince1970: 0)
    }
}

extension Optional where Wrapped == ASN1Node {
    /// The node, or an ASN.1 error naming the missing field.
    fileprivate func orThrow(_ field: String) throws -> ASN1Node {
        guard let self else { throw ASN1Error.invalidASN1Object(reason: "OCSP message lacks \(field)") }
        return self
    }
}
