import Foundation
import KioskCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes files whose mode is set before any byte of content exists, so a private key is never readable
/// by anyone but the owner, not even for an instant, and never half-written under its final name.
enum PrivateFileWriter {
    /// Owner read/write only.
    static let ownerOnlyMode: mode_t = 0o600
    /// Owner read/write, everyone else read: for certificates.
    static let publicMode: mode_t = 0o644
    /// Owner only, for directories.
    static let ownerOnlyDirectoryMode: mode_t = 0o700

    /// Creates a file with `O_EXCL` and `mode`, writes `contents`, and flushes it to disk.
    ///
    /// - Throws: ``KioskError`` naming the path when any step fails.
    static func create(_ path: String, contents: [UInt8], mode: mode_t) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw failure("create", path) }
        defer { close(descriptor) }
        // The umask may have cleared bits of `mode`; set it exactly, still before writing anything.
        guard fchmod(descriptor, mode) == 0 else { throw failure("set the mode of", path) }
        var written = 0
        while written < contents.count {
            let result = contents[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if result < 0 {
                if errno == EINTR { continue }
                throw failure("write", path)
            }
            written += result
        }
        guard fsync(descriptor) == 0 else { throw failure("flush", path) }
    }

    /// Creates a directory with exactly `mode`.
    static func createDirectory(_ path: String, mode: mode_t) throws {
        guard mkdir(path, mode) == 0 else { throw failure("create the directory", path) }
        guard chmod(path, mode) == 0 else { throw failure("set the mode of", path) }
    }

    /// Flushes a directory's entries (a rename inside it) to disk.
    static func syncDirectory(_ path: String) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }

    /// The permission bits of a file, or `nil` when it cannot be examined.
    static func mode(of path: String) -> mode_t? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return info.st_mode & 0o777
    }

    private static func failure(_ action: String, _ path: String) -> KioskError {
        let reason = String(cString: strerror(errno))
        return KioskError(
            .signingStoreWriteFailed, "Could not \(action) \(path): \(reason).",
            field: path,
            fix: "Make sure the data directory is writable by the user running Kiosk and the disk is not full."
        )
    }
}
