import NIOPosix

/// Checking an uploaded MBTiles file and cutting it into a package read every tile of a file that may be large.
/// They run on threads of their own: on `NIOThreadPool.singleton` (two threads on a two-core server) they would hold
/// the threads that bcrypt needs, and sign-ins would wait for a map upload.
enum MBTilesThreads {
    static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 2)
        pool.start()
        return pool
    }()
}
