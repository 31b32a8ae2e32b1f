import Foundation
import PackageFormat

/// A KMZ: a zip whose first `.kml` entry is the document, with the pictures it refers to beside it. Read with the
/// package reader's defences (``PackageArchiveReader``: every offset checked, output capped as it inflates) and the
/// extraction rules of packages: no unsafe paths, links or encrypted entries, and limits on entries, sizes and
/// compression ratio checked before a byte is inflated. Only the document and the pictures it names are read, into
/// memory; nothing is written to disk here.
struct KMZArchive {
    static let maxEntries = 1_000
    static let maxDocumentBytes: UInt64 = 32 << 20
    static let maxImageBytes: UInt64 = 16 << 20
    static let maxTotalBytes: UInt64 = 64 << 20
    /// All entries together, as the zip's directory states them (most are never read, but an archive claiming more
    /// is no KMZ a map tool wrote).
    static let maxDeclaredBytes: UInt64 = 256 << 20
    /// Uncompressed size to compressed size, for entries over 1 MiB: text deflates well, a zip bomb far better.
    static let maxCompressionRatio: UInt64 = 100

    let reader: PackageArchiveReader
    /// The document's folder inside the archive ("" at the top), against which relative references are resolved.
    let base: String
    private let byPath: [String: ZipEntryInfo]
    private let budget: Budget
    private let rules: ImportRules

    /// The bytes read so far, against ``maxTotalBytes``.
    final class Budget: @unchecked Sendable {
        var used: UInt64 = 0
    }

    static func isZip(_ head: Data) -> Bool { head.starts(with: [0x50, 0x4B, 0x03, 0x04]) || head.starts(with: [0x50, 0x4B, 0x05, 0x06]) }

    static func read(_ url: URL, rules: ImportRules) throws -> ImportedTour {
        let reader: PackageArchiveReader
        do { reader = try PackageArchiveReader(url: url) } catch {
            throw ImportRefused(message: "The KMZ is not a readable zip archive (\(error)).")
        }
        guard reader.declaredEntryCount <= UInt64(maxEntries), reader.entries.count <= maxEntries else {
            throw ImportRefused(message: "The KMZ has \(reader.declaredEntryCount) entries; at most \(maxEntries) are accepted.")
        }
        var byPath: [String: ZipEntryInfo] = [:]
        var declared: UInt64 = 0
        for entry in reader.entries {
            guard PackageLayout.isSafeEntryPath(entry.path) || (entry.isDirectory && PackageLayout.isSafeEntryPath(String(entry.path.dropLast())))
            else {
                throw ImportRefused(
                    message: "The KMZ holds an entry with an unsafe path (“\(entry.path.prefix(80))”): absolute paths and “..” are not allowed."
                )
            }
            if entry.isSymbolicLink {
                throw ImportRefused(message: "The KMZ holds a symbolic link (“\(entry.path.prefix(80))”), which is not allowed.")
            }
            if entry.isEncrypted { throw ImportRefused(message: "The KMZ holds an encrypted entry (“\(entry.path.prefix(80))”).") }
            if entry.isDirectory { continue }
            guard entry.uncompressedSize <= max(maxDocumentBytes, maxImageBytes) else {
                throw ImportRefused(
                    message:
                        "“\(entry.path.prefix(80))” in the KMZ expands to \(entry.uncompressedSize) bytes; an entry may have at most \(max(maxDocumentBytes, maxImageBytes))."
                )
            }
            if entry.uncompressedSize > 1 << 20, entry.uncompressedSize / max(entry.compressedSize, 1) > maxCompressionRatio {
                throw ImportRefused(
                    message:
                        "“\(entry.path.prefix(80))” in the KMZ is compressed more than \(maxCompressionRatio) to 1, as zip bombs are; it is refused."
                )
            }
            declared += entry.uncompressedSize
            byPath[entry.path] = entry
        }
        guard declared <= maxDeclaredBytes else {
            throw ImportRefused(message: "The KMZ expands to \(declared) bytes; at most \(maxDeclaredBytes) are accepted.")
        }
        guard let document = reader.entries.first(where: { !$0.isDirectory && $0.path.lowercased().hasSuffix(".kml") }) else {
            throw ImportRefused(message: "This zip archive holds no .kml document, so it is not a KMZ.")
        }
        let base = document.path.split(separator: "/").dropLast().joined(separator: "/")
        let archive = KMZArchive(reader: reader, base: base, byPath: byPath, budget: Budget(), rules: rules)
        let kml = try archive.bytes(of: document, limit: maxDocumentBytes)
        return try KMLImport.parse(kml, archive: archive, rules: rules)
    }

