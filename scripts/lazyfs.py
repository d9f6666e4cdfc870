#!/usr/bin/env python3
"""A pass-through FUSE filesystem that loses what was never fsynced when the power is cut.

The power-cut tests run the store's and the merchant's databases on it (`kiosk-chaos --power-cut`). File data
written through the mount (writes and truncations) stays in this process's memory, page by page, until the file
is fsynced (`fsync` or `fdatasync`, on any descriptor of it); only then does it reach the backing directory and
its disk. A cut (`lazyfs.py cut --control SOCKET`) discards every page not yet fsynced, as a power cut empties
the page cache: whatever was only written is gone, whatever was fsynced stays.

This is the optimistic side of a real disk: metadata (creating, renaming, unlinking a file, directories,
permissions) goes to the backing directory at once and is never lost, and an fsync persists the whole file at
once (no torn pages). A program that loses data here loses it on any machine; one that survives here may still
depend on a directory fsync a real disk needs.

    lazyfs.py mount BACKING MOUNTPOINT --control SOCKET   # runs until SIGTERM (then unmounts)
    lazyfs.py cut --control SOCKET                       # prints what was discarded
    lazyfs.py stats --control SOCKET                     # prints what is pending

Needs fusepy (Debian's python3-fusepy names the module `fusepy`, PyPI's `fuse`) and libfuse 2, and the right to
mount (root, or fusermount).
"""

import argparse
import errno
import os
import signal
import socket
import socketserver
import stat
import sys
import threading

try:
    import fusepy as fuse
except ImportError:
    import fuse

PAGE = 4096


class Pending:
    """A file's data since its last fsync: its size now, how far the backing file's bytes still count (a
    truncation below them hides them), and the pages written since."""

    def __init__(self, size):
        self.size = size
        self.floor = size
        self.pages = {}


