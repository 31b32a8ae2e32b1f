import NIOPosix

/// Every kind of blocking work the server does, and the one pool each kind runs on. Nothing here may run on an event
/// loop or a cooperative thread (one per core: two blocked ones stop every request of a two-core server), and kinds
/// get separate pools so that a slow kind cannot starve a quick one.
///
/// | kind | pool | threads |
/// |---|---|---|
/// | quick calls of milliseconds: bcrypt, file-type and caption checks, a media file's duration, one tile read from an MBTiles file, a tile host's DNS lookup, a signing-key read | ``short(_:)``, NIO's shared pool | one per core |
/// | whole large files for seconds to minutes: staging, building and verifying a package, checking an uploaded MBTiles file and cutting it into a package, extracting a package's files for delta updates | ``files(_:)`` | 2 |
/// | reading an import file (GeoJSON, GPX, KML, KMZ, CSV up to the import limit): seconds of CPU each, admitted by ``ImportSlots`` by size (four at the size limit at once) | ``imports(_:)`` | 2 |
/// | drawing a print file (a trailhead sign or a booklet, Cairo and Pango): a second or so of CPU each, admitted by ``PrintSlots`` (two at once) | ``printing(_:)`` | 2 |
/// | waiting for a converter (ffmpeg, ffprobe, vips) in its bounded child process | ``converters`` (`ConverterProcess`) | 6 |
/// | SQLite (the app's database) | GRDB's own: every ``AppDatabase`` method is `async` and awaits `writer.read`/`write`, which run on the database's serial writer queue and reader pool | 1 writer, 5 readers |
/// | malware scans (libclamav in process, or clamd's socket) | the scanner's own pools in `MalwareScan` (`BlockingThreadPool`, made in `makeScanner`) | 2 scans, and 1 for loading signatures or talking to clamd |
///
/// File reads and writes of requests (uploads, downloads) use NIO's file system, which has its own small pool.
enum BlockingWork {
    /// Quick blocking calls. On NIO's shared pool (as many threads as cores), which nothing long may hold: a package
    /// build or two there would hold the threads that bcrypt, file-type detection and caption checks need, and
    /// sign-ins and uploads would wait for a package long enough for an upload to hit its read time-out.
    static func short<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await NIOThreadPool.singleton.runIfActive(work)
    }

    /// Work that reads or writes whole large files for seconds to minutes (see the table above).
    static func files<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await filesPool.runIfActive(work)
    }

    private static let filesPool = started(NIOThreadPool(numberOfThreads: 2))

    /// Parsing an import file. Its own pool: a burst of imports waits for these two threads instead of taking the
    /// cooperative threads (which every request's handler needs) or the file pool (which package builds need).
    static func imports<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await importsPool.runIfActive(work)
    }

    private static let importsPool = started(NIOThreadPool(numberOfThreads: 2))

    /// Drawing a print file. Its own pool: a few people printing signs at once wait for these two threads instead of
    /// taking the cooperative threads or the file pool.
    static func printing<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await printPool.runIfActive(work)
    }

    private static let printPool = started(NIOThreadPool(numberOfThreads: 2))

    /// Threads that wait for converters: as many as conversions and probes may run at once, plus room for the probes
    /// of the `doctor` and the CLI. Waiting is all they do; the work happens in the child processes.
    static let converters = started(NIOThreadPool(numberOfThreads: 6))

    private static func started(_ pool: NIOThreadPool) -> NIOThreadPool {
        pool.start()
        return pool
    }
}
