import Foundation
import Synchronization

/// The device state's file, `device-state.json` in the state directory, always replaced atomically (written to
/// a temporary file, then renamed), so a crash leaves either the old or the new state, never half of one.
///
/// Writes run in order on a private serial queue so callers never block Swift concurrency's threads;
/// ``flush()`` waits until everything saved before it is on disk.
final class DeviceStateFile: Sendable {
    let url: URL
    private let writes = DispatchQueue(label: "KioskKit.DeviceStateFile")
    private let writeFailure = Mutex<KioskKitError?>(nil)

    /// Opens (and creates, owner-only) the state directory.
    init(directory: URL) throws {
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw KioskKitError(
                code: .stateDirectory,
                message: "Could not create the state directory \(directory.path); choose a writable directory.",
                cause: error)
        }
        self.url = directory.appendingPathComponent("device-state.json")
    }

    /// Reads the stored state; a device that never ran has an empty one.
    func load() throws -> DeviceState {
        guard FileManager.default.fileExists(atPath: url.path) else { return DeviceState() }
        do {
            return try JSONDecoder().decode(DeviceState.self, from: Data(contentsOf: url))
        } catch {
            throw KioskKitError(
                code: .stateDirectory,
                message: "Could not read \(url.path); restore it from a backup or remove it to start a new device.",
                cause: error)
        }
    }

    /// Schedules an atomic write of `state`, after every write scheduled before.
    func save(_ state: DeviceState) {
        writes.async { [self] in
            do {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                try encoder.encode(state).write(to: url, options: .atomic)
            } catch {
                writeFailure.withLock {
                    $0 = KioskKitError(
                        code: .stateDirectory, message: "Could not write \(url.path); free space or fix permissions.",
                        cause: error)
                }
            }
        }
    }

    /// Returns once every state saved before the call is written.
    ///
    /// - Throws: the first write failure since the last flush, so nothing is sent that a relaunch would forget.
    func flush() async throws {
        await withCheckedContinuation { continuation in
            writes.async { continuation.resume() }
        }
        if let failure = writeFailure.withLock({ failure in
            defer { failure = nil }; return failure
        }) {
            throw failure
        }
    }
}
