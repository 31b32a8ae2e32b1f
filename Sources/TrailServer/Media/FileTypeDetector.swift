import Foundation

/// Decides what a file is from its first bytes (magic numbers), never from its name or Content-Type.
enum FileTypeDetector {
    struct Detected: Sendable, Equatable {
        let kind: AssetKind
        let mimeType: String
        let fileExtension: String
    }

    /// Shown in the 415 answer.
    static let acceptedDescription =
        "video (MP4, QuickTime, WebM), audio (MP3, M4A/AAC, Ogg, WAV, FLAC), image (JPEG, PNG, WebP, GIF), text (UTF-8 plain text or Markdown)"

    /// How many leading bytes `detect` needs.
    static let headerLength = 64

    /// Text files are read whole to check UTF-8, so they have a size cap of their own.
    static let maxTextSize: Int64 = 5 * 1024 * 1024

    /// - Parameters:
    ///   - header: the first `headerLength` bytes (fewer for small files).
    ///   - isValidUTF8Text: called only when no binary format matched, to check the whole file.
    static func detect(header: [UInt8], fileSize: Int64, isValidUTF8Text: () throws -> Bool) rethrows -> Detected? {
        func starts(_ bytes: [UInt8], at offset: Int = 0) -> Bool {
            header.count >= offset + bytes.count && Array(header[offset..<offset + bytes.count]) == bytes
        }
        func ascii(_ text: String, at offset: Int = 0) -> Bool { starts(Array(text.utf8), at: offset) }

        // ISO base media (MP4, QuickTime, M4A): "ftyp" at 4, the brand after it.
        if ascii("ftyp", at: 4), header.count >= 12 {
            let brand = String(decoding: header[8..<12], as: UTF8.self)
            switch brand {
            case "qt  ": return Detected(kind: .video, mimeType: "video/quicktime", fileExtension: "mov")
            case "M4A ", "M4B ", "M4P ", "F4A ": return Detected(kind: .audio, mimeType: "audio/mp4", fileExtension: "m4a")
            default: return Detected(kind: .video, mimeType: "video/mp4", fileExtension: "mp4")
            }
        }
        // QuickTime files without ftyp start with a moov/mdat/wide/free atom.
        if ["moov", "mdat", "wide", "free", "skip"].contains(where: { ascii($0, at: 4) }) {
            return Detected(kind: .video, mimeType: "video/quicktime", fileExtension: "mov")
        }
        if starts([0x1A, 0x45, 0xDF, 0xA3]) {
            // EBML: WebM declares its doctype early; other Matroska files are not accepted.
            if findASCII("webm", in: header) != nil {
                return Detected(kind: .video, mimeType: "video/webm", fileExtension: "webm")
            }
            return nil
        }
        if ascii("ID3") || (header.count >= 2 && header[0] == 0xFF && (header[1] & 0xE0) == 0xE0 && (header[1] & 0x06) != 0) {
            // ID3 tag, or an MPEG audio frame sync with a layer set (not an AAC ADTS header, whose layer bits are 0).
            return Detected(kind: .audio, mimeType: "audio/mpeg", fileExtension: "mp3")
        }
        if header.count >= 2 && header[0] == 0xFF && (header[1] & 0xF6) == 0xF0 {
            return Detected(kind: .audio, mimeType: "audio/aac", fileExtension: "aac")
        }
        if ascii("OggS") { return Detected(kind: .audio, mimeType: "audio/ogg", fileExtension: "ogg") }
        if ascii("RIFF"), ascii("WAVE", at: 8) { return Detected(kind: .audio, mimeType: "audio/wav", fileExtension: "wav") }
        if ascii("fLaC") { return Detected(kind: .audio, mimeType: "audio/flac", fileExtension: "flac") }
        if starts([0xFF, 0xD8, 0xFF]) { return Detected(kind: .image, mimeType: "image/jpeg", fileExtension: "jpg") }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return Detected(kind: .image, mimeType: "image/png", fileExtension: "png") }
        if ascii("RIFF"), ascii("WEBP", at: 8) { return Detected(kind: .image, mimeType: "image/webp", fileExtension: "webp") }
        if ascii("GIF87a") || ascii("GIF89a") { return Detected(kind: .image, mimeType: "image/gif", fileExtension: "gif") }

