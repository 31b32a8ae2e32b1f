#if canImport(Glibc)
import Glibc
#endif

/// Hands the memory of a large import back to the system once it is read. glibc keeps freed memory in its arenas for
/// the next allocation, and a thread of the import pool has an arena of its own: after each large import about
/// 400 MiB stayed with the server, so a few imports left it at several times its usual size. `malloc_trim(0)` returns
/// the free pages of every arena. It walks them all (milliseconds), so it runs on the import pool after imports above
/// ``trimAboveBytes`` only, never on an event loop.
enum ImportMemory {
    /// Imports this size and larger are followed by a trim; smaller ones leave too little behind to be worth one.
    static let trimAboveBytes = 1 << 20

    /// glibc's `malloc_trim`, looked up at run time: Swift's Glibc module does not export `<malloc.h>`, and another
    /// C library (musl) has none, where this does nothing.
    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        #if canImport(Glibc)
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
        #else
        return nil
        #endif
    }()

    /// Returns free memory to the system after an import of `bytes`; true when a trim ran. Call it on the import pool.
    @discardableResult
    static func trim(afterImportOf bytes: Int) -> Bool {
        guard bytes >= trimAboveBytes, let mallocTrim else { return false }
        _ = mallocTrim(0)
        return true
    }
}
