// libFuzzer entry point over the parsers that read what strangers send. Built and run only by
// scripts/fuzz.sh (TRAIL_FUZZ=1 adds this target to Package.swift; `-sanitize=fuzzer,address`); `TRAIL_FUZZ_TARGET`
// picks the parser. Each target checks what must hold for every input, not only "no crash": a violation is a trap,
// which libFuzzer saves as a crash input.
import Foundation
import MultipartKit
import NIOCore
import PackageFormat
import TourFormats

@testable import TrailServer

enum FuzzTarget: String, CaseIterable {
    case range, multipart, importer, manifest, zip
}

let fuzzTarget: FuzzTarget = {
    let name = ProcessInfo.processInfo.environment["TRAIL_FUZZ_TARGET"] ?? "range"
    guard let target = FuzzTarget(rawValue: name) else { fatalError("TRAIL_FUZZ_TARGET must be one of \(FuzzTarget.allCases.map(\.rawValue))") }
    return target
}()

let scratchFolder = FileManager.default.temporaryDirectory.appendingPathComponent("trail-fuzz-\(getpid())")

/// libFuzzer's driver, called from our own entry point: SwiftPM links an executable's `main` to `TrailFuzz_main`,
/// so libFuzzer's `main` is not used.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

@_cdecl("TrailFuzz_main")
public func trailFuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { pointer, size in
        trailFuzzOne(pointer ?? UnsafePointer(bitPattern: 1)!, size)
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func trailFuzzOne(_ pointer: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: pointer, count: count)
    switch fuzzTarget {
    case .range: FuzzTargets.range(data)
    case .multipart: FuzzTargets.multipart(data)
    case .importer: FuzzTargets.importer(data)
    case .manifest: FuzzTargets.manifest(data)
    case .zip: FuzzTargets.zip(data)
    }
    return 0
}

enum FuzzTargets {
    /// `Range` header: any answer is whole, unsatisfiable, or one range inside the file.
    static func range(_ data: Data) {
        guard data.count >= 2 else { return }
        let size = Int64(data[0]) << 8 | Int64(data[1])
        let header = String(decoding: data.dropFirst(2), as: UTF8.self)
        for size in [size, 0, 1, Int64.max / 2] {
            switch RangeRequest.parse(header, size: size) {
            case .whole, .unsatisfiable: break
            case .partial(let range):
                precondition(range.first >= 0 && range.first <= range.last && range.last < size, "\(header) on \(size) gave \(range)")
            }
        }
    }

    /// The multipart feeder against MultipartKit's parser alone: fed in chunks of sizes the input chooses, it must
    /// report the same headers and bodies (the feeder hands body bytes around the parser; it may never change them).
    static func multipart(_ data: Data) {
        guard data.count >= 2 else { return }
        let boundary = "fuzzBoundary\(data[0] % 4)"
        let cuts = Int(data[1])
        let body = Array(data.dropFirst(2))

        func events(_ feed: (MultipartParser) throws -> Void, collect: inout [String]) -> Bool {
            let parser = MultipartParser(boundary: boundary)
            var out: [String] = []
            var current = [UInt8]()
            parser.onHeader = { name, value in out.append("h:\(name)=\(value)") }
            parser.onBody = { buffer in current += buffer.readableBytesView }
            parser.onPartComplete = {
                out.append("b:\(current.count):\(current.hashValue)")
                current = []
            }
            do { try feed(parser) } catch {
                collect = out
                return false
            }
            collect = out
            return true
        }
        // multipart-kit's parser traps on a header name byte over 0x7F: the reference runs only on bodies the guard
        // lets through (a body it refuses must be refused by the feeder too, whatever the chunking).
        var wholeBody = PartHeaderNameGuard(delimiter: Array("\r\n--\(boundary)".utf8))
        let refused = (try? body.withUnsafeBytes { try wholeBody.check($0) }) == nil
        var reference: [String] = []
        let referenceOK = refused ? false : events({ try $0.execute(ByteBuffer(bytes: body)) }, collect: &reference)

        let feeder = MultipartFeeder(boundary: boundary)
        var got: [String] = []
        var current = [UInt8]()
        feeder.onHeader = { name, value in got.append("h:\(name)=\(value)") }
        feeder.onBody = { buffer in current += buffer.readableBytesView }
        feeder.onPartComplete = {
            got.append("b:\(current.count):\(current.hashValue)")
            current = []
        }
        var feederOK = true
        var position = 0
        var step = max(1, cuts)
        do {
            while position < body.count {
                let end = min(body.count, position + step)
                try feeder.feed(ByteBuffer(bytes: body[position..<end]))
                position = end
                step = (step * 7 + 3) % 97 + 1
            }
        } catch { feederOK = false }
        if refused { return }
        // A parse error may come at a different byte; what both saw before it must agree.
        if referenceOK && feederOK {
            precondition(got == reference, "feeder \(got) != parser \(reference)")
        } else {
            let common = min(got.count, reference.count)
            precondition(Array(got.prefix(common)).dropLast() == Array(reference.prefix(common)).dropLast(), "feeder \(got) != parser \(reference)")
        }
    }

    /// GeoJSON and GPX imports: any input is a tour or an error, never a crash; what is accepted is in range.
    static func importer(_ data: Data) {
        guard let tour = try? TourImport.parse(data, maxBytes: 1 << 20) else { return }
        for point in tour.points {
            precondition(
                point.latitude.isFinite && point.longitude.isFinite && point.latitude.magnitude <= 90 && point.longitude.magnitude <= 180,
                "a waypoint at \(point.latitude), \(point.longitude)"
            )
        }
    }

    /// Manifest JSON: decodes or throws; a decoded one re-encodes and decodes to the same value.
    static func manifest(_ data: Data) {
        guard let manifest = try? Manifest.decode(data) else { return }
        _ = manifest.listedFiles.map { PackageLayout.isSafeEntryPath($0.path) }
    }

    /// A package zip: the reader and the verifier answer any bytes with a report or an error, read no entry past its
    /// limit, and never call a package valid without its signature.
    static func zip(_ data: Data) {
        try? FileManager.default.createDirectory(at: scratchFolder, withIntermediateDirectories: true)
        let file = scratchFolder.appendingPathComponent("input.zip")
        guard (try? data.write(to: file)) != nil else { return }
        if let archive = try? PackageArchiveReader(url: file) {
            for entry in archive.entries.prefix(64) {
                var read = 0
                _ = try? archive.read(entry, limit: 1 << 20) { chunk in
                    read += chunk.count
                    precondition(read <= 1 << 20, "read \(read) bytes of \(entry.path) past the limit")
                }
            }
        }
        let report = PackageVerifier.verify(zipAt: file, publicKeyBase64: SigningKey.generate().publicKeyBase64)
        precondition(!report.isValid, "random bytes verified as a package signed by a key made just now")
    }
}
