import Foundation
import KioskCore
import SwiftASN1
import X509

/// The certificate profile Kiosk issues: Apple's real App Store chain (Apple Root CA - G3, WWDR G6, the receipt
/// signing leaf), field by field, so Apple's own verifiers accept it with OpenSSL's `X509_STRICT`.
///
/// Root and intermediate are P-384 CAs signing with ecdsa-with-SHA384; the leaf is P-256 (ES256 needs it),
/// also signed with SHA-384 by the intermediate. Every window starts two years before "now" and the leaf
/// ends twenty years after it, so the sandbox clock can travel years either way and still sign inside
/// the leaf's validity.
public enum SigningProfile {
    /// Apple's marker on the leaf ("Mac App Store and iTunes Store receipt signing"), non-critical, DER NULL.
    public static let leafMarkerOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 11, 1]
    /// Apple's marker on the intermediate ("Apple WWDR CA"), non-critical, DER NULL.
    public static let intermediateMarkerOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 2, 1]
    /// The value Apple puts in both markers: a DER NULL.
    public static let markerValue: [UInt8] = [0x05, 0x00]

    /// How far before "now" every certificate of a generated chain starts.
    public static let backdatingSeconds: TimeInterval = 2 * secondsPerYear
    /// How long after "now" the root and the intermediate stay valid.
    public static let authorityLifetimeSeconds: TimeInterval = 25 * secondsPerYear
    /// How long after "now" the leaf stays valid; inside the intermediate's window.
    public static let leafLifetimeSeconds: TimeInterval = 20 * secondsPerYear

    /// A year of 365 days, the unit of the lifetimes above.
    public static let secondsPerYear: TimeInterval = 365 * 24 * 60 * 60

    /// `CN=Kiosk Root CA - Sandbox, O=Kiosk, C=US` (or `Production`).
    public static func rootSubject(_ environment: StoreEnvironment) throws -> DistinguishedName {
        try subject(commonName: "Kiosk Root CA - \(environment.appleName)")
    }

    /// `CN=Kiosk Worldwide Developer Relations CA - Sandbox, O=Kiosk, C=US` (or `Production`).
    public static func intermediateSubject(_ environment: StoreEnvironment) throws -> DistinguishedName {
        try subject(commonName: "Kiosk Worldwide Developer Relations CA - \(environment.appleName)")
    }

    /// `CN=Kiosk Store Receipt Signing - Sandbox, O=Kiosk, C=US` (or `Production`).
    public static func leafSubject(_ environment: StoreEnvironment) throws -> DistinguishedName {
        try subject(commonName: "Kiosk Store Receipt Signing - \(environment.appleName)")
    }

    /// The non-critical AuthorityInformationAccess extension naming one OCSP responder, as Apple's intermediate
    /// and leaf carry it (`http://ocsp.apple.com/…`); Apple's verifiers ask it when online checks are on.
    public static func authorityInformationAccess(ocspURL: String) -> AuthorityInformationAccess {
        AuthorityInformationAccess([.init(method: .ocspServer, location: .uniformResourceIdentifier(ocspURL))])
    }

    /// The OCSP URL in a certificate's AuthorityInformationAccess extension, or `nil` when it names none
    /// (or the extension cannot be read).
    public static func ocspURL(of certificate: Certificate) -> String? {
        guard let aia = try? certificate.extensions.authorityInformationAccess else { return nil }
        for description in aia where description.method == .ocspServer {
            if case .uniformResourceIdentifier(let url) = description.location { return url }
        }
        return nil
    }

    /// Where a store's OCSP responders live under its public URL: `<publicURL>/ocsp`.
    public static func ocspBaseURL(publicURL: String) -> String {
        var base = publicURL
        while base.hasSuffix("/") { base.removeLast() }
        return base + "/ocsp"
    }

    /// The responder URL of one environment's chain under a store's public URL: `<publicURL>/ocsp/<environment>`.
    public static func ocspURL(publicURL: String, environment: StoreEnvironment) -> String {
        ocspBaseURL(publicURL: publicURL) + "/" + environment.rawValue
    }

    private static func subject(commonName: String) throws -> DistinguishedName {
        try DistinguishedName {
            CountryName("US")
            OrganizationName("Kiosk")
            CommonName(commonName)
        }
    }
}
