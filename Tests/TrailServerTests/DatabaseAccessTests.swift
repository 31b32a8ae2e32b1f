import Foundation
import GRDB
import NIOConcurrencyHelpers
import NIOPosix
import Testing

@testable import TrailServer

@Suite("one way to the database")
struct DatabaseAccessTests {
    @Test("SQLite run synchronously on a Swift task or on an event loop is reported; awaited access and other threads are not")
    func blockingAccessIsCaught() async throws {
        let reports = NIOLockedValueBox<[String]>([])
        let database = try AppDatabase.inMemory(
            migrationsFolder: projectRoot.appendingPathComponent("migrations"),
            onBlockingAccess: { problem, _ in reports.withLockedValue { $0.append(problem) } }
        )
        // The migrations at open, an intention method, and the awaited building-block access: nothing to report.
        _ = try await database.userCount()
        _ = try await database.read { try Int.fetchOne($0, sql: "SELECT 1") }
        #expect(reports.withLockedValue { $0 }.isEmpty)

        // What a request handler calling SQLite directly would do: a synchronous read on its task.
        _ = try await database.writer.read { try Int.fetchOne($0, sql: "SELECT 1") }
        // (One report per statement: the read's BEGIN, SELECT and COMMIT.)
        #expect(Set(reports.withLockedValue { $0 }) == ["ran synchronously on a Swift task"])

        // The same on an event loop.
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        try await loop.submit { _ = try database.writer.read { try Int.fetchOne($0, sql: "SELECT 1") } }.get()
        #expect(Set(reports.withLockedValue { $0 }) == ["ran synchronously on a Swift task", "ran on an event loop"])
        let reported = reports.withLockedValue { $0.count }

        // A thread of its own (a blocking pool's) may wait for SQLite.
        try await BlockingWork.short { _ = try database.writer.read { try Int.fetchOne($0, sql: "SELECT 1") } }
        #expect(reports.withLockedValue { $0.count } == reported)
    }
}
