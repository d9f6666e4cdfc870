import ArgumentParser
import Foundation
import KioskProtocol

/// `kiosk catalog …`: an app's whole catalog in and out, as Kiosk JSON or an Xcode `.storekit` file.
struct CatalogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catalog", abstract: "Import or export an app's whole catalog (Kiosk JSON or Xcode .storekit).",
        subcommands: [Import.self, Export.self])

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import a catalog file; importing the same file twice changes nothing.")
        @Option(help: "The app's bundle id.") var app: String
        @Argument(help: "A Kiosk catalog JSON file or an Xcode .storekit file.") var file: String
        @Option(help: "json or storekit (default: from the file's extension and contents).") var format: String?
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors(json: connection.json) {
                let data: Data
                do {
                    data = try Data(contentsOf: URL(fileURLWithPath: file))
                } catch {
                    throw CLIError(message: "Cannot read \(file): \(error.localizedDescription)", field: "FILE")
                }
                var query: [String: String] = [:]
                // The extension decides when it says: a broken `.json` file must be reported as a Kiosk catalog,
                // not as a `.storekit` file (the store reads anything without `"format"` as one).
                let byExtension = file.hasSuffix(".storekit") ? "storekit" : file.hasSuffix(".json") ? "json" : nil
                if let format = format ?? byExtension { query["format"] = format }
                let answer = try await connection.client.post(
                    AdminRoutes.catalog.path(app), query: query, raw: data)
                try connection.print(answer) { answer in
                    let summary = try answer.decode(CatalogImportSummary.self)
                    var lines = [
                        "Imported \(file) into \(app): "
                            + "\(summary.created.count) created, \(summary.updated.count) updated, \(summary.unchanged.count) unchanged."
                    ]
                    for id in summary.created { lines.append("  + \(id)") }
                    for id in summary.updated { lines.append("  ~ \(id)") }
                    if !summary.warnings.isEmpty { lines.append("\(summary.warnings.count) warning(s):") }
                    for warning in summary.warnings {
                        lines.append("  warning: \(warning.productId.map { "\($0): " } ?? "")\(warning.message)")
                        if let path = warning.path { lines.append("    at:  \(path)") }
                        if let fix = warning.fix { lines.append("    fix: \(fix)") }
                    }
                    return lines
                }
            }
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Export an app's catalog.")
        @Option(help: "The app's bundle id.") var app: String
        @Option(help: "json (Kiosk's format) or storekit (an Xcode StoreKit configuration).") var format: String =
            "json"
        @Option(help: "storekit: the storefront of the file's prices, e.g. FIN (default: USA, or one pricing all).")
        var storefront: String?
        @Option(help: "Write to this file instead of standard output.") var output: String?
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors(json: connection.json) {
                var query = ["format": format]
                if let storefront { query["storefront"] = storefront }
                let answer = try await connection.client.get(AdminRoutes.catalog.path(app), query: query)
                if let output {
                    try answer.body.write(to: URL(fileURLWithPath: output))
                    print("Wrote the catalog of \(app) to \(output)")
                } else {
                    FileHandle.standardOutput.write(answer.body)
                    print()
                }
            }
        }
    }
}