        // Text last: never HTML, SVG or XML, which a browser could run.
        guard fileSize > 0, fileSize <= maxTextSize, !looksLikeMarkup(header), try isValidUTF8Text() else { return nil }
        return Detected(kind: .text, mimeType: "text/plain; charset=utf-8", fileExtension: "txt")
    }

    // MARK: Files that point at other files

    /// How many bytes `referencesOtherFiles` reads at the start of the file and again where the audio starts after
    /// ID3 tags.
    static let referenceSniffLength = 4096

    /// Text formats whose entries name other files or addresses (HLS and other M3U playlists, ffmpeg's concat lists,
    /// PLS, DASH and IMF manifests, SMIL, ASX). ffmpeg left to guess a format opens such a list, entries included, even
    /// behind an ID3 tag or in a file whose first bytes look like MP4; no audio or video file holds one of these in its
    /// first kilobytes, so their presence there means the file is a list. Compared without regard to case.
    static let referenceMarkers = [
        "#extm3u", "#extinf", "#ext-x-", "ffconcat", "[playlist]", "<mpd", "<compositionplaylist", "<smil", "<asx",
    ].map { Array($0.utf8) }

    /// Whether a file that `detect` took for audio or video is really a playlist or list of other files: a marker in
    /// its first bytes or in the first bytes after its ID3 tags, or text where an MP3's audio frames should begin (a
    /// concat list's `file '…'` lines behind an ID3 tag). `read(offset, count)` returns up to `count` bytes (fewer at
    /// the end of the file).
    static func referencesOtherFiles(read: (Int64, Int) throws -> [UInt8]) rethrows -> Bool {
        var windows = [try read(0, referenceSniffLength)]
        var offset: Int64 = 0
        // ID3v2 tags may follow one another; each says its own length (syncsafe, plus a footer when flagged).
        for _ in 0..<8 {
            let tag = try read(offset, 10)
            guard tag.count == 10, tag.starts(with: Array("ID3".utf8)) else { break }
            let size = tag[6..<10].reduce(Int64(0)) { $0 << 7 | Int64($1 & 0x7F) }
            offset += 10 + size + (tag[5] & 0x10 != 0 ? 10 : 0)
            windows.append(try read(offset, referenceSniffLength))
        }
        if windows.contains(where: containsReferenceMarker) { return true }
        // Behind an ID3 tag comes an MPEG frame (0xFF…), sometimes after zero padding; never lines of text.
        if offset > 0, let audio = windows.last {
            let start = audio.drop { $0 == 0 }.prefix(16)
            if start.count >= 8, start.allSatisfy({ (0x20...0x7E).contains($0) || [0x09, 0x0A, 0x0D].contains($0) }) { return true }
        }
        return false
    }

    /// Whether a text upload is a playlist or list: one of the markers before anything else (after a BOM and blank space).
    static func startsAsReferenceList(_ header: [UInt8]) -> Bool {
        var bytes = header[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        let lowered = bytes.drop { [0x20, 0x09, 0x0A, 0x0D].contains($0) }.map(asciiLowercased)
        return referenceMarkers.contains { lowered.starts(with: $0) }
    }

    static func containsReferenceMarker(_ bytes: [UInt8]) -> Bool {
        let lowered = bytes.map(asciiLowercased)
        return referenceMarkers.contains { marker in
            guard lowered.count >= marker.count else { return false }
            return (0...(lowered.count - marker.count)).contains { start in
                lowered[start] == marker[0] && lowered[start..<start + marker.count].elementsEqual(marker)
            }
        }
    }

    static func asciiLowercased(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte | 0x20 : byte }

    /// An upload marked as map tiles (the tour's MBTiles route, never a waypoint asset): an SQLite 3 database,
    /// whose header starts with `SQLite format 3\0`. Whether it is MBTiles is checked by opening it (`MBTilesReader`).
    static let sqliteMagic: [UInt8] = Array("SQLite format 3\0".utf8)
    static let mbtilesMimeType = "application/vnd.mbtiles"

    static func detectTiles(header: [UInt8]) -> (mimeType: String, fileExtension: String)? {
        header.starts(with: sqliteMagic) ? (mbtilesMimeType, "mbtiles") : nil
    }

    static func findASCII(_ text: String, in bytes: [UInt8]) -> Int? {
        let needle = Array(text.utf8)
        guard bytes.count >= needle.count else { return nil }
        for start in 0...(bytes.count - needle.count) where Array(bytes[start..<start + needle.count]) == needle { return start }
        return nil
    }

    /// HTML, SVG and XML start (after optional BOM and white space) with "<"; plain text and Markdown may not.
    static func looksLikeMarkup(_ header: [UInt8]) -> Bool {
        var bytes = header[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        let first = bytes.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        return first == UInt8(ascii: "<")
    }

    /// Valid UTF-8, no NUL and no control characters other than tab, newline, carriage return and form feed.
    static func isPlainUTF8(_ data: Data) -> Bool {
        guard String(validating: data, as: UTF8.self) != nil else { return false }
        return !data.contains { $0 < 0x20 && ![0x09, 0x0A, 0x0D, 0x0C].contains($0) || $0 == 0x7F }
    }
}
