import Foundation
import KioskTestSupport

/// Section 9's load generator: `wrk` (Debian's package), a separate process keeping many connections busy, as an
/// operator's traffic would. Nil when `wrk` is not on `PATH`.
let wrkPath: String? = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
    .map { "\($0)/wrk" }.first { FileManager.default.isExecutableFile(atPath: $0) }

/// What one wrk run measured: every request, throughput and latency, and how many failed.
struct WrkResult {
    var load: LoadResult
    var failures: Int
}

/// Runs wrk with 2 threads and `connections` connections for `seconds` against `url`. With `jsonBody`, each request
/// is a POST of that text in which `{n}` becomes a number no other request of the run uses (fresh idempotency keys).
func wrk(
    _ url: String, connections: Int = 64, seconds: Double, headers: [String] = [], jsonBody: String? = nil
) async throws -> WrkResult {
    guard let wrkPath else { throw WrkMissing() }
    let script = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-bench-\(UUID().uuidString).lua")
    defer { try? FileManager.default.removeItem(at: script) }
    try wrkScript(jsonBody: jsonBody).write(to: script, atomically: true, encoding: .utf8)
    var arguments = ["-t2", "-c\(connections)", "-d\(max(1, Int(seconds.rounded())))s", "-s", script.path]
    for header in headers { arguments += ["-H", header] }
    if jsonBody != nil { arguments += ["-H", "Content-Type: application/json"] }
    let (status, output) = try await runProcess(wrkPath, arguments + [url])
    guard status == 0,
        let line = output.split(separator: "\n").first(where: { $0.hasPrefix("KIOSK-BENCH ") })
    else { fatalError("wrk failed (\(status)): \(output)") }
    let fields = line.split(separator: " ").dropFirst().compactMap { Double($0) }
    guard fields.count == 5 else { fatalError("wrk printed an unexpected summary: \(line)") }
    let (requests, microseconds, p50, p99, failures) = (fields[0], fields[1], fields[2], fields[3], fields[4])
    return WrkResult(
        load: LoadResult(
            requestsPerSecond: requests / (microseconds / 1e6), p50Milliseconds: p50 / 1000,
            p99Milliseconds: p99 / 1000),
        failures: Int(failures))
}

/// wrk's Lua: numbered request bodies per thread, and a one-line summary in microseconds that `wrk(_:)` reads.
private func wrkScript(jsonBody: String?) -> String {
    var lua = """
        local threads = 0
        function setup(thread)
          threads = threads + 1
          thread:set("id", threads)
        end
        function done(summary, latency, requests)
          local e = summary.errors
          io.write(string.format("KIOSK-BENCH %d %d %d %d %d\\n", summary.requests, summary.duration,
            latency:percentile(50), latency:percentile(99), e.connect + e.read + e.write + e.status + e.timeout))
        end

        """
    if let jsonBody {
        let run = UInt32.random(in: 0...UInt32.max)
        let quoted = jsonBody.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        lua += """
            local counter = 0
            local template = "\(quoted)"
            function request()
              counter = counter + 1
              local n = string.format("%d-%d-%d", \(run), id, counter)
              return wrk.format("POST", nil, nil, (string.gsub(template, "{n}", n)))
            end

            """
    }
    return lua
}

struct WrkMissing: Error, CustomStringConvertible {
    var description: String { "wrk is not on PATH (Debian: apt-get install wrk)" }
}

/// Prints a wrk row against its baseline, with failed requests when there were any.
func report(_ name: String, _ measured: WrkResult, baselineName: String, _ baseline: WrkResult) {
    report(name, measured.load, baselineName: baselineName, baseline.load)
    if measured.failures > 0 { emit("  \(measured.failures) requests failed (non-2xx or socket errors)") }
}
