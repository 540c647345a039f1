import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An advisory lock on a store file (BSD `flock`, which applies per open file, so two
/// containers of one process exclude each other as two processes do): every open file store
/// holds it shared; a migration holds it exclusively. A migration therefore never runs under a
/// container that has the store open with the old schema, and no container opens a store
/// halfway through its migration.
///
/// SQLite's own locks (POSIX `fcntl` locks on the same file) are independent of it. Where the
/// file system has no `flock` (some network file systems), the lock is not taken and nothing
/// is refused.
final class StoreFileLock: Sendable {
    /// The open file holding the lock; -1 once released.
    private let descriptor: LockedBox<Int32>

    /// Takes the lock on the file at `url`, shared or exclusive, without waiting.
    ///
    /// - Throws: ``StrataError`` with ``StrataError/Code/storeInUse`` when another holder's
    ///   lock excludes this one.
    init(url: URL, exclusive: Bool) throws {
        // Non-blocking: a FIFO at the store's path must not hang the open (which refuses it).
        var file = open(url.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        var status = stat()
        if file >= 0, fstat(file, &status) != 0 || (status.st_mode & S_IFMT) != S_IFREG {
            close(file)
            file = -1
        }
        descriptor = LockedBox(file)
        guard file >= 0 else { return }  // no regular file to lock (yet): opening reports what is wrong
        guard flock(file, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0 else { return }
        let code = errno
        guard code == EWOULDBLOCK || code == EAGAIN else { return }  // no flock here: do without
        close(file)
        descriptor.withLock { $0 = -1 }
        throw StrataError(
            .storeInUse,
            exclusive
                ? "The store at \(url.path) is open in another container or process; close every container that has it open, then migrate. The store was not modified."
                : "The store at \(url.path) is being migrated by another container or process; open it when the migration has finished.",
            fileURL: url)
    }

    /// Whether the lock is held (there was a file to lock, and it was not released).
    var isHolding: Bool { descriptor.withLock { $0 >= 0 } }

    /// Releases the lock (closing the file does); later calls do nothing.
    func release() {
        descriptor.withLock { file in
            if file >= 0 { close(file) }
            file = -1
        }
    }

    deinit { release() }
}
