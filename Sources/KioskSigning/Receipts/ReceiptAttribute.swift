import Foundation
import KioskCore
import SwiftASN1

/// One `ReceiptAttribute ::= SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }` of an app receipt
/// payload or of an in-app purchase, with the value's encodings
/// (Receipt Validation Programming Guide: Validating Receipts Locally).
struct ReceiptAttribute: DERImplicitlyTaggable {
    static var defaultIdentifier: ASN1Identifier { .sequence }

    var type: Int
    /// 1 in every receipt observed.
    var version = 1
    /// The OCTET STRING's content: a whole DER TLV, or raw bytes for the opaque value and the hash.
    var value: [UInt8]

    init(type: Int, value: [UInt8]) {
        self.type = type
        self.value = value
    }

    init(derEncoded rootNode: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
        self = try DER.sequence(rootNode, identifier: identifier) { nodes in
            var attribute = ReceiptAttribute(type: try Int(derEncoded: &nodes), value: [])
            attribute.version = try Int(derEncoded: &nodes)
            attribute.value = Array(try ASN1OctetString(derEncoded: &nodes).bytes)
            return attribute
        }
    }

    func serialize(into coder: inout DER.Serializer, withIdentifier identifier: ASN1Identifier) throws {
        try coder.appendConstructedNode(identifier: identifier) { coder in
            try coder.serialize(type)
            try coder.serialize(version)
            try coder.serialize(ASN1OctetString(contentBytes: value[...]))
        }
    }

    // MARK: Values

    /// A string attribute: the whole DER UTF8String.
    static func string(_ type: Int, _ text: String) -> ReceiptAttribute {
        ReceiptAttribute(type: type, value: derUTF8String(text))
    }

    /// An integer attribute: the whole DER INTEGER.
    static func integer(_ type: Int, _ number: some ASN1IntegerRepresentable) throws -> ReceiptAttribute {
        var serializer = DER.Serializer()
        try serializer.serialize(number)
        return ReceiptAttribute(type: type, value: serializer.serializedBytes)
    }

    /// A boolean attribute: INTEGER 1 or 0.
    static func flag(_ type: Int, _ flag: Bool) throws -> ReceiptAttribute {
        try integer(type, flag ? 1 : 0)
    }

    /// A date attribute: a DER IA5String in RFC 3339 UTC to the second, `2023-10-19T01:45:40Z`.
    static func date(_ type: Int, _ date: Date) -> ReceiptAttribute {
        var serializer = DER.Serializer()
        serializer.appendPrimitiveNode(identifier: .ia5String) { $0.append(contentsOf: date.formatted(.iso8601).utf8) }
        return ReceiptAttribute(type: type, value: serializer.serializedBytes)
    }

    /// A nested attribute: the DER `SET OF` `attributes`, as attribute 17 carries an in-app purchase.
    static func set(_ type: Int, _ attributes: [ReceiptAttribute]) throws -> ReceiptAttribute {
        ReceiptAttribute(type: type, value: try derSet(attributes))
    }

    /// `SET OF ReceiptAttribute` in DER, which sorts the elements by their encoding.
    static func derSet(_ attributes: [ReceiptAttribute]) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serializeSetOf(attributes)
        return serializer.serializedBytes
    }

    /// The DER UTF8String of `text`, tag and length included.
    static func derUTF8String(_ text: String) -> [UInt8] {
        var serializer = DER.Serializer()
        serializer.appendPrimitiveNode(identifier: .utf8String) { $0.append(contentsOf: text.utf8) }
        return serializer.serializedBytes
    }
}

/// The attributes of one `SET OF ReceiptAttribute`, read by type. Unknown types are ignored; for a type that
/// appears more than once (other than 17, read with ``all(_:)``) the first wins.
struct ReceiptAttributeReader {
    private let attributes: [ReceiptAttribute]

    /// Parses a DER `SET OF ReceiptAttribute`.
    init(derSet bytes: [UInt8]) throws {
        attributes = try DER.set(of: ReceiptAttribute.self, identifier: .set, rootNode: DER.parse(bytes))
    }

    /// Every value of attribute `type`, in payload order.
    func all(_ type: Int) -> [[UInt8]] {
        attributes.filter { $0.type == type }.map(\.value)
    }

    func string(_ type: Int) throws -> String {
        try String(ASN1UTF8String(derEncoded: required(type)))
    }

    func optionalString(_ type: Int) throws -> String? {
        try first(type).map { try String(ASN1UTF8String(derEncoded: $0)) }
    }

    func integer<Number: ASN1IntegerRepresentable>(_ type: Int) throws -> Number {
        try Number(derEncoded: required(type))
    }

    func optionalInteger<Number: ASN1IntegerRepresentable>(_ type: Int) throws -> Number? {
        try first(type).map { try Number(derEncoded: $0) }
    }

    func optionalFlag(_ type: Int) throws -> Bool? {
        try (optionalInteger(type) as Int?).map { $0 != 0 }
    }

    func bytes(_ type: Int) throws -> [UInt8] {
        try required(type)
    }

    func date(_ type: Int) throws -> Date {
        guard let date = try optionalDate(type) else {
            throw ReceiptDecodingError("attribute \(type) is an empty date")
        }
        return date
    }

    /// A date, or `nil` when the attribute is absent or an empty IA5String; with or without fractional seconds.
    /// A date outside `Date.kioskRange` is malformed: nothing Kiosk or Apple signs lies there, and no certificate
    /// library can validate at it.
    func optionalDate(_ type: Int) throws -> Date? {
        guard let value = first(type) else { return nil }
        let text = String(try ASN1IA5String(derEncoded: value))
        if text.isEmpty { return nil }
        // The plain style would accept a fraction and drop it, so the fractional style goes first.
        guard
            let date = (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text))
                ?? (try? Date.ISO8601FormatStyle().parse(text))
        else {
            throw ReceiptDecodingError("attribute \(type) is not an RFC 3339 date: \(text)")
        }
        guard Date.kioskRange.contains(date) else {
            throw ReceiptDecodingError("attribute \(type) is a date outside \(Date.kioskRangeText): \(text)")
        }
        return date
    }

    private func first(_ type: Int) -> [UInt8]? {
        attributes.first { $0.type == type }?.value
    }

    private func required(_ type: Int) throws -> [UInt8] {
        guard let value = first(type) else { throw ReceiptDecodingError("attribute \(type) is missing") }
        return value
    }
}

/// Why receipt bytes could not be decoded; the verifiers turn it into a ``ReceiptVerificationFailure``.
struct ReceiptDecodingError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
