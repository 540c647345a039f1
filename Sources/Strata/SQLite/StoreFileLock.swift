import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An advisory lock on a store file (BSD `flock`): every open file store holds it shared; a
/// migration holds it exclusively. A migration therefore never runs under a container that has
/// the store open with the old schema, and no container opens a store halfway through its
/// migration.
///
/// The process keeps **one** open descriptor per store file, shared by every lock on it, and
/// closes it only when the last of them is released: closing any descriptor of a file drops
/// the POSIX locks SQLite's connections in this process hold on it, which would let another
/// process delete the WAL under them. Within the process, conflicts are found in that table
/// (two containers share; a migration excludes them); across processes, by `flock`.
/// Where the file system has no `flock` (some network file systems), nothing is refused.
final class StoreFileLock: Sendable {
    /// A file, by device and inode.
    private struct FileID: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    /// The process's one descriptor per locked file, and who holds it.
    private struct Entry {
        var descriptor: Int32
        var sharedHolders: Int
        var isExclusive: Bool
    }

    private static let entries = LockedBox<[FileID: Entry]>([:])

    /// The file this lock holds; `nil` when there was no regular file to lock, or once released.
    private let file: LockedBox<FileID?>
    private let exclusive: Bool

    /// Takes the lock on the file at `url`, shared or exclusive, without waiting.
    ///
    /// - Throws: ``StrataError`` with ``StrataError/Code/storeInUse`` when another holder's
    ///   lock (in this process or another) excludes this one.
    init(url: URL, exclusive: Bool) throws {
        self.exclusive = exclusive
        func inUse() -> StrataError {
            StrataError(
                .storeInUse,
                exclusive
                    ? "The store at \(url.path) is open in another container or process; close every container that has it open, then migrate. The store was not modified."
                    : "The store at \(url.path) is being migrated by another container or process; open it when the migration has finished.",
                fileURL: url)
        }
        var status = stat()
        guard stat(url.path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            file = LockedBox(nil)  // no regular file to lock (yet): opening reports what is wrong
            return
        }
        let id = FileID(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
        let taken: FileID? = try Self.entries.withLock { entries in
            if var entry = entries[id] {
                guard !exclusive, !entry.isExclusive else { throw inUse() }
                entry.sharedHolders += 1
                entries[id] = entry
                return id
            }
            // Non-blocking: a FIFO swapped in at the path must not hang the open.
            let descriptor = open(url.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
            guard descriptor >= 0 else { return nil }
            var opened = stat()
            guard fstat(descriptor, &opened) == 0, UInt64(opened.st_dev) == id.device, UInt64(opened.st_ino) == id.inode else {
                // Replaced between the two looks; this process has no connection on the new file.
                close(descriptor)
                throw inUse()
            }
            // A lock this process just released can stay held for a moment by a child process
            // that another thread is starting (it holds copies of our descriptors until it
            // executes): a conflict is only believed after it lasted a second.
            var locked = flock(descriptor, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0
            var code = locked ? 0 : errno
            for _ in 0..<50 where !locked && (code == EWOULDBLOCK || code == EAGAIN) {
                usleep(20_000)
                locked = flock(descriptor, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0
                code = locked ? 0 : errno
            }
            guard locked else {
                // No store of this process has the file open (it would be in the table), so
                // closing drops no lock of ours.
                close(descriptor)
                if code == EWOULDBLOCK || code == EAGAIN { throw inUse() }
                return nil  // no flock on this file system: do without
            }
            entries[id] = Entry(descriptor: descriptor, sharedHolders: exclusive ? 0 : 1, isExclusive: exclusive)
            return id
        }
        file = LockedBox(taken)
    }

    /// Whether the lock is held (there was a file to lock, and it was not released).
    var isHolding: Bool { file.withLock { $0 != nil } }

    /// Runs `body` with the process's open descriptor of the file at `url`, if a lock holds one
    /// (so that the file can be read without opening and closing another descriptor, which
    /// would drop SQLite's locks); `nil` otherwise.
    static func withRegisteredDescriptor<T>(of url: URL, _ body: (Int32?) throws -> T) rethrows -> T {
        var status = stat()
        guard stat(url.path, &status) == 0 else { return try body(nil) }
        let id = FileID(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
        return try entries.withLock { entries in try body(entries[id]?.descriptor) }
    }

    /// Releases the lock; the descriptor closes with the last lock on the file, once every
    /// store of the file in this process has closed its connections. Later calls do nothing.
    func release() {
        guard let id = file.withLock({ id -> FileID? in
            defer { id = nil }
            return id
        }) else { return }
        Self.entries.withLock { entries in
            guard var entry = entries[id] else { return }
            if exclusive { entry.isExclusive = false } else { entry.sharedHolders -= 1 }
            if entry.sharedHolders <= 0, !entry.isExclusive {
                close(entry.descriptor)
                entries[id] = nil
            } else {
                entries[id] = entry
            }
        }
    }

    deinit { release() }
}
