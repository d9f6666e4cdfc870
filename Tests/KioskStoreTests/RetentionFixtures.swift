import Foundation
import Hummingbird
import HummingbirdCore
import KioskCore
import KioskHTTP
import KioskSigning
import KioskStore
import KioskTesting
import Logging
import NIOHTTP1
import ServiceLifecycle
import Testing
import X509

/// PNG files made byte by byte for the retention messaging tests: real PNGs (signature, IHDR, IDAT holding a zlib
/// stream of stored deflate blocks, IEND, every CRC right), or broken on purpose.
enum TestPNG {
    /// A `width` × `height` PNG, 8 bits per sample: colour type 0 (grey), 2 (RGB) or 6 (RGB with alpha).
    static func make(
        width: Int, height: Int, colorType: UInt8 = 0, transparencyChunk: Bool = false, breakCRC: Bool = false
    ) -> Data {
        let bytesPerPixel = [0: 1, 2: 3, 6: 4][Int(colorType)] ?? 1
        var header: [UInt8] = []
        header += be32(UInt32(width)) + be32(UInt32(height))
        header += [8, colorType, 0, 0, 0]
        var raw = [UInt8]()
        raw.reserveCapacity((width * bytesPerPixel + 1) * height)
        for row in 0..<height {
            raw.append(0)
            raw += [UInt8](repeating: UInt8(row % 256), count: width * bytesPerPixel)
        }
        var file: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        file += chunk("IHDR", header)
        if transparencyChunk { file += chunk("tRNS", [0, 0]) }
        file += chunk("IDAT", zlibStored(raw))
        file += chunk("IEND", [])
        if breakCRC { file[file.count - 1] ^= 0xFF }
        return Data(file)
    }

    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return be32(UInt32(data.count)) + body + be32(CRC32.checksum(body))
    }

    /// A zlib stream of stored (uncompressed) deflate blocks.
    private static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let length = min(65_535, data.count - offset)
            let final: UInt8 = offset + length == data.count ? 1 : 0
            out.append(final)
            out += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8((~length >> 8) & 0xFF)]
            out += data[offset..<offset + length]
            offset += length
        } while offset < data.count
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return out + be32(b << 16 | a)
    }

    private static func be32(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// A valid full-size PNG broken one way each, with the store's refusal: a wrong CRC, a chunk cut short, a
    /// length past the end of the file, a huge length, and a wrong signature.
    static var malformed: [(Data, String)] {
        let file = [UInt8](fullSize)
        // The signature (8 bytes), then IHDR: length, type, 13 bytes of data, CRC; then IDAT's length.
        let ihdrCRC = 8 + 4 + 4 + 13
        let idatLength = ihdrCRC + 4
        var badCRC = file
        badCRC[ihdrCRC] ^= 0x01
        var hugeLength = file
        hugeLength.replaceSubrange(idatLength..<idatLength + 4, with: [0xFF, 0xFF, 0xFF, 0xF0])
        var wrongSignature = file
        wrongSignature[1] = 0x51
        return [
            (Data(badCRC), "the IHDR chunk's CRC is wrong"),
            (Data(file.dropLast(2)), "a chunk is cut short"),
            (Data(file.prefix(idatLength + 100)), "a chunk's length runs past the end of the file"),
            (Data(hugeLength), "a chunk's length runs past the end of the file"),
            (Data(wrongSignature), "the file is not a PNG (its first bytes are not the PNG signature)"),
        ]
    }

    /// Apple's full-size image, as small as Apple allows (3840 × 160).
    static let fullSize = make(width: 3840, height: 160)
    /// Apple's bullet-point image (1024 × 1024).
    static let bulletPoint = make(width: 1024, height: 1024)
}

/// A developer's Get Retention Message endpoint for the tests: HTTPS on 127.0.0.1 with a certificate of a root of
/// its own, which the store under test trusts (`configure`), answering each request as ``answer`` says when it
/// arrives and keeping the `signedPayload` of each.
final class RetentionEndpoint: @unchecked Sendable {
    enum Answer: Sendable {
        /// 200 with this JSON body.
        case json(String)
        /// This status, with an empty JSON object.
        case status(Int)
        /// No answer until the endpoint stops: the store's budget decides.
        case never
        /// Holds each request until ``release()``, then answers this JSON.
        case held(String)
    }

    let url: String
    let root: Certificate
    private let lock = NSLock()
    private var current: Answer = .json("{}")
    private var payloads: [String] = []
    private var released = false

    fileprivate init(url: String, root: Certificate) {
        self.url = url
        self.root = root
    }

    var answer: Answer {
        get { lock.withLock { current } }
        set { lock.withLock { current = newValue } }
    }

