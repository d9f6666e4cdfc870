import Foundation
import Logging

/// How a Kiosk server writes its log (`--log-format`, `KIOSK_LOG_FORMAT`).
public enum LogFormat: String, Sendable, CaseIterable {
    /// One human-readable line per event, metadata as `key=value`.
    case text
    /// One JSON object per line, for log shippers.
    case json
}

/// Process-wide logging set-up for `kiosk serve` and `kiosk merchant serve`: text lines or one JSON object per line
/// on standard error.
public enum KioskLogging {
    /// Installs the log handler. Call once, before the server starts.
    public static func bootstrap(format: LogFormat, level: Logger.Level) {
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler
            switch format {
            case .text: handler = TextLogHandler(label: label)
            case .json: handler = JSONLogHandler(label: label)
            }
            handler.logLevel = level
            return handler
        }
    }
}

/// swift-log's `StreamLogHandler` on standard error, the same lines, handed its metadata only when it writes one.
///
/// `StreamLogHandler` formats all its metadata each time a key is set, and Hummingbird sets the request id on every
/// request's logger: 1.3% of Get Transaction Info's CPU at 64 connections (`perf`), for lines an info-level log
/// mostly never writes.
struct TextLogHandler: LogHandler {
    private var stream: StreamLogHandler
    var metadata: Logger.Metadata = [:]

    init(label: String) { stream = StreamLogHandler.standardError(label: label) }

    var logLevel: Logger.Level {
        get { stream.logLevel }
        set { stream.logLevel = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { stream.metadataProvider }
        set { stream.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var writer = stream
        writer.metadata = metadata
        writer.log(event: event)
    }
}

/// Writes each log event as one JSON object (`time`, `level`, `label`, `message`, metadata) per line.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var object: [String: String] = [:]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
            object[key] = value.description
        }
        object["time"] = Date().formatted(.iso8601)
        object["level"] = event.level.rawValue
        object["label"] = label
        object["message"] = event.message.description
        object["source"] = event.source
        guard
            var data = try? JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return }
        data.append(UInt8(ascii: "\n"))
        FileHandle.standardError.write(data)
    }
}
