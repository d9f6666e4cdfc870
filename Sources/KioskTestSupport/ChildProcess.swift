import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process started with `posix_spawn`, its standard output on a pipe and its standard error on a pipe or
/// appended to a file. A thread of its own waits for it to end, so ``exit`` tells at any time whether it has.
///
/// Foundation's `Process.run()` on Linux crashes now and then (SIGSEGV in its scan of `/proc/self/fd`, a
/// 256-byte over-read of each `dirent`: swift-corelibs-foundation pull request 5472; Swift 6.3.1 has it), which
/// took a whole test run down. This spawns with glibc's `posix_spawn` instead, closing every descriptor above
/// standard error in the child (`posix_spawn_file_actions_addclosefrom_np`, as Foundation means to).
final class ChildProcess: @unchecked Sendable {
    let processIdentifier: pid_t
    let standardOutput: FileHandle
    /// Nil when standard error goes to a file.
    let standardError: FileHandle?
    private let exited = DispatchGroup()
    private let lock = NSLock()
    private var ended: (status: Int32, signal: Int32?)?

    /// Starts `executable` with `arguments` and exactly `environment`; its standard error is appended to
    /// `standardErrorFile` (created if need be) when given, else readable from ``standardError``.
    init(executable: URL, arguments: [String], environment: [String: String], standardErrorFile: URL? = nil) throws {
        var output: [Int32] = [-1, -1]
        var errors: [Int32] = [-1, -1]
        guard Self.makePipe(&output) else { throw Self.failure("pipe", errno) }
        if let standardErrorFile {
            errors[1] = open(standardErrorFile.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            guard errors[1] >= 0 else { throw Self.failure("open \(standardErrorFile.path)", errno) }
        } else {
            guard Self.makePipe(&errors) else { throw Self.failure("pipe", errno) }
        }
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
            if errors[0] >= 0 { close(errors[0]) }
            throw Self.failure("posix_spawn \(executable.path)", spawned)
        }
        processIdentifier = pid
        standardOutput = FileHandle(fileDescriptor: output[0], closeOnDealloc: true)
        standardError = errors[0] >= 0 ? FileHandle(fileDescriptor: errors[0], closeOnDealloc: true) : nil
        exited.enter()
        Thread.detachNewThread { [self, pid] in
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
            let signal = status & 0x7f
            lock.withLock { ended = signal == 0 ? ((status >> 8) & 0xff, nil) : (signal, signal) }
            exited.leave()
        }
    }

    /// How the child ended (its exit status, or the number of the signal that ended it, as both), nil while it runs.
    var exit: (status: Int32, signal: Int32?)? { lock.withLock { ended } }

    /// Waits for the child to end (blocking this thread) and returns its exit status, or the signal that ended it.
    func waitForExit() -> (status: Int32, signal: Int32?) {
        exited.wait()
        return exit ?? (-1, nil)
    }

    /// Sends `signal` (SIGTERM by default) while the child runs.
    func send(_ signal: Int32 = SIGTERM) {
        lock.withLock {
            if ended == nil { _ = kill(processIdentifier, signal) }
        }
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