    /// The signed payloads received, in order.
    var received: [String] { lock.withLock { payloads } }

    /// Lets held and unanswered requests end.
    func release() { lock.withLock { released = true } }

    fileprivate func record(_ payload: String) { lock.withLock { payloads.append(payload) } }
    fileprivate var isReleased: Bool { lock.withLock { released } }

    /// The store's configuration trusting this endpoint's root, with `budget` for its answers.
    func configure(budget: Duration) -> @Sendable (inout KioskStore.ServerConfiguration) -> Void {
        let root = root
        return { configuration in
            configuration.tlsTrustRoots = [root]
            configuration.realtimeRetentionBudget = budget
        }
    }
}

private struct RealtimeBody: Decodable {
    var signedPayload: String
}

/// Runs `body` with a ``RetentionEndpoint`` at `https://127.0.0.1:<port>/retention`.
func withRetentionEndpoint<T: Sendable>(_ body: @Sendable (RetentionEndpoint) async throws -> T) async throws -> T {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("retention-tls-\(UUID())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let (authority, _) = try TLSCertificateAuthority.loadOrCreate(in: directory)
    let issued = try authority.issue(hosts: ["127.0.0.1"])
    let certificateFile = directory.appendingPathComponent("endpoint.pem")
    let keyFile = directory.appendingPathComponent("endpoint.key")
    try issued.certificateChainPEM.write(to: certificateFile, atomically: true, encoding: .utf8)
    try issued.privateKeyPEM.write(to: keyFile, atomically: true, encoding: .utf8)
    let tls = try ServerTLS(certificateFile: certificateFile.path, keyFile: keyFile.path)

    let state = Box<RetentionEndpoint?>(nil)
    let router = Router()
    router.post("retention") { request, context -> Response in
        let decoded = try await request.decode(as: RealtimeBody.self, context: context)
        guard let endpoint = state.value else { return Response(status: .serviceUnavailable) }
        endpoint.record(decoded.signedPayload)
        func json(_ text: String, _ status: HTTPResponse.Status = .ok) -> Response {
            var response = Response(status: status, body: .init(byteBuffer: ByteBuffer(string: text)))
            response.headers[.contentType] = "application/json"
            return response
        }
        switch endpoint.answer {
        case .json(let text): return json(text)
        case .status(let code): return json("{}", HTTPResponse.Status(code: code))
        case .never:
            while !endpoint.isReleased { try? await Task.sleep(for: .milliseconds(20)) }
            return json("{}")
        case .held(let text):
            while !endpoint.isReleased { try? await Task.sleep(for: .milliseconds(20)) }
            return json(text)
        }
    }
    var logger = Logger(label: "retention-endpoint")
    logger.logLevel = .warning
    return try await withLoopbackServer(port: .ephemeral, logger: logger, name: "retention endpoint") {
        port, onServerRunning in
        let application = Application(
            router: router, server: try HTTPTimeouts().server(tls: tls),
            configuration: .init(address: .hostname("127.0.0.1", port: port)),
            onServerRunning: { await onServerRunning($0.localAddress?.port ?? 0) }, logger: logger)
        return ((), application)
    } _: { _, port in
        let endpoint = RetentionEndpoint(url: "https://127.0.0.1:\(port)/retention", root: authority.root)
        state.value = endpoint
        // Held and unanswered requests end before the server stops, however `body` ends.
        defer { endpoint.release() }
        return try await body(endpoint)
    }
}

/// A value shared between a test and the handlers of its server.
final class Box<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

extension TestStore {
    /// Calls the App Store Server API with a raw body and headers (an image upload), a token minted at `clock`'s time.
    func inApps(
        _ method: HTTPMethod, _ path: String, key: ServerAPIKey, body: Data, contentType: String = "image/png",
        sandbox: Bool = true, clock: any KioskClock = SystemClock()
    ) async throws -> Answer {
        try await request(
            method, (sandbox ? "/sandbox" : "") + path, body: body, token: .some(try key.token(now: clock.now())),
            headers: ["Content-Type": contentType])
    }

    /// A message body as Apple's client sends it.
    static func retentionMessage(
        header: String = "Stay with Pro", body: String = "Your plan keeps every feature.", image: String? = nil,
        altText: String = "A picture", headerPosition: String? = nil, bullets: [(String, String, String)] = []
    ) -> [String: Any] {
        var json: [String: Any] = ["header": header, "body": body]
        if let image { json["image"] = ["imageIdentifier": image, "altText": altText] }
        if let headerPosition { json["headerPosition"] = headerPosition }
        if !bullets.isEmpty {
            json["bulletPoints"] = bullets.map { ["text": $0.0, "imageIdentifier": $0.1, "altText": $0.2] }
        }
        return json
    }
}
