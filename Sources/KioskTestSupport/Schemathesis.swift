import Foundation

/// A bounded fuzzing run of schemathesis (PyPI, pinned in `.ci/requirements.txt`) against a running server's
/// OpenAPI document: generated requests from every operation's schema, examples and edge cases, each answer checked
/// to be no server error (5xx) and, by default, to be as the document says: a status it lists, its content type, a
/// body its schema takes. The run is sized by examples per operation and a fixed seed, not by time, so a
/// loaded machine sends the same requests, only more slowly. One worker: with two, Hypothesis's lambda
/// descriptions (`ast.parse` in threads) now and then fail inside Python ("AST constructor recursion depth
/// mismatch"), an error of the fuzzer's own that would fail the run.
///
/// ```swift
/// let run = try await Schemathesis.run(document: store.baseURL + "/openapi.yaml", headers: ["Authorization": "Bearer …"])
/// #expect(run.status == 0, "\(run.output)")
/// ```
public enum Schemathesis {
    /// No server error, and each answer's status, content type and body as the document declares them.
    public static let conformanceChecks = [
        "not_a_server_error", "status_code_conformance", "content_type_conformance", "response_schema_conformance",
    ]

    /// What a run printed and how it ended.
    public struct Run: Sendable {
        /// 0 when no answer was a server error and no request failed.
        public var status: Int32
        public var output: String
        /// How many test cases it generated (its summary's "N generated").
        public var generated: Int? {
            output.split(separator: "\n").lazy.compactMap { line -> Int? in
                guard let range = line.range(of: " generated") else { return nil }
                return Int(line[..<range.lowerBound].split(separator: " ").last ?? "")
            }.first
        }
    }

    /// Fuzzes the API `document` describes with `examplesPerOperation` generated examples per operation besides
    /// its coverage cases, `headers` on every request, on the operations whose path matches `includingPaths` and
    /// not `excludingPaths` (regular expressions; nil: all), sent to `baseURL` when the document names another
    /// server; `checks` are schemathesis's checks (``conformanceChecks`` unless given).
    public static func run(
        document: String, headers: [String: String], examplesPerOperation: Int = 10, includingPaths: String? = nil,
        excludingPaths: String? = nil, baseURL: String? = nil, checks: [String] = conformanceChecks, seed: Int = 1
    ) async throws -> Run {
        var arguments = [
            "-m", "schemathesis.cli", "run", document, "--checks", checks.joined(separator: ","),
            "--phases", "examples,coverage,fuzzing", "--max-examples", String(examplesPerOperation), "--workers", "1",
            "--request-timeout", "60", "--seed", String(seed), "--no-color", "--output-truncate", "true",
        ]
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { arguments += ["-H", "\(name): \(value)"] }
        if let includingPaths { arguments += ["--include-path-regex", includingPaths] }
        if let excludingPaths { arguments += ["--exclude-path-regex", excludingPaths] }
        if let baseURL { arguments += ["--url", baseURL] }
        let (status, output) = try await runProcess(try TestEnvironment.require(.python), arguments)
        return Run(status: status, output: output)
    }
}
