import Foundation

/// Durability helpers: a renamed file is only safe once its data and its folder are on disk.
enum DurableFile {
    static func fsync(_ url: URL) throws {
        let fd = open(url.path, O_RDONLY)
        guard fd >= 0 else { throw POSIXFailure(operation: "open \(url.lastPathComponent)", code: errno) }
        defer { close(fd) }
        guard Glibc.fsync(fd) == 0 else { throw POSIXFailure(operation: "fsync \(url.lastPathComponent)", code: errno) }
    }

    static func fsyncFolder(_ url: URL) throws {
        let fd = open(url.path, O_RDONLY | O_DIRECTORY)
        guard fd >= 0 else { throw POSIXFailure(operation: "open folder \(url.lastPathComponent)", code: errno) }
        defer { close(fd) }
        _ = Glibc.fsync(fd)
    }
}