class LazyFS(fuse.Operations):
    use_ns = True

    def __init__(self, backing, control):
        self.backing = os.path.realpath(backing)
        self.control = control
        self.mutex = threading.Lock()
        # By the backing file's inode, so every name and descriptor of a file shares its pending data.
        self.pending = {}
        self.fsyncs = 0

    def _path(self, path):
        return os.path.join(self.backing, path.lstrip("/"))

    def _owned(self, path):
        """Gives a new file or directory to the process that made it (the daemon runs as root)."""
        uid, gid, _ = fuse.fuse_get_context()
        os.lchown(path, uid, gid)

    # The control socket: started once the filesystem is mounted, so its existence says the mount is ready.

    def init(self, path):
        daemon = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self):
                command = self.rfile.readline().decode().strip()
                answer = daemon.cut() if command == "cut" else daemon.stats() if command == "stats" else "?"
                self.wfile.write((answer + "\n").encode())

        if os.path.exists(self.control):
            os.unlink(self.control)
        server = socketserver.UnixStreamServer(self.control, Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()

    def cut(self):
        """The power cut: every page not yet fsynced is dropped."""
        with self.mutex:
            files = len(self.pending)
            pages = sum(len(p.pages) for p in self.pending.values())
            self.pending.clear()
            fsyncs, self.fsyncs = self.fsyncs, 0
        return f"discarded {pages} unsynced page(s) of {files} file(s); {fsyncs} fsync(s) since the last cut"

    def stats(self):
        with self.mutex:
            pages = sum(len(p.pages) for p in self.pending.values())
            return f"{pages} unsynced page(s) of {len(self.pending)} file(s); {self.fsyncs} fsync(s)"

    # Reading and writing through the pending pages.

    def _clean_page(self, fd, pending, index):
        """Page `index` as the disk has it, bytes past the pending truncation floor read as zeros."""
        start = index * PAGE
        valid = max(0, min(PAGE, pending.floor - start))
        data = os.pread(fd, valid, start) if valid else b""
        return bytearray(data.ljust(PAGE, b"\0"))

    def read(self, path, size, offset, fh):
        with self.mutex:
            pending = self.pending.get(os.fstat(fh).st_ino)
            if pending is None:
                return os.pread(fh, size, offset)
            end = min(offset + size, pending.size)
            out = bytearray()
            position = offset
            while position < end:
                index = position // PAGE
                page = pending.pages.get(index) or self._clean_page(fh, pending, index)
                chunk = page[position - index * PAGE : min(PAGE, end - index * PAGE)]
                out += chunk
                position += len(chunk)
            return bytes(out)

    def _pending(self, fh):
        inode = os.fstat(fh)
        if inode.st_ino not in self.pending:
            self.pending[inode.st_ino] = Pending(inode.st_size)
        return self.pending[inode.st_ino]

    def write(self, path, data, offset, fh):
        with self.mutex:
            pending = self._pending(fh)
            position = 0
            while position < len(data):
                index = (offset + position) // PAGE
                within = (offset + position) % PAGE
                page = pending.pages.get(index) or self._clean_page(fh, pending, index)
                chunk = data[position : position + PAGE - within]
                page[within : within + len(chunk)] = chunk
                pending.pages[index] = page
                position += len(chunk)
            pending.size = max(pending.size, offset + len(data))
            return len(data)

    def _truncate(self, fh, length):
        pending = self._pending(fh)
        pending.size = length
        pending.floor = min(pending.floor, length)
        last = length // PAGE
        for index in [i for i in pending.pages if i > last or (i == last and length % PAGE == 0)]:
            del pending.pages[index]
        if last in pending.pages:
            pending.pages[last][length % PAGE :] = bytes(PAGE - length % PAGE)

    def truncate(self, path, length, fh=None):
        with self.mutex:
            if fh is not None:
                self._truncate(fh, length)
                return
            fd = os.open(self._path(path), os.O_RDWR)
            try:
                self._truncate(fd, length)
            finally:
                os.close(fd)

    def fsync(self, path, datasync, fh):
        """Persists the file's pending pages and size, and fsyncs the backing file. Through any descriptor, as on a
        real disk: a read-only one persists the pages too (through a read-write descriptor of the same file)."""
        with self.mutex:
            self.fsyncs += 1
            pending = self.pending.pop(os.fstat(fh).st_ino, None)
            writable = os.open(f"/proc/self/fd/{fh}", os.O_RDWR)
            try:
                if pending is not None:
                    os.ftruncate(writable, pending.floor)
                    for index, page in pending.pages.items():
                        start = index * PAGE
                        if start < pending.size:
                            os.pwrite(writable, bytes(page[: pending.size - start]), start)
                    os.ftruncate(writable, pending.size)
                os.fsync(writable)
            finally:
                os.close(writable)

    def getattr(self, path, fh=None):
        with self.mutex:
            st = os.fstat(fh) if fh is not None else os.lstat(self._path(path))
            attributes = {
                key: getattr(st, key)
                for key in (
                    "st_mode", "st_ino", "st_nlink", "st_uid", "st_gid", "st_size", "st_blocks",
                    "st_atime_ns", "st_mtime_ns", "st_ctime_ns",
                )
            }
            for key in ("atime", "mtime", "ctime"):
                attributes["st_" + key] = attributes.pop(f"st_{key}_ns")
            pending = self.pending.get(st.st_ino) if stat.S_ISREG(st.st_mode) else None
            if pending is not None:
                attributes["st_size"] = pending.size
            return attributes

    # Opening: the backing file always read-write (a write through any descriptor may need to read a page back);
    # a truncation on open is a pending one.

    def open(self, path, flags):
        fd = os.open(self._path(path), os.O_RDWR if flags & os.O_ACCMODE else os.O_RDONLY)
        if flags & os.O_TRUNC:
            self.truncate(path, 0, fd)
        return fd

    def create(self, path, mode, fi=None):
        fd = os.open(self._path(path), os.O_RDWR | os.O_CREAT | os.O_EXCL, mode)
        self._owned(self._path(path))
        return fd

    def release(self, path, fh):
        with self.mutex:
            inode = os.fstat(fh)
            if inode.st_nlink == 0:
                self.pending.pop(inode.st_ino, None)
            os.close(fh)

    def flush(self, path, fh):
        return 0

    def fsyncdir(self, path, datasync, fh):
        return 0

    # Metadata: passed through, durable at once.

    def readdir(self, path, fh):
        return [".", ".."] + os.listdir(self._path(path))

    def mkdir(self, path, mode):
        os.mkdir(self._path(path), mode)
        self._owned(self._path(path))

    def rmdir(self, path):
        os.rmdir(self._path(path))

    def unlink(self, path):
        with self.mutex:
            os.unlink(self._path(path))

    def rename(self, old, new):
        with self.mutex:
            os.rename(self._path(old), self._path(new))

    def link(self, target, source):
        os.link(self._path(source), self._path(target))

    def symlink(self, target, source):
        os.symlink(source, self._path(target))
        self._owned(self._path(target))

    def readlink(self, path):
        return os.readlink(self._path(path))

    def chmod(self, path, mode):
        os.chmod(self._path(path), mode)

    def chown(self, path, uid, gid):
        os.lchown(self._path(path), uid, gid)

    def utimens(self, path, times=None):
        os.utime(self._path(path), ns=times, follow_symlinks=False)

    def statfs(self, path):
        st = os.statvfs(self._path(path))
        return {key: getattr(st, key) for key in ("f_bsize", "f_frsize", "f_blocks", "f_bfree", "f_bavail",
                                                   "f_files", "f_ffree", "f_favail", "f_flag", "f_namemax")}

    def __call__(self, op, *args):
        # An OSError from the backing directory goes back to the caller as its errno.
        try:
            return super().__call__(op, *args)
        except OSError as error:
            raise fuse.FuseOSError(error.errno or errno.EIO)


def ask(control, command):
    """Sends a command to a mounted LazyFS and answers its reply."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.connect(control)
        connection.sendall((command + "\n").encode())
        return connection.makefile().readline().strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["mount", "cut", "stats"])
    parser.add_argument("paths", nargs="*", help="mount: BACKING MOUNTPOINT")
    parser.add_argument("--control", required=True, help="the control socket's path")
    arguments = parser.parse_args()
    if arguments.command != "mount":
        print(ask(arguments.control, arguments.command))
        return
    if len(arguments.paths) != 2:
        parser.error("mount needs BACKING and MOUNTPOINT")
    backing, mountpoint = arguments.paths
    # libfuse unmounts and ends on SIGTERM only if it finds the default handler and the signal unblocked (a parent
    # may have left it ignored, or blocked, as a thread of Swift's dispatch pool does).
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
    fuse.FUSE(
        LazyFS(backing, os.path.abspath(arguments.control)), mountpoint, foreground=True,
        # Root mounts it for the store, the merchant and PostgreSQL's own user; the kernel checks permissions.
        allow_other=True, default_permissions=True,
        # No cached sizes or names: after a cut, every process sees what the disk kept.
        attr_timeout=0, entry_timeout=0, negative_timeout=0,
    )


if __name__ == "__main__":
    sys.exit(main())