    private init(reader: PackageArchiveReader, base: String, byPath: [String: ZipEntryInfo], budget: Budget, rules: ImportRules) {
        self.reader = reader
        self.base = base
        self.byPath = byPath
        self.budget = budget
        self.rules = rules
    }

    /// An entry's bytes, never more than `limit` nor than the zip's directory says (a stream that inflates further is
    /// cut off and refused), and within the archive's total.
    func bytes(of entry: ZipEntryInfo, limit: UInt64) throws -> Data {
        let cap = min(limit, entry.uncompressedSize, Self.maxTotalBytes - min(budget.used, Self.maxTotalBytes))
        guard entry.uncompressedSize <= cap else {
            throw ImportRefused(
                message: "“\(entry.path.prefix(80))” in the KMZ is larger than the import allows (\(Wording.megabytes(Int(cap))) left for it)."
            )
        }
        var data = Data()
        do {
            let crc = try reader.read(entry, limit: cap) { data.append($0) }
            guard crc == entry.crc32, UInt64(data.count) == entry.uncompressedSize else {
                throw ImportRefused(message: "“\(entry.path.prefix(80))” in the KMZ is damaged (its size or checksum does not match).")
            }
        } catch let refusal as ImportRefused {
            throw refusal
        } catch ZipReadError.tooLarge(let path, let limit) {
            throw ImportRefused(message: "“\(path.prefix(80))” in the KMZ expands past \(limit) bytes, more than its directory says; it is refused.")
        } catch {
            throw ImportRefused(message: "“\(entry.path.prefix(80))” in the KMZ cannot be read (\(error)).")
        }
        budget.used += UInt64(data.count)
        return data
    }

    /// The pictures a placemark refers to that the archive holds; the others, with why they are left out.
    func images(for placemark: KMLImport.Placemark) throws -> ([ImportedTour.Image], ImportedTour.LeftOutList) {
        var images: [ImportedTour.Image] = []
        var leftOut = ImportedTour.LeftOutList()
        var seen = Set<String>()
        for reference in placemark.imageReferences {
            let shown = String(reference.prefix(120))
            func leave(_ reason: String) { leftOut.append(.init(kind: "image", name: "\(placemark.name): \(shown)", reason: reason)) }
            let lowered = reference.lowercased()
            if lowered.contains("://") || lowered.hasPrefix("data:") || lowered.hasPrefix("//") {
                leave("not fetched (a web address; only pictures inside the KMZ are imported)")
                continue
            }
            var relative = reference.removingPercentEncoding ?? reference
            while relative.hasPrefix("./") { relative.removeFirst(2) }
            let path = base.isEmpty ? relative : "\(base)/\(relative)"
            guard PackageLayout.isSafeEntryPath(path), !relative.hasPrefix("/") else {
                leave("unsafe path")
                continue
            }
            guard seen.insert(path).inserted else { continue }
            guard let entry = byPath[path] else {
                leave("not in the KMZ")
                continue
            }
            let data = try bytes(of: entry, limit: Self.maxImageBytes)
            if let refusal = rules.refusePicture(data) {
                leave(refusal)
                continue
            }
            images.append(.init(path: path, data: data))
        }
        return (images, leftOut)
    }
}
