import Foundation

/// A fresh directory under the system's temporary directory, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init() throws {
        path = (NSTemporaryDirectory() as NSString).appendingPathComponent("kiosk-signing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func appending(_ components: String...) -> String {
        components.reduce(path) { ($0 as NSString).appendingPathComponent($1) }
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// The permission bits of a file, read with FileManager.
func permissions(of path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
}

/// Writes a file and sets its mode.
func write(_ text: String, to path: String, mode: Int = 0o600) throws {
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
}
