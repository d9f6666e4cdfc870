import Foundation
import KioskCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where the store may send server notifications and real-time retention requests (`--outbound-urls`,
/// `KIOSK_OUTBOUND_URLS`). Development's default reaches anything, loopback included: the merchant usually runs on
/// the same machine. A production store serving other people's apps turns on ``publicHTTPS``, so an App Manager
/// cannot point the store at the operator's internal network.
public enum OutboundURLPolicy: String, Sendable, CaseIterable {
    /// Any http or https URL (the default).
    case any
    /// https only, and only to public addresses: no loopback, private, link-local, shared, documentation,
    /// multicast or reserved ones. Checked when a URL is set (a host given as an address, `localhost`) and before
    /// each request, on the addresses the host name resolves to then.
    case publicHTTPS = "public-https"

    /// Why `url` may not be set under this policy, or nil when it may. Host names are resolved only at delivery.
    public func refusal(toSet url: String) -> String? {
        guard self == .publicHTTPS else { return nil }
        guard let components = URLComponents(string: url), components.scheme?.lowercased() == "https",
            let host = components.host?.lowercased(), !host.isEmpty
        else { return "this store sends only to https URLs (--outbound-urls public-https)" }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if bare == "localhost" || bare.hasSuffix(".localhost") {
            return
                "\(host) is this machine, and this store sends only to public addresses (--outbound-urls public-https)"
        }
        if let address = IPAddress(bare), !address.isPublic {
            return "\(bare) is not a public address, and this store sends only to public addresses "
                + "(--outbound-urls public-https)"
        }
        return nil
    }

    /// Why a request to `url` may not leave now, or nil when it may: the set-time checks again (a URL set before the
    /// policy was turned on), then every address the host resolves to must be public. A name that does not resolve
    /// is left to the request, which fails as it would have.
    func refusal(toSend url: String) async -> String? {
        guard self == .publicHTTPS else { return nil }
        if let refusal = refusal(toSet: url) { return refusal }
        guard let host = URLComponents(string: url)?.host else { return nil }
        let addresses = await Self.resolve(host)
        if let blocked = addresses.first(where: { !$0.isPublic }) {
            return "\(host) resolves to \(blocked), not a public address, and this store sends only to public "
                + "addresses (--outbound-urls public-https)"
        }
        return nil
    }

    /// The addresses `host` resolves to now (empty when it does not), looked up off the event loops.
    private static func resolve(_ host: String) async -> [IPAddress] {
        (try? await NIOThreadPool.singleton.runIfActive { IPAddress.resolve(host) }) ?? []
    }
}

/// Whether the public Internet routes to an address, and what a host name resolves to.
extension IPAddress {
    /// False for the ranges IANA's special-purpose registries keep off the public Internet (RFC 6890 and after).
    var isPublic: Bool {
        if bytes.count == 4 { return !Self.specialIPv4.contains { Self.matches(bytes, $0.prefix, $0.length) } }
        // IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) addresses are their IPv4 address.
        if Self.matches(bytes, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF], 96)
            || Self.matches(bytes, [0, 0x64, 0xFF, 0x9B], 96)
        {
            return IPAddress(bytes: Array(bytes[12...])).isPublic
        }
        return !Self.specialIPv6.contains { Self.matches(bytes, $0.prefix, $0.length) }
    }

    private static let specialIPv4: [(prefix: [UInt8], length: Int)] = [
        ([0], 8), ([10], 8), ([100, 64], 10), ([127], 8), ([169, 254], 16), ([172, 16], 12), ([192, 0, 0], 24),
        ([192, 0, 2], 24), ([192, 88, 99], 24), ([192, 168], 16), ([198, 18], 15), ([198, 51, 100], 24),
        ([203, 0, 113], 24), ([224], 4), ([240], 4),
    ]
    private static let specialIPv6: [(prefix: [UInt8], length: Int)] = [
        ([UInt8](repeating: 0, count: 16), 127),  // :: and ::1
        ([0x01, 0x00], 64), ([0x20, 0x01, 0x0D, 0xB8], 32), ([0x20, 0x01, 0x00], 23), ([0xFC], 7),
        ([0xFE, 0x80], 10), ([0xFE, 0xC0], 10), ([0xFF], 8),
    ]

    /// Whether the first `length` bits of `bytes` are those of `prefix` (zero-padded).
    private static func matches(_ bytes: [UInt8], _ prefix: [UInt8], _ length: Int) -> Bool {
        for bit in 0..<length {
            let index = bit / 8
            guard index < bytes.count else { return false }
            let mask = UInt8(0x80) >> UInt8(bit % 8)
            let expected = index < prefix.count ? prefix[index] & mask : 0
            if bytes[index] & mask != expected { return false }
        }
        return true
    }

    /// Every address `host` resolves to (getaddrinfo, blocking), or the address itself when it is one.
    static func resolve(_ host: String) -> [IPAddress] {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if let address = IPAddress(bare) { return [address] }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(bare, nil, &hints, &list) == 0 else { return [] }
        defer { freeaddrinfo(list) }
        var addresses: [IPAddress] = []
        var entry = list
        while let info = entry?.pointee {
            if info.ai_family == AF_INET, let address = info.ai_addr {
                address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                    var raw = v4.pointee.sin_addr
                    addresses.append(IPAddress(bytes: withUnsafeBytes(of: &raw) { Array($0) }))
                }
            } else if info.ai_family == AF_INET6, let address = info.ai_addr {
                address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                    var raw = v6.pointee.sin6_addr
                    addresses.append(IPAddress(bytes: withUnsafeBytes(of: &raw) { Array($0) }))
                }
            }
            entry = info.ai_next
        }
        return addresses
    }
}
