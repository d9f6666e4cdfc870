import Foundation
import NIOCore

/// The error for a server that cannot listen because its port is taken, naming the process that holds it when
/// Linux's `/proc` tells (`pid 4242, kiosk serve --port 8080`).
enum PortInUse {
    /// Runs `body` (a server's run loop); an address already in use becomes a `CLIError` saying who holds the
    /// port and what to do, any other listening failure one naming `--host` and `--port`.
    static func reporting(server: String, host: String, port: Int, _ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            let holder = holder(of: port).map { " (held by \($0))" } ?? ""
            throw CLIError(
                message: "The \(server) cannot listen on \(host):\(port): the port is in use\(holder).",
                field: "--port",
                fix: "Stop the process that holds it, or pass another --port (0 picks any free port).")
        } catch let error as IOError {
            throw CLIError(
                message: "The \(server) cannot listen on \(host):\(port) (\(error)).", field: "--host",
                fix: "Check --host and --port.")
        }
    }

    /// `pid N, command line` of the process listening on TCP `port`, from `/proc/net/tcp{,6}` and each process's
    /// open sockets; nil when it cannot be told (another OS, another user's process).
    static func holder(of port: Int) -> String? {
        let hexPort = String(format: ":%04X", port)
        var inodes = Set<String>()
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            // Read to the end, chunk by chunk: a busy machine's table runs to megabytes, and /proc files state no size.
            guard let handle = FileHandle(forReadingAtPath: table), let data = try? handle.readToEnd() else { continue }
            let text = String(decoding: data, as: UTF8.self)
            for line in text.split(separator: "\n").dropFirst() {
                let columns = line.split(separator: " ", omittingEmptySubsequences: true)
                // local_address, rem_address, st (0A = LISTEN), …, inode is the tenth column.
                guard columns.count > 9, columns[1].hasSuffix(hexPort), columns[3] == "0A" else { continue }
                inodes.insert(String(columns[9]))
            }
        }
        guard !inodes.isEmpty, let pids = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else {
            return nil
        }
        for pid in pids where pid.allSatisfy(\.isNumber) {
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
            for descriptor in descriptors {
                guard
                    let target = try? FileManager.default.destinationOfSymbolicLink(
                        atPath: "/proc/\(pid)/fd/\(descriptor)"),
                    target.hasPrefix("socket:["), inodes.contains(String(target.dropFirst(8).dropLast()))
                else { continue }
                let arguments = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))) ?? Data()
                let command = hidingSecrets(arguments.split(separator: 0).map { String(decoding: $0, as: UTF8.self) })
                    .joined(separator: " ")
                return "pid \(pid), \(command.isEmpty ? "unknown command" : command)"
            }
        }
        return nil
    }

    /// A command line with the values of secret flags (`--admin-token T`, `--token=T`, keys, passwords) hidden.
    static func hidingSecrets(_ arguments: [String]) -> [String] {
        let secret = { (flag: String) in
            flag.hasPrefix("-") && ["token", "secret", "password", "key"].contains { flag.lowercased().contains($0) }
        }
        var shown: [String] = []
        for argument in arguments {
            if let last = shown.last, secret(last), !argument.hasPrefix("-") {
                shown.append("…")
            } else if let equals = argument.firstIndex(of: "="), secret(String(argument[..<equals])) {
                shown.append(argument[...equals] + "…")
            } else {
                shown.append(argument)
            }
        }
        return shown
    }
}
