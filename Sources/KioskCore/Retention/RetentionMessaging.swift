import Foundation

/// Apple's Retention Messaging API, as rules without I/O: the review state of uploaded images and messages, the
/// sizes an image may have, and the limits Apple puts on a message's text (Apple's Upload Message and Upload Image
/// documentation).
public enum RetentionMessaging {
    /// Apple's `imageState` and `messageState`: what App Review (an operator in Kiosk) decided.
    public enum ReviewState: String, Codable, Sendable, CaseIterable, Hashable {
        case pending = "PENDING"
        case approved = "APPROVED"
        case rejected = "REJECTED"
    }

    /// Apple's `imageSize`: a message's own image, or a bullet point's icon.
    public enum ImageSize: String, Codable, Sendable, CaseIterable, Hashable {
        case fullSize = "FULL_SIZE"
        case bulletPoint = "BULLET_POINT"

        /// Whether a picture `width` × `height` pixels fits this size: Apple's full-size images are 3840 pixels wide
        /// and 160 to 2160 high; bullet-point images are 1024 × 1024.
        public func fits(width: Int, height: Int) -> Bool {
            switch self {
            case .fullSize: width == 3840 && (160...2160).contains(height)
            case .bulletPoint: width == 1024 && height == 1024
            }
        }

        /// The rule in words, for error messages.
        public var rule: String {
            switch self {
            case .fullSize: "3840 pixels wide and 160 to 2160 pixels high"
            case .bulletPoint: "1024 × 1024 pixels"
            }
        }
    }

    /// Apple's `headerPosition`.
    public enum HeaderPosition: String, Codable, Sendable, CaseIterable, Hashable {
        case aboveBody = "ABOVE_BODY"
        case aboveImage = "ABOVE_IMAGE"
    }

    // Apple's limits (Upload Message, Upload Image), counted in Unicode scalars as Apple's own client library
    // counts them (Python's `len`), so whatever that library lets through, Kiosk takes.
    public static let headerMaxLength = 66
    public static let bodyMaxLength = 144
    public static let altTextMaxLength = 150
    public static let bulletPointTextMaxLength = 66
    public static let bulletPointsMax = 5
    /// The most images, and the most messages, an app may have in one environment.
    public static let imagesPerApp = 2000
    public static let messagesPerApp = 2000
    /// `realtimeURL`'s length limit in Apple's client library.
    public static let realtimeURLMaxLength = 256
    /// The largest PNG Kiosk takes. Apple states no byte limit; a full-size image (3840 × 2160) compressed as PNG
    /// rarely needs more, and the body is refused before it is read whole.
    public static let imageMaxBytes = 16 * 1_048_576

    /// The length Apple's limits count.
    public static func length(_ text: String) -> Int { text.unicodeScalars.count }
}

/// An image uploaded for retention messages, in one environment of one app.
public struct RetentionImage: Codable, Sendable, Hashable {
    /// Lower-case UUID, as the developer chose it.
    public var identifier: String
    public var size: RetentionMessaging.ImageSize
    public var state: RetentionMessaging.ReviewState
    public var width: Int
    public var height: Int
    /// The size of the PNG file.
    public var bytes: Int
    /// The PNG file, base64; empty as the store reads an image, but for its PNG alone (`retentionImagePNG`).
    public var png: String
    public var createdAt: Date
    public var reviewedAt: Date?

    public init(
        identifier: String, size: RetentionMessaging.ImageSize, state: RetentionMessaging.ReviewState, width: Int,
        height: Int, bytes: Int, png: String, createdAt: Date, reviewedAt: Date? = nil
    ) {
        self.identifier = identifier
        self.size = size
        self.state = state
        self.width = width
        self.height = height
        self.bytes = bytes
        self.png = png
        self.createdAt = createdAt
        self.reviewedAt = reviewedAt
    }
}

/// A retention message's text, as uploaded: a header and a body, and optionally an image and bullet points.
public struct RetentionMessage: Codable, Sendable, Hashable {
    public struct Image: Codable, Sendable, Hashable {
        public var imageIdentifier: String
        public var altText: String

        public init(imageIdentifier: String, altText: String) {
            self.imageIdentifier = imageIdentifier
            self.altText = altText
        }
    }

    public struct BulletPoint: Codable, Sendable, Hashable {
        public var text: String
        public var imageIdentifier: String
        public var altText: String

        public init(text: String, imageIdentifier: String, altText: String) {
            self.text = text
            self.imageIdentifier = imageIdentifier
            self.altText = altText
        }
    }

    /// Lower-case UUID, as the developer chose it.
    public var identifier: String
    public var state: RetentionMessaging.ReviewState
    public var header: String
    public var body: String
    public var headerPosition: RetentionMessaging.HeaderPosition?
    public var image: Image?
    public var bulletPoints: [BulletPoint]
    public var createdAt: Date
    public var reviewedAt: Date?

    public init(
        identifier: String, state: RetentionMessaging.ReviewState, header: String, body: String,
        headerPosition: RetentionMessaging.HeaderPosition? = nil, image: Image? = nil, bulletPoints: [BulletPoint] = [],
        createdAt: Date, reviewedAt: Date? = nil
    ) {
        self.identifier = identifier
        self.state = state
        self.header = header
        self.body = body
        self.headerPosition = headerPosition
        self.image = image
        self.bulletPoints = bulletPoints
        self.createdAt = createdAt
        self.reviewedAt = reviewedAt
    }

