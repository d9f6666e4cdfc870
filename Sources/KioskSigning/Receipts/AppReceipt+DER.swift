import Foundation
import SwiftASN1

extension AppReceipt {
    /// The DER payload that goes into the PKCS #7 container: `SET OF ReceiptAttribute` with the attribute numbers
    /// and value encodings of Apple's Receipt Validation Programming Guide, "Receipt Fields"; absent optionals are
    /// left out.
    ///
    /// - Throws: when an integer cannot be serialized (a programming error).
    public func payloadDER() throws -> [UInt8] {
        var attributes: [ReceiptAttribute] = [
            .string(0, receiptType.rawValue),
            try .integer(1, appItemId),
            .string(2, bundleId),
            .string(3, applicationVersion),
            ReceiptAttribute(type: 4, value: opaqueValue),
            ReceiptAttribute(type: 5, value: sha1Hash),
            .date(12, receiptCreationDate),
            .string(19, originalApplicationVersion),
        ]
        if let downloadId { attributes.append(try .integer(15, downloadId)) }
        if let versionExternalIdentifier { attributes.append(try .integer(16, versionExternalIdentifier)) }
        if let originalPurchaseDate { attributes.append(.date(18, originalPurchaseDate)) }
        if let expirationDate { attributes.append(.date(21, expirationDate)) }
        for purchase in inApp {
            attributes.append(try .set(17, purchase.attributes()))
        }
        return try ReceiptAttribute.derSet(attributes)
    }

    /// Decodes a payload made by ``payloadDER()`` or by Apple, ignoring attribute types it does not know.
    /// A payload wrapped once more in an OCTET STRING, as Xcode writes it, is unwrapped first.
    ///
    /// - Throws: ``ReceiptVerificationFailure/malformedPayload(_:)`` naming the first problem.
    public init(payloadDER: [UInt8]) throws(ReceiptVerificationFailure) {
        do {
            let reader = try Self.attributes(payloadDER)
            self.init(
                receiptType: ReceiptType(rawValue: try reader.string(0)),
                appItemId: try reader.integer(1),
                bundleId: try reader.string(2),
                applicationVersion: try reader.string(3),
                opaqueValue: try reader.bytes(4),
                sha1Hash: try reader.bytes(5),
                receiptCreationDate: try reader.date(12),
                originalPurchaseDate: try reader.optionalDate(18),
                originalApplicationVersion: try reader.string(19),
                expirationDate: try reader.optionalDate(21),
                downloadId: try reader.optionalInteger(15),
                versionExternalIdentifier: try reader.optionalInteger(16),
                inApp: try reader.all(17).map { try InAppPurchase(reader: ReceiptAttributeReader(derSet: $0)) }
            )
        } catch {
            throw .malformedPayload("\(error)")
        }
    }

    /// Only the receipt creation date (attribute 12), the instant the chain is validated at: all a verifier reads
    /// of a payload before the chain is trusted.
    ///
    /// - Throws: ``ReceiptVerificationFailure/malformedPayload(_:)`` when the payload or the date cannot be read.
    static func creationDate(payloadDER: [UInt8]) throws(ReceiptVerificationFailure) -> Date {
        do {
            return try attributes(payloadDER).date(12)
        } catch {
            throw .malformedPayload("\(error)")
        }
    }

    /// The payload's attributes; a payload wrapped once more in an OCTET STRING, as Xcode writes it, is unwrapped.
    private static func attributes(_ payloadDER: [UInt8]) throws -> ReceiptAttributeReader {
        var payload = payloadDER
        if let node = try? DER.parse(payload), node.identifier == .octetString {
            payload = Array(try ASN1OctetString(derEncoded: node).bytes)
        }
        return try ReceiptAttributeReader(derSet: payload)
    }
}

extension AppReceipt.InAppPurchase {
    fileprivate func attributes() throws -> [ReceiptAttribute] {
        var attributes: [ReceiptAttribute] = [
            try .integer(1701, quantity),
            .string(1702, productId),
            .string(1703, transactionId),
            .date(1704, purchaseDate),
            .string(1705, originalTransactionId),
            .date(1706, originalPurchaseDate),
            try .integer(1707, productType.rawValue),
        ]
        if let expiresDate { attributes.append(.date(1708, expiresDate)) }
        if let webOrderLineItemId { attributes.append(try .integer(1711, webOrderLineItemId)) }
        if let cancellationDate { attributes.append(.date(1712, cancellationDate)) }
        if let isTrialPeriod { attributes.append(try .flag(1713, isTrialPeriod)) }
        if let isInIntroOfferPeriod { attributes.append(try .flag(1719, isInIntroOfferPeriod)) }
        if let promotionalOfferId { attributes.append(.string(1721, promotionalOfferId)) }
        return attributes
    }

    fileprivate init(reader: ReceiptAttributeReader) throws {
        self.init(
            quantity: try reader.integer(1701),
            productId: try reader.string(1702),
            transactionId: try reader.string(1703),
            originalTransactionId: try reader.string(1705),
            purchaseDate: try reader.date(1704),
            originalPurchaseDate: try reader.date(1706),
            productType: AppReceipt.ProductType(rawValue: try reader.integer(1707)),
            expiresDate: try reader.optionalDate(1708),
            webOrderLineItemId: try reader.optionalInteger(1711),
            cancellationDate: try reader.optionalDate(1712),
            isTrialPeriod: try reader.optionalFlag(1713),
            isInIntroOfferPeriod: try reader.optionalFlag(1719),
            promotionalOfferId: try reader.optionalString(1721)
        )
    }
}
