import Foundation

/// Runs a program to its end on a dispatch thread (never blocking Swift concurrency's few threads) and returns
/// its exit status and combined output.
func runProcess(_ executable: String, _ arguments: [String]) async throws -> (Int32, String) {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = pipe
            do {
                try process.run()
                let output = pipe.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume(returning: (process.terminationStatus, String(decoding: output, as: UTF8.self)))
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }
}
