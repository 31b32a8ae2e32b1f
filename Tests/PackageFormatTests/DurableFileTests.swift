import Foundation
import Testing

@testable import PackageFormat

@Suite struct DurableFileTests {
    static func scratch() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("durable-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test("a durable write replaces the file whole, with the mode asked for, and leaves no temporary file")
    func writeReplacesWhole() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("state")
        try DurableFile.write(Data("one\n".utf8), to: file, mode: 0o600)
        try DurableFile.write(Data("two\n".utf8), to: file, mode: 0o640)
        #expect(try String(contentsOf: file, encoding: .utf8) == "two\n")
        let mode = (try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? NSNumber)?.intValue
        #expect(mode == 0o640, "the mode asked for, whatever the umask")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["state"])
    }

    @Test("a write into a missing folder fails and creates nothing; writeAll writes every region")
    func failuresAndRegions() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(throws: (any Error).self) { try DurableFile.write(Data("x".utf8), to: folder.appendingPathComponent("no/such/file")) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)

        let path = folder.appendingPathComponent("regions").path
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        #expect(descriptor >= 0)
        // Several regions, as DispatchData from a network read has.
        var bytes = DispatchData.empty
        for part in ["ab", "cde", "f"] { part.utf8.withContiguousStorageIfAvailable { bytes.append(UnsafeRawBufferPointer($0)) } }
        try DurableFile.writeAll(bytes, to: descriptor, path: path)
        try DurableFile.fsync(descriptor: descriptor, path: path)
        close(descriptor)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "abcdef")
        try DurableFile.fsyncTree(folder)
    }
}
