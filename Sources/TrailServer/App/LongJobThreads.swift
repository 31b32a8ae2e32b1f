import NIOPosix

/// Work that reads or writes whole large files for seconds to minutes: building and verifying a package (and staging
/// its inputs), checking an uploaded MBTiles file and cutting it into a package, extracting a package's files for
/// delta updates. It runs on threads of its own: on `NIOThreadPool.singleton` (two threads on a two-core server) a
/// build or two would hold the threads that bcrypt, file-type detection and caption checks need, and sign-ins and
/// uploads would wait for a package, long enough for an upload to hit its 30 s read time-out while a large one builds.
enum LongJobThreads {
    static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 2)
        pool.start()
        return pool
    }()
}
