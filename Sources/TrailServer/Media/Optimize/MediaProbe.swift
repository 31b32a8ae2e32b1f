import Foundation

/// What `ffprobe` (audio, video) or `vipsheader` (images) read from a file's headers, before anything decodes it.
struct MediaProbe: Sendable, Equatable {
    var formatName = ""
    var width: Int?
    var height: Int?
    var durationSeconds: Double?
    /// All streams of the container (video, audio, subtitles, data); cover pictures of audio files not counted.
    var streamCount = 0
    var videoStreams = 0
    var audioStreams = 0
    var videoCodec: String?
    var pixelFormat: String?
    var audioCodec: String?
    var audioChannels: Int?
    /// Bits per second of the whole file, when the container says.
    var bitRate: Int?
    /// Degrees a player turns the picture (phone videos shot upright): 90 and 270 swap width and height.
    var rotation = 0
    /// Images: an alpha channel (the copy is then a PNG, not a JPEG).
    var hasAlpha = false
    /// Images: pages or frames (an animated GIF has several).
    var pages = 1
    /// Images: any EXIF, XMP, IPTC or ICC block (a photo's GPS position, the camera's serial number).
    var hasMetadata = false

    /// Width and height as a player shows them.
    var displaySize: (width: Int, height: Int)? {
        guard let width, let height else { return nil }
        return rotation % 180 == 0 ? (width, height) : (height, width)
    }

    var pixels: Int { (width ?? 0) * (height ?? 0) }

    /// Reads `ffprobe -print_format json -show_format -show_streams`.
    static func parseFFprobe(_ data: Data) throws -> MediaProbe {
        guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any] else { throw MediaRefusal.unreadable }
        let format = root["format"] as? [String: Any] ?? [:]
        let streams = root["streams"] as? [[String: Any]] ?? []
        var probe = MediaProbe()
        probe.formatName = format["format_name"] as? String ?? ""
        probe.durationSeconds = number(format["duration"])
        probe.bitRate = number(format["bit_rate"]).map { Int($0) }
        for stream in streams {
            let disposition = stream["disposition"] as? [String: Any] ?? [:]
            if (disposition["attached_pic"] as? Int) == 1 { continue }  // an MP3's cover picture
            probe.streamCount += 1
            switch stream["codec_type"] as? String {
            case "video":
                probe.videoStreams += 1
                guard probe.videoStreams == 1 else { continue }
                probe.videoCodec = stream["codec_name"] as? String
                probe.pixelFormat = stream["pix_fmt"] as? String
                probe.width = stream["width"] as? Int
                probe.height = stream["height"] as? Int
                let sideData = stream["side_data_list"] as? [[String: Any]] ?? []
                let rotation =
                    sideData.compactMap { number($0["rotation"]) }.first
                    ?? number((stream["tags"] as? [String: Any])?["rotate"]) ?? 0
                probe.rotation = ((Int(rotation) % 360) + 360) % 360
            case "audio":
                probe.audioStreams += 1
                guard probe.audioStreams == 1 else { continue }
                probe.audioCodec = stream["codec_name"] as? String
                probe.audioChannels = stream["channels"] as? Int
            default:
                break
            }
        }
        guard probe.streamCount > 0 else { throw MediaRefusal.unreadable }
        return probe
    }

    /// Reads `vipsheader -a`: one `name: value` line per field.
    static func parseVipsHeader(_ text: String) throws -> MediaProbe {
        var fields: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let colon = line.range(of: ": ") else { continue }
            let key = String(line[..<colon.lowerBound])
            if fields[key] == nil { fields[key] = String(line[colon.upperBound...]) }
        }
        guard let width = fields["width"].flatMap({ Int($0) }), let height = fields["height"].flatMap({ Int($0) }) else {
            throw MediaRefusal.unreadable
        }
        var probe = MediaProbe()
        probe.formatName = fields["vips-loader"] ?? ""
        probe.width = width
        probe.height = height
        probe.streamCount = 1
        let bands = fields["bands"].flatMap { Int($0) } ?? 3
        probe.hasAlpha = bands == 2 || bands == 4
        probe.pages = fields["n-pages"].flatMap { Int($0) } ?? 1
        probe.hasMetadata = fields.keys.contains { $0.hasPrefix("exif-") || $0 == "xmp-data" || $0 == "iptc-data" || $0 == "icc-profile-data" }
        // Orientation 5…8 turn the picture a quarter: the copy is upright, so its sides swap.
        if let orientation = (fields["orientation"] ?? fields["exif-ifd0-Orientation"]).flatMap({ Int($0.prefix(while: \.isNumber)) }),
            (5...8).contains(orientation)
        {
            probe.rotation = 90
        }
        return probe
    }

    private static func number(_ value: Any?) -> Double? {
        switch value {
        case let text as String: Double(text)
        case let number as NSNumber: number.doubleValue
        default: nil
        }
    }
}

/// Why a file gets no optimized copy: said to the ranger as it is, next to the file.
enum MediaRefusal: Error, Equatable, CustomStringConvertible {
    case unreadable
    case tooManyPixels(width: Int, height: Int, limit: Int)
    case tooLong(seconds: Double, limit: Double)
    case tooManyStreams(count: Int, limit: Int)
    case noStream(AssetKind)
    case doesNotDecode(String)
    case timedOut(seconds: Int)
    case durationChanged(from: Double, to: Double)

    var description: String {
        switch self {
        case .unreadable:
            "The file could not be read: it may be cut short or damaged. Upload it again, or keep the original."
        case .tooManyPixels(let width, let height, let limit):
            "The picture is \(width) × \(height) pixels, more than the \(limit / 1_000_000) megapixels allowed. Make it smaller and upload it again."
        case .tooLong(let seconds, let limit):
            "It plays for \(DisplayFormat.playTime(seconds)), longer than the \(DisplayFormat.playTime(limit)) allowed. Split it into shorter files."
        case .tooManyStreams(let count, let limit):
            "It holds \(count) streams (video and sound tracks), more than the \(limit) allowed. Export it with one video and one sound track."
        case .noStream(let kind):
            "It holds no \(kind == .image ? "picture" : kind == .audio ? "sound" : "video") that could be read."
        case .doesNotDecode(let detail):
            "The file does not decode: \(detail). Upload it again from the original source, or keep the original."
        case .timedOut(let seconds):
            "Optimizing took longer than \(seconds) seconds and was stopped."
        case .durationChanged(let from, let to):
            "The optimized copy plays for \(String(format: "%.2f", to)) s instead of \(String(format: "%.2f", from)) s, so captions would drift; the original is kept."
        }
    }
}