    /// Every image the message shows: its own, then its bullet points' icons.
    public var imageIdentifiers: [String] {
        (image.map { [$0.imageIdentifier] } ?? []) + bulletPoints.map(\.imageIdentifier)
    }

    /// Whether it is text only: Apple shows promotional-offer and switch-plan messages only without an image.
    public var isTextOnly: Bool { image == nil && bulletPoints.isEmpty }
}

/// A retention offer: a discount App Store Connect pairs with a subscription's retention messaging, which the App
/// Store shows (when the customer is eligible) to a subscriber about to cancel, and which appears in the
/// transaction and renewal info as `offerType` 5 (Apple, WWDC26 "Explore Retention Messaging in App Store
/// Connect"). Its terms are an ``OfferSchedule``.
public struct RetentionOffer: ScheduledOffer, Codable, Sendable, Hashable {
    /// The auto-renewable the offer discounts.
    public var productId: String
    /// Unique within the product (also among its promotional and win-back offers); the `offerIdentifier`.
    public var identifier: String
    public var referenceName: String
    public var schedule: OfferSchedule
    public var createdAt: Date

    public init(
        productId: String, identifier: String, referenceName: String, schedule: OfferSchedule, createdAt: Date
    ) {
        self.productId = productId
        self.identifier = identifier
        self.referenceName = referenceName
        self.schedule = schedule
        self.createdAt = createdAt
    }
}

/// What Kiosk reads of a PNG file before it stores it: the checks Apple names for retention images (a PNG, without
/// transparency) on the file's structure — the signature, every chunk's length and CRC, `IHDR` first and `IEND`
/// last, and no alpha channel or `tRNS` chunk.
public struct PNGImageInfo: Sendable, Hashable {
    public var width: Int
    public var height: Int
    /// PNG colour type: 0 grey, 2 RGB, 3 palette (4 and 6 carry alpha and are refused).
    public var colorType: UInt8

    /// Why a file is not a PNG Kiosk takes, in words.
    public struct Refusal: Error, Sendable, Hashable, CustomStringConvertible {
        public var description: String
    }

    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Reads `data` as a PNG file.
    ///
    /// - Throws: ``Refusal`` saying what is wrong.
    public init(_ data: Data) throws {
        let bytes = [UInt8](data)
        guard bytes.count >= Self.signature.count + 12 + 13, Array(bytes.prefix(8)) == Self.signature else {
            throw Refusal(description: "the file is not a PNG (its first bytes are not the PNG signature)")
        }
        var offset = 8
        var header: (width: Int, height: Int, colorType: UInt8)?
        var sawData = false
        var ended = false
        while offset < bytes.count {
            guard !ended else { throw Refusal(description: "bytes follow the IEND chunk") }
            guard bytes.count - offset >= 12 else { throw Refusal(description: "a chunk is cut short") }
            let length = Self.uint32(bytes, at: offset)
            guard length <= 0x7FFF_FFFF, Int(length) <= bytes.count - offset - 12 else {
                throw Refusal(description: "a chunk's length runs past the end of the file")
            }
            let typeStart = offset + 4
            let dataEnd = typeStart + 4 + Int(length)
            let type = String(decoding: bytes[typeStart..<typeStart + 4], as: UTF8.self)
            guard bytes[typeStart..<typeStart + 4].allSatisfy({ (65...90).contains($0) || (97...122).contains($0) })
            else { throw Refusal(description: "a chunk type is not four letters") }
            guard CRC32.checksum(bytes[typeStart..<dataEnd]) == Self.uint32(bytes, at: dataEnd) else {
                throw Refusal(description: "the \(type) chunk's CRC is wrong")
            }
            let chunk = bytes[(typeStart + 4)..<dataEnd]
            if header == nil {
                guard type == "IHDR", length == 13 else { throw Refusal(description: "the first chunk is not IHDR") }
                let start = chunk.startIndex
                let width = Int(Self.uint32(bytes, at: start))
                let height = Int(Self.uint32(bytes, at: start + 4))
                let bitDepth = bytes[start + 8]
                let colorType = bytes[start + 9]
                guard width > 0, height > 0, width <= 0x7FFF_FFFF, height <= 0x7FFF_FFFF else {
                    throw Refusal(description: "the image has no pixels")
                }
                let depths: [UInt8: Set<UInt8>] = [
                    0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16],
                ]
                guard let allowed = depths[colorType], allowed.contains(bitDepth) else {
                    throw Refusal(description: "colour type \(colorType) with bit depth \(bitDepth) is not PNG")
                }
                guard colorType != 4, colorType != 6 else {
                    throw Refusal(description: "the image has an alpha channel (transparency)")
                }
                header = (width, height, colorType)
            } else {
                switch type {
                case "IHDR": throw Refusal(description: "the file has two IHDR chunks")
                case "tRNS": throw Refusal(description: "the image has a tRNS chunk (transparency)")
                case "IDAT": sawData = true
                case "IEND": ended = true
                default: break
                }
            }
            offset = dataEnd + 4
        }
        guard let header else { throw Refusal(description: "the file has no IHDR chunk") }
        guard sawData else { throw Refusal(description: "the file has no image data (IDAT)") }
        guard ended else { throw Refusal(description: "the file does not end with IEND") }
        width = header.width
        height = header.height
        colorType = header.colorType
    }

    private static func uint32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }
}

/// CRC-32 (ISO 3309, as PNG uses it).
public enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    public static func checksum<C: Collection>(_ bytes: C) -> UInt32 where C.Element == UInt8 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}
