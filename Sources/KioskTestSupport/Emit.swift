import Foundation

/// Writes one line to standard output at once, even into a pipe or file (where `print` buffers), so a long run
/// stopped early (a timeout, ^C) keeps what it printed.
public func emit(_ line: String) {
    // A reader that went away (`| head`) is no reason to stop.
    try? FileHandle.standardOutput.write(contentsOf: Data((line + "\n").utf8))
}
