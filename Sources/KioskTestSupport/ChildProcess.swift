import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process started with `posix_spawn`, its standard output and error on pipes.
///
/// Foundation's `Process.run()` on Linux crashes now and then (SIGSEGV in its scan of `/proc/self/fd`, a
/// 256-byte over-read of each `dirent`: swift-corelibs-foundation pull request 5472; Swift 6.3.1 has it), which
/// took a whole test run down. This spawns with glibc's `posix_spawn` instead, closing every descriptor above
/// standard error in the child (`posix_spawn_file_actions_addclosefrom_np`, as Foundation means to).
final class ChildProcess: @unchecked Sendable {
    let processIdentifier: pid_t
    let standardOutput: FileHandle
    let standardError: FileHandle

    /// Starts `executable` with `arguments` and exactly `environment`.
    init(executable: URL, arguments: [String], environment: [String: String]) throws {
        var output: [Int32] = [-1, -1]
        var errors: [Int32] = [-1, -1]
        guard Self.makePipe(&output), Self.makePipe(&errors) else { throw Self.failure("pipe", errno) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errors[1], 2)
        #if canImport(Glibc)
            if let closeFrom = Self.closeFrom { _ = closeFrom(&actions, 3) }
        #endif
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv + envp { free(pointer) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable.path, &actions, nil, argv, envp)
        close(output[1])
        close(errors[1])
        guard spawned == 0 else {
            close(output[0])
            close(errors[0])
            throw Self.failure("posix_spawn \(executable.path)", spawned)
        }
        processIdentifier = pid
        standardOutput = FileHandle(fileDescriptor: output[0], closeOnDealloc: true)
        standardError = FileHandle(fileDescriptor: errors[0], closeOnDealloc: true)
    }

    /// Waits for the child to end (blocking this thread) and returns its exit status, or the signal that ended it.
    func waitForExit() -> (status: Int32, signal: Int32?) {
        var status: Int32 = 0
        while waitpid(processIdentifier, &status, 0) == -1 && errno == EINTR {}
        let signal = status & 0x7f
        return signal == 0 ? ((status >> 8) & 0xff, nil) : (signal, signal)
    }

    /// Sends `signal` (SIGTERM by default).
    func send(_ signal: Int32 = SIGTERM) {
        _ = kill(processIdentifier, signal)
    }

    /// A pipe whose ends close on exec, so no other child inherits them (the child gets them as 1 and 2 by
    /// `dup2`, which clears the flag). Between `pipe` and `fcntl` a concurrent spawn could see them, but every
    /// spawn here and in Foundation closes the descriptors above standard error.
    private static func makePipe(_ ends: inout [Int32]) -> Bool {
        guard pipe(&ends) == 0 else { return false }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return true
    }

    #if canImport(Glibc)
        private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc module does not
        /// declare; nil on an older glibc, where descriptors opened without close-on-exec are inherited.
        private static let closeFrom: CloseFrom? = dlsym(
            dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np"
        )
        .map { unsafeBitCast($0, to: CloseFrom.self) }
    #endif

    private static func failure(_ what: String, _ code: Int32) -> NSError {
        NSError(
            domain: NSPOSIXErrorDomain, code: Int(code),
            userInfo: [NSLocalizedDescriptionKey: "\(what) failed: \(String(cString: strerror(code)))"])
    }
}
