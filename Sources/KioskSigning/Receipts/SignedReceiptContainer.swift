import SwiftASN1
import X509

/// The parts of a DER PKCS #7 `ContentInfo` holding `SignedData` (RFC 5652 §5) that receipt verification needs.
///
/// CMS types in swift-certificates are internal, so the container is read here with swift-asn1; only the
/// shape Apple's and Kiosk's receipts have is accepted: versions 1, attached `pkcs7-data` content, exactly one
/// signer identified by issuer and serial number, and `digestAlgorithms` naming exactly that signer's digest
/// algorithm. The signature covers none of these, so they are held to the one shape a signer writes: a container
/// changed outside the signed bytes is malformed (verifyReceipt 21002), never accepted as it is.
struct SignedReceiptContainer {
    /// The encapsulated content: the receipt payload.
    var content: [UInt8]
    /// The embedded certificates, in container order.
    var certificates: [Certificate]
    var signerInfo: SignerInfo

    /// `SignerInfo ::= SEQUENCE { version, sid IssuerAndSerialNumber, digestAlgorithm, [0] signedAttrs,
    /// signatureAlgorithm, signature OCTET STRING, [1] unsignedAttrs }`.
    struct SignerInfo {
        var issuer: DistinguishedName
        var serialNumber: Certificate.SerialNumber
        var digestAlgorithm: ASN1ObjectIdentifier
        var hasSignedAttributes: Bool
        var signatureAlgorithm: ASN1ObjectIdentifier
        var signature: [UInt8]
    }

    static let signedDataOID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 2]
    static let dataOID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 1]
    static let sha256OID: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 1]
    static let ecdsaWithSHA256OID: ASN1ObjectIdentifier = [1, 2, 840, 10_045, 4, 3, 2]

    /// The embedded certificate the signer info names.
    var signer: Certificate? {
        certificates.first { $0.issuer == signerInfo.issuer && $0.serialNumber == signerInfo.serialNumber }
    }
}

extension SignedReceiptContainer {
    /// Parses `ContentInfo ::= SEQUENCE { contentType signedData, [0] EXPLICIT SignedData }`.
    init(derEncoded bytes: [UInt8]) throws {
        self = try DER.sequence(DER.parse(bytes), identifier: .sequence) { nodes in
            guard try ASN1ObjectIdentifier(derEncoded: &nodes) == Self.signedDataOID else {
                throw ReceiptDecodingError("the content type is not signedData (1.2.840.113549.1.7.2)")
            }
            return try DER.explicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) { node in
                try Self(signedData: node)
            }
        }
    }

    /// `SignedData ::= SEQUENCE { version, digestAlgorithms, encapContentInfo, [0] certificates, [1] crls,
    /// signerInfos }`.
    private init(signedData: ASN1Node) throws {
        self = try DER.sequence(signedData, identifier: .sequence) { nodes in
            try requireVersion1(&nodes, of: "SignedData")
            let digestAlgorithms = try DER.set(next(&nodes), identifier: .set) { algorithms in
                var oids: [ASN1ObjectIdentifier] = []
                while let node = algorithms.next() { oids.append(try algorithm(node)) }
                return oids
            }
            let content = try DER.sequence(next(&nodes), identifier: .sequence) { nodes in
                guard try ASN1ObjectIdentifier(derEncoded: &nodes) == Self.dataOID else {
                    throw ReceiptDecodingError("the encapsulated content type is not pkcs7-data")
                }
                let content = try DER.optionalExplicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) {
                    try ASN1OctetString(derEncoded: $0)
                }
                guard let content else { throw ReceiptDecodingError("the payload is detached, not attached") }
                return Array(content.bytes)
            }
            let certificatesTag = ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)
            let certificates = try DER.optionalImplicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) {
                try DER.set($0, identifier: certificatesTag) { certificates in
                    var parsed: [Certificate] = []
                    while let node = certificates.next() { parsed.append(try Certificate(embeddedInReceipt: node)) }
                    return parsed
                }
            }
            _ = DER.optionalImplicitlyTagged(&nodes, tagNumber: 1, tagClass: .contextSpecific) { _ in }
            let signerInfos = try DER.set(next(&nodes), identifier: .set) { signers in
                var infos: [SignerInfo] = []
                while let signer = signers.next() { infos.append(try SignerInfo(derEncoded: signer)) }
                return infos
            }
            guard signerInfos.count == 1 else {
                throw ReceiptDecodingError("the container holds \(signerInfos.count) signer infos; 1 is required")
            }
            guard digestAlgorithms == [signerInfos[0].digestAlgorithm] else {
                throw ReceiptDecodingError(
                    "digestAlgorithms \(digestAlgorithms) does not name exactly the signer's digest algorithm "
                        + "\(signerInfos[0].digestAlgorithm)")
            }
            return Self(content: content, certificates: certificates ?? [], signerInfo: signerInfos[0])
        }
    }
}

