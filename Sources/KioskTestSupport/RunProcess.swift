import Foundation

/// What a program run by ``runProcess(_:_:)`` left: its exit status and its standard output and error, interleaved.
public typealias ProcessOutcome = (status: Int32, output: String)

/// Runs a program to its end on a thread of its own, so the blocking reads and the wait never hold one of Swift
/// concurrency's few cooperative threads (which would stall a store running in the same test process).
public func runProcess(_ executable: String, _ arguments: [String]) async throws -> ProcessOutcome {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
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
