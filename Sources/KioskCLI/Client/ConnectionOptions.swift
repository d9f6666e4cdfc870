import ArgumentParser
import Foundation

/// `--server`, `--token` and `--json`, shared by every command that talks to a running store.
struct ConnectionOptions: ParsableArguments {
    @Option(help: "The store's URL (default: KIOSK_SERVER or http://127.0.0.1:8080).")
    var server: String?

    @Option(help: "The admin token (default: KIOSK_ADMIN_TOKEN).")
    var token: String?

    @Flag(help: "Print one JSON document instead of text.")
    var json = false

    @Option(help: "Trust this PEM root for an https:// store besides the system's (KIOSK_TLS_ROOT).")
    var tlsRoot: String?

    var client: AdminClient {
        let environment = ProcessInfo.processInfo.environment
        return AdminClient(
            server: server ?? environment["KIOSK_SERVER"] ?? "http://127.0.0.1:8080",
            token: token ?? environment["KIOSK_ADMIN_TOKEN"], tlsRoot: tlsRoot)
    }

    /// Prints `--json` output or the text lines `text` makes from the answer.
    func print(_ answer: AdminClient.Answer, text: (AdminClient.Answer) throws -> [String]) throws {
        if json {
            Swift.print(answer.prettyJSON)
        } else {
            for line in try text(answer) { Swift.print(line) }
        }
    }
}

extension ParsableArguments {
    /// ``reportingCLIErrors(json:flags:_:)`` for this command: an error's field names the command's own flag
    /// when it has one of that name (`paymentMode` → `--payment-mode`), besides the `flags` given.
    func reportingErrors(
        json: Bool = false, flags: [String: String] = [:], _ body: () async throws -> Void
    ) async throws {
        try await reportingCLIErrors(json: json, flags: CLIError.flags(of: self).merging(flags) { $1 }, body)
    }
}

/// Runs a command body, printing a `CLIError` readably to standard error and exiting 1; with `json`, a store's
/// error answer is printed to standard output as JSON instead (`{"error": …, "errors": [...]}`).
///
/// `flags` names the command's flag for each API field an error may name (`referenceName` → `--reference-name`), so
/// the error points at what the user typed.
func reportingCLIErrors(
    json: Bool = false, flags: [String: String] = [:], _ body: () async throws -> Void
) async throws {
    do {
        try await body()
    } catch var error as CLIError {
        error = error.naming(flags: flags)
        if json, let answer = error.answerBody {
            print(AdminClient.Answer(status: error.status ?? 0, body: answer).prettyJSON)
        } else {
            FileHandle.standardError.write(Data((error.description + "\n").utf8))
        }
        throw ExitCode.failure
    }
}
