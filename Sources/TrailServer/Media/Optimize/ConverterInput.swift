import Foundation

/// How a converter is told to open a stored file. Left to itself, ffmpeg picks the demuxer by probing the content, and
/// some demuxers (HLS, concat, DASH) open the files a list names: an "MP3" that was a playlist behind an ID3 tag made
/// ffmpeg read a media file from elsewhere on the machine. So ffmpeg and ffprobe get the demuxer of the type
/// ``FileTypeDetector`` found (`-f`), may use no other (`-format_whitelist`, which also binds anything a demuxer would
/// open itself), read through the `file` protocol only (`-protocol_whitelist`), and are given a `file:` path the server
/// made, absolute and inside the data folder.
struct ConverterInput: Sendable, Equatable {
    /// Absolute, with `.` and `..` resolved, inside the data folder.
    let path: String
    /// ffmpeg's demuxer for audio and video; nil for images (libvips reads those).
    let demuxer: String?

    /// The demuxers a media file may be read with: one per type ``FileTypeDetector`` accepts as audio or video.
    static let mediaDemuxers = ["mov", "mp3", "aac", "ogg", "wav", "flac", "matroska"]

    /// The demuxer of a detected MIME type (ffmpeg's `mov` reads MP4, M4A and QuickTime; `matroska` reads WebM).
    static func demuxer(mimeType: String) -> String? {
        switch mimeType.split(separator: ";").first.map({ $0.trimmingCharacters(in: .whitespaces) }) ?? "" {
        case "video/mp4", "video/quicktime", "audio/mp4": "mov"
        case "audio/mpeg": "mp3"
        case "audio/aac": "aac"
        case "audio/ogg": "ogg"
        case "audio/wav": "wav"
        case "audio/flac": "flac"
        case "video/webm": "matroska"
        default: nil
        }
    }

    struct OutsideDataFolder: Error, CustomStringConvertible {
        var description: String { "a converter input outside the data folder was refused" }
    }

    /// Audio or video of a MIME type without a demuxer here is refused as unreadable: nothing is left to ffmpeg's guess.
    init(path: String, kind: AssetKind, mimeType: String, dataFolder: URL) throws {
        let standardized = URL(fileURLWithPath: path).standardizedFileURL.path
        let root = dataFolder.standardizedFileURL.path
        guard path.hasPrefix("/"), standardized.hasPrefix(root.hasSuffix("/") ? root : root + "/") else {
            throw OutsideDataFolder()
        }
        self.path = standardized
        if kind == .image {
            demuxer = nil
        } else {
            guard let demuxer = Self.demuxer(mimeType: mimeType) else { throw MediaRefusal.unreadable }
            self.demuxer = demuxer
        }
    }

    /// Input options, which ffmpeg and ffprobe take before the input they apply to.
    var options: [String] {
        guard let demuxer else { return [] }
        return ["-f", demuxer, "-format_whitelist", Self.mediaDemuxers.joined(separator: ","), "-protocol_whitelist", "file"]
    }

    /// The input as ffmpeg's URL: with the `file:` prefix, a name is never read as another protocol.
    var url: String { "file:" + path }

    /// `-f … -i file:…` for ffmpeg.
    var ffmpegArguments: [String] { options + ["-i", url] }

    /// `-f … file:…` for ffprobe.
    var ffprobeArguments: [String] { options + [url] }
}
