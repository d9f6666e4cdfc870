import Dispatch
import GRDB
import GRDBSQLite
import Logging
import Synchronization

/// Copies the write-ahead log back into the database file from a connection and a thread of its own, so the writer's
/// commits seldom stop to do it. SQLite's automatic checkpoint runs inside the commit that takes the log past 1,000
/// pages, and waits there for the database file's `fsync`: 4.6% of a renewal run's samples, all on the writer.
///
/// The writer's WAL hook reports the log's length after each commit. Once ``threshold`` pages of it have not been
/// copied, this thread runs a passive checkpoint, which neither waits for the writer and the readers nor holds them
/// up. The log starts again from its beginning only when the writer begins a transaction with every page copied, and
/// under a steady stream of commits that moment may not come. So once the log is ``limit`` pages long the writer does
/// what SQLite would have done, inside its commit: it waits for this thread and copies what is left, and the log
/// starts again at its next transaction.
package final class SQLiteCheckpointer: Sendable {
    /// Pages of log not yet copied that start a checkpoint on this thread: SQLite's own automatic threshold.
    static let threshold: Int32 = 1_000
    /// The log's length, in pages, at which the writer copies the rest itself (32 MiB of 4 KiB pages).
    static let limit: Int32 = 8_000

    /// How many checkpoints ran, and where, and how many pages the writer appended to the log.
    package struct Counts: Sendable, Equatable {
        /// Checkpoints run on this thread, beside the writer.
        package var beside = 0
        /// Checkpoints the writer ran inside a commit, the log having reached ``limit``.
        package var byWriter = 0
        /// Pages the writer's commits appended to the log, over all its restarts.
        package var pagesLogged = 0
    }

    private struct State {
        /// Pages of the current log known to be copied; 0 when the log has started again.
        var copied: Int32 = 0
        /// SQLite's count of pages the writer wrote, at the last commit.
        var pagesWritten: Int32 = 0
        /// A checkpoint is queued or running on `thread`.
        var scheduled = false
        var counts = Counts()
    }

    private let connection: DatabaseQueue
    private let thread = DispatchQueue(label: "kiosk.sqlite.checkpoint")
    private let state = Mutex(State())
    private let logger: Logger

    /// Opens the checkpointing connection to the database file at `path`, which the writer has put in WAL mode.
    init(path: String, logger: Logger) throws {
        connection = try DatabaseQueue(path: path)
        self.logger = logger
    }

    var counts: Counts { state.withLock { $0.counts } }

    /// Makes this checkpointer the writer's WAL hook, in place of SQLite's automatic checkpoint. The writer's
    /// `SQLiteDatabase` owns both and uninstalls the hook before either closes, so the unretained pointer never
    /// outlives this object.
    func install(on writer: Database) {
        let pagesWritten = Self.pagesWritten(by: writer.sqliteConnection)
        state.withLock { $0.pagesWritten = pagesWritten }
        sqlite3_wal_hook(writer.sqliteConnection, walHook, Unmanaged.passUnretained(self).toOpaque())
    }

    /// SQLite's count of the pages `connection` wrote (in WAL mode, to the log), on the connection's thread: a 32-bit
    /// counter, so only its differences are added up.
    static func pagesWritten(by connection: OpaquePointer?) -> Int32 {
        var pages: Int32 = 0
        var highest: Int32 = 0
        sqlite3_db_status(connection, SQLITE_DBSTATUS_CACHE_WRITE, &pages, &highest, 0)
        return pages
    }

    /// Puts SQLite's automatic checkpoint back on the writer (so its last `close` still copies and removes the log).
    func uninstall(from writer: Database) {
        sqlite3_wal_autocheckpoint(writer.sqliteConnection, Self.threshold)
    }

    /// Called on the writer's thread after each commit, the write lock released, with the log's length in pages.
    fileprivate func committed(logPages: Int32, writer: OpaquePointer?, name: UnsafePointer<CChar>?) {
        let pagesWritten = Self.pagesWritten(by: writer)
        let startNow = state.withLock { state -> Bool in
            state.counts.pagesLogged += Int(UInt32(bitPattern: pagesWritten &- state.pagesWritten))
            state.pagesWritten = pagesWritten
            // A log shorter than what was copied has started again.
            if logPages < state.copied { state.copied = 0 }
            guard !state.scheduled, logPages < Self.limit, logPages - state.copied >= Self.threshold else {
                return false
            }
            state.scheduled = true
            return true
        }
        if startNow {
            thread.async { self.checkpointBeside() }
        } else if logPages >= Self.limit {
            checkpointInWriter(writer, name: name)
        }
    }

    /// The writer's checkpoint at ``limit``: after this thread's, which leaves it little to copy.
    private func checkpointInWriter(_ writer: OpaquePointer?, name: UnsafePointer<CChar>?) {
        thread.sync {}
        var logPages: Int32 = 0
        var copied: Int32 = 0
        let code = sqlite3_wal_checkpoint_v2(writer, name, SQLITE_CHECKPOINT_PASSIVE, &logPages, &copied)
        state.withLock { state in
            state.counts.byWriter += 1
            if code == SQLITE_OK { state.copied = copied }
        }
        if code != SQLITE_OK {
            logger.error("The writer's checkpoint failed", metadata: ["code": "\(code)"])
        }
    }

    private func checkpointBeside() {
        do {
            let (_, copied) = try connection.inDatabase { try $0.checkpoint(.passive) }
            state.withLock { state in
                state.copied = Int32(clamping: copied)
                state.counts.beside += 1
                state.scheduled = false
            }
        } catch {
            state.withLock { $0.scheduled = false }
            // SQLITE_BUSY: the writer's own checkpoint is running, and copies what this one would have.
            logger.debug("A checkpoint beside the writer did not run", metadata: ["error": "\(error)"])
        }
    }

    /// Returns once every checkpoint asked for so far has ended.
    func finished() async {
        await withCheckedContinuation { continuation in thread.async { continuation.resume() } }
    }

    /// Closes the connection once the checkpoint under way, if any, has ended.
    func close() async throws {
        await finished()
        try connection.close()
    }
}

/// `sqlite3_wal_hook`'s callback: `context` is the writer's ``SQLiteCheckpointer``.
private func walHook(
    context: UnsafeMutableRawPointer?, writer: OpaquePointer?, name: UnsafePointer<CChar>?, logPages: Int32
) -> Int32 {
    if let context {
        Unmanaged<SQLiteCheckpointer>.fromOpaque(context).takeUnretainedValue()
            .committed(logPages: logPages, writer: writer, name: name)
    }
    return SQLITE_OK
}
