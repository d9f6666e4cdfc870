import ArgumentParser
import Foundation
import KioskCore
import KioskHTTP
import KioskSQL
import KioskSigning
import Logging
import X509

/// `--log-level` and `--log-format` (KIOSK_LOG_LEVEL, KIOSK_LOG_FORMAT), shared by `kiosk serve` and
/// `kiosk merchant serve`.
struct LogOptions: ParsableArguments {
    @Option(help: "trace, debug, info, notice, warning, error or critical (KIOSK_LOG_LEVEL; default info).")
    var logLevel: String?

    @Option(help: "text or json (KIOSK_LOG_FORMAT; default text).")
    var logFormat: String?

    /// The level the option or KIOSK_LOG_LEVEL names, nil when neither does.
    func level(environment: [String: String]) throws -> Logger.Level? {
        guard let levelText = logLevel ?? environment["KIOSK_LOG_LEVEL"] else { return nil }
        guard let level = Logger.Level(rawValue: levelText.lowercased()) else {
            throw CLIError(
                message: "'\(levelText)' is not a log level.", field: "--log-level",
                fix: "Use one of: \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
        return level
    }

    /// The format the option or KIOSK_LOG_FORMAT names, nil when neither does.
    func format(environment: [String: String]) throws -> LogFormat? {
        guard let formatText = logFormat ?? environment["KIOSK_LOG_FORMAT"] else { return nil }
        guard let format = LogFormat(rawValue: formatText.lowercased()) else {
            throw CLIError(
                message: "'\(formatText)' is not a log format.", field: "--log-format", fix: "Use text or json.")
        }
        return format
    }
}

/// `--idle-timeout` and `--body-timeout` (KIOSK_IDLE_TIMEOUT, KIOSK_BODY_TIMEOUT), shared by `kiosk serve` and
/// `kiosk merchant serve`.
struct TimeoutOptions: ParsableArguments {
    @Option(
        help: """
            Seconds a connection may go without request traffic (between requests, or a head or body that stopped \
            arriving) before it is closed (KIOSK_IDLE_TIMEOUT; default 30).
            """)
    var idleTimeout: String?

    @Option(
        help: "Seconds a request's body may take to arrive whole after its head (KIOSK_BODY_TIMEOUT; default 60).")
    var bodyTimeout: String?

    /// The timeouts the options or their variables name, the defaults for the others.
    func timeouts(environment: [String: String]) throws -> HTTPTimeouts {
        var timeouts = HTTPTimeouts()
        if let text = idleTimeout ?? environment["KIOSK_IDLE_TIMEOUT"] {
            timeouts.idle = try Self.seconds(text, option: "--idle-timeout")
        }
        if let text = bodyTimeout ?? environment["KIOSK_BODY_TIMEOUT"] {
            timeouts.body = try Self.seconds(text, option: "--body-timeout")
        }
        return timeouts
    }

    private static func seconds(_ text: String, option: String) throws -> Duration {
        guard let seconds = Double(text), seconds >= 1, seconds <= 3600 else {
            throw CLIError(
                message: "'\(text)' is not a timeout.", field: option,
                fix: "Use a number of seconds from 1 to 3600, such as 30.")
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }
}

/// A `--port` value (from the option or its variable): a number from 0 to 65535.
func parsePort(_ portText: String) throws -> Int {
    guard let value = Int(portText), (0...65535).contains(value) else {
        throw CLIError(message: "'\(portText)' is not a port.", field: "--port", fix: "Use a number from 0 to 65535.")
    }
    return value
}

/// A `--database-pool-size` value (from the option or its variable): a number of connections in
/// ``DatabaseOpener/poolSizes``.
func parsePoolSize(_ text: String) throws -> Int {
    guard let value = Int(text), DatabaseOpener.poolSizes.contains(value) else {
        throw CLIError(
            message: "'\(text)' is not a database pool size.", field: "--database-pool-size",
            fix: "Use a number of connections from \(DatabaseOpener.poolSizes.lowerBound) to "
                + "\(DatabaseOpener.poolSizes.upperBound); the default is \(DatabaseOpener.defaultPoolSize).")
    }
    return value
}

/// Writes lines to standard output at once (unbuffered), so a reader sees them while a server runs.
func writeLines(_ lines: [String]) {
    FileHandle.standardOutput.write(Data(lines.map { $0 + "\n" }.joined().utf8))
}

/// `--tls-certificate` and `--tls-key`, shared by `kiosk serve` and `kiosk merchant serve`: serve HTTPS.
struct TLSOptions: ParsableArguments {
    @Option(
        help: """
            Serve HTTPS with this PEM certificate chain, the server's certificate first (e.g. from `kiosk certs tls`; \
            KIOSK_TLS_CERTIFICATE, the merchant's KIOSK_MERCHANT_TLS_CERTIFICATE).
            """)
    var tlsCertificate: String?

    @Option(help: "The certificate's PEM private key (KIOSK_TLS_KEY, the merchant's KIOSK_MERCHANT_TLS_KEY).")
    var tlsKey: String?

    /// The certificate and key the options or the variables `<prefix>TLS_CERTIFICATE` and `<prefix>TLS_KEY` name;
    /// nil for plain HTTP. Both or neither.
    func serverTLS(environment: [String: String], prefix: String) throws -> ServerTLS? {
        let certificate = tlsCertificate ?? environment[prefix + "TLS_CERTIFICATE"]
        let key = tlsKey ?? environment[prefix + "TLS_KEY"]
        switch (certificate, key) {
        case (nil, nil):
            return nil
        case (let certificate?, let key?):
            do {
                return try ServerTLS(certificateFile: certificate, keyFile: key)
            } catch let error as KioskError {
                throw CLIError(error)
            }
        default:
            throw CLIError(
                message: "HTTPS needs both a certificate and its key.",
                field: certificate == nil ? "--tls-certificate" : "--tls-key",
                fix: "Pass --tls-certificate and --tls-key (`kiosk certs tls --host NAME` issues both), or neither.")
        }
    }
}

/// The roots `KIOSK_TLS_ROOT` names (a PEM file), trusted for HTTPS besides the system's; none when it is unset.
func environmentTLSRoots(_ environment: [String: String], option: String? = nil) throws -> [Certificate] {
    guard let path = option ?? environment["KIOSK_TLS_ROOT"] else { return [] }
    do {
        return try TLSTrust.certificates(inPEMFile: path, field: option == nil ? "KIOSK_TLS_ROOT" : "--tls-root")
    } catch let error as KioskError {
        throw CLIError(error)
    }
}