extension SignedReceiptContainer.SignerInfo {
    init(derEncoded node: ASN1Node) throws {
        self = try DER.sequence(node, identifier: .sequence) { nodes in
            try requireVersion1(&nodes, of: "SignerInfo")
            let (issuer, serialNumber) = try DER.sequence(next(&nodes), identifier: .sequence) { nodes in
                (try DistinguishedName(derEncoded: next(&nodes)), try ArraySlice<UInt8>(derEncoded: &nodes))
            }
            let digestAlgorithm = try algorithm(next(&nodes))
            let hasSignedAttributes =
                DER.optionalImplicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) { _ in true } ?? false
            let signatureAlgorithm = try algorithm(next(&nodes))
            let signature = try ASN1OctetString(derEncoded: &nodes)
            _ = DER.optionalImplicitlyTagged(&nodes, tagNumber: 1, tagClass: .contextSpecific) { _ in }
            return Self(
                issuer: issuer,
                serialNumber: Certificate.SerialNumber(bytes: serialNumber),
                digestAlgorithm: digestAlgorithm,
                hasSignedAttributes: hasSignedAttributes,
                signatureAlgorithm: signatureAlgorithm,
                signature: Array(signature.bytes)
            )
        }
    }
}

/// The OID of an `AlgorithmIdentifier ::= SEQUENCE { algorithm OID, parameters ANY OPTIONAL }`; the digest and
/// signature algorithms a receipt uses take no parameters, so they must be absent or NULL.
private func algorithm(_ node: ASN1Node) throws -> ASN1ObjectIdentifier {
    try DER.sequence(node, identifier: .sequence) { nodes in
        let oid = try ASN1ObjectIdentifier(derEncoded: &nodes)
        if let parameters = nodes.next() { _ = try ASN1Null(derEncoded: parameters) }
        return oid
    }
}

/// The `version` INTEGER that starts `SignedData` and `SignerInfo`: 1 whenever the signer is named by issuer and
/// serial number (RFC 5652 §5.1, §5.3), as in every receipt.
private func requireVersion1(_ nodes: inout ASN1NodeCollection.Iterator, of structure: String) throws {
    let version = try Int(derEncoded: &nodes)
    guard version == 1 else { throw ReceiptDecodingError("the \(structure) version is \(version); 1 is required") }
}

/// The next node of a SEQUENCE that must have one.
private func next(_ nodes: inout ASN1NodeCollection.Iterator) throws -> ASN1Node {
    guard let node = nodes.next() else { throw ReceiptDecodingError("the SignedData ends early") }
    return node
}

extension Certificate {
    /// A certificate embedded in a receipt, whose signature BIT STRING declares no unused bits. swift-certificates
    /// reads the signature's bytes and ignores that count, which the issuer's signature cannot cover, so a receipt
    /// changed there would still verify; OpenSSL refuses such a signature, and so does Kiosk.
    init(embeddedInReceipt node: ASN1Node) throws {
        let signature = try DER.sequence(node, identifier: .sequence) { nodes in
            _ = nodes.next()  // tbsCertificate
            _ = nodes.next()  // signatureAlgorithm
            guard let signatureValue = nodes.next() else { throw ReceiptDecodingError("a certificate is incomplete") }
            return try ASN1BitString(derEncoded: signatureValue)
        }
        guard signature.paddingBits == 0 else {
            throw ReceiptDecodingError(
                "an embedded certificate's signature declares \(signature.paddingBits) unused bits; 0 is required")
        }
        try self.init(derEncoded: node)
    }
}
