import ArgumentParser
import Foundation
import KioskStorage
import KioskStore
import Logging

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
    func format(environment: [String: String]) throws -> ServerConfiguration.LogFormat? {
        guard let formatText = logFormat ?? environment["KIOSK_LOG_FORMAT"] else { return nil }
        guard let format = ServerConfiguration.LogFormat(rawValue: formatText.lowercased()) else {
            throw CLIError(
                message: "'\(formatText)' is not a log format.", field: "--log-format", fix: "Use text or json.")
        }
        return format
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
