import Foundation

/// What a phone-sized copy is (docs/operators.md, "Media for phones"). Changing a figure here changes
/// ``settingsID``, and copies made with other settings are made again.
enum MediaTargets {
    static let videoLongSide = 1280
    /// Video plus audio stay under 2 Mbit/s: the encoder aims at 1.6 and never passes 1.75 over its buffer.
    static let videoBitrate = 1_600_000
    static let videoMaxRate = 1_750_000
    static let audioBitrateStereo = 96_000
    /// Mono sources (speech, most narration) stay mono, at a rate that is plenty for a voice.
    static let audioBitrateMono = 64_000
    static let imageLongSide = 2048
    static let jpegQuality = 82
    /// The "slow phone link" of the tour page's estimate.
    static let slowLinkBitsPerSecond = 1_000_000
    /// A copy must play as long as its original, within this, so captions stay aligned.
    static let durationTolerance = 0.1

    static var settingsID: String {
        "v1 video \(videoLongSide)px \(videoBitrate / 1000)k/\(videoMaxRate / 1000)k h264 aac; audio aac \(audioBitrateStereo / 1000)k/\(audioBitrateMono / 1000)k mono; "
            + "image \(imageLongSide)px q\(jpegQuality) stripped"
    }
}

/// The limits and tools of the conversions (`serve` flags, docs/operators.md).
package struct MediaOptimizationSettings: Sendable, Equatable {
    /// Off: no copies are made and packages ship the originals.
    package var enabled = true
    /// Conversions at a time, server-wide: a batch of videos must leave cores for uploads and pages.
    package var concurrency = 1
    /// Threads each conversion may use (decoding; the video encoder runs on one so its bytes are repeatable).
    var threads = 2
    /// Address space of each converter process.
    var memoryLimit: Int64 = 2 * 1024 * 1024 * 1024
    /// A conversion may take this long plus four times the file's play time, then it is stopped.
    var baseTimeLimit: Duration = .seconds(300)
    var maxPixels = 100_000_000
    var maxDurationSeconds: Double = 4 * 3600
    var maxStreams = 8
    var ffmpeg = "ffmpeg"
    var ffprobe = "ffprobe"
    var vips = "vips"
    var vipsheader = "vipsheader"

    init() {}

    func timeLimit(durationSeconds: Double?) -> Duration {
        baseTimeLimit + .seconds(Int(4 * (durationSeconds ?? 0)))
    }

    /// The probe's limits, before anything decodes the file.
    func check(_ probe: MediaProbe, kind: AssetKind) throws {
        if probe.streamCount > maxStreams { throw MediaRefusal.tooManyStreams(count: probe.streamCount, limit: maxStreams) }
        if probe.pixels * max(1, probe.pages) > maxPixels, let width = probe.width, let height = probe.height {
            throw MediaRefusal.tooManyPixels(width: width, height: height, limit: maxPixels)
        }
        if let seconds = probe.durationSeconds, seconds > maxDurationSeconds {
            throw MediaRefusal.tooLong(seconds: seconds, limit: maxDurationSeconds)
        }
        switch kind {
        case .video where probe.videoStreams == 0: throw MediaRefusal.noStream(.video)
        case .audio where probe.audioStreams == 0: throw MediaRefusal.noStream(.audio)
        default: break
        }
    }
}

/// One conversion: the command line and what the copy will be. Made from the probe and server-made paths only: no file
/// name or title of the ranger's ever reaches an argument.
struct ConversionPlan: Sendable, Equatable {
    var executable: String
    var arguments: [String]
    var environment: [String: String] = [:]
    var mimeType: String
    var fileExtension: String
    var width: Int?
    var height: Int?
    /// ffmpeg reports progress on stdout (`-progress pipe:1`).
    var reportsProgress: Bool

    /// The copy of `input` at `output` for a file of `kind` described by `probe`.
    static func make(
        kind: AssetKind,
        probe: MediaProbe,
        input: ConverterInput,
        output: String,
        settings: MediaOptimizationSettings
    ) -> ConversionPlan {
        switch kind {
        case .video: video(probe: probe, input: input, output: output, settings: settings)
        case .audio: audio(probe: probe, input: input, output: output, settings: settings)
        default: image(probe: probe, input: input, output: output, settings: settings)
        }
    }

    /// The copy's file extension: `mp4` for video, `m4a` for audio, `png` for an image with transparency, else `jpg`.
    static func fileExtension(kind: AssetKind, probe: MediaProbe) -> String {
        switch kind {
        case .video: "mp4"
        case .audio: "m4a"
        default: probe.hasAlpha ? "png" : "jpg"
        }
    }

    /// Longest side at most `limit`, even numbers (H.264's 4:2:0 needs them), never enlarged.
    static func fit(_ size: (width: Int, height: Int), longSide limit: Int, even: Bool) -> (width: Int, height: Int) {
        let long = max(size.width, size.height)
        guard long > limit else { return even ? (size.width & ~1, size.height & ~1) : size }
        let scale = Double(limit) / Double(long)
        func side(_ value: Int) -> Int {
            let scaled = Int((Double(value) * scale).rounded())
            return even ? max(2, scaled & ~1) : max(1, scaled)
        }
        return (side(size.width), side(size.height))
    }

    /// Arguments every ffmpeg run shares: no prompts, errors only, stop at the first decoding error (a file that does
    /// not decode fails instead of yielding a broken copy), no metadata or chapters carried over, and bit-exact output
    /// (no encoder version or time stamps written), so the same original always gives the same bytes. The input is
    /// read with its own type's demuxer only (``ConverterInput``).
    static func ffmpegCommon(input: ConverterInput, settings: MediaOptimizationSettings) -> [String] {
        ["-nostdin", "-hide_banner", "-nostats", "-loglevel", "error", "-xerror", "-threads", "\(settings.threads)"] + input.ffmpegArguments
            + ["-map_metadata", "-1", "-map_chapters", "-1", "-sn", "-dn", "-fflags", "+bitexact"]
    }

    static func ffmpegTail(output: String) -> [String] {
        ["-movflags", "+faststart", "-progress", "pipe:1", "-f", "mp4", "-y", output]
    }

    static func audioArguments(_ probe: MediaProbe) -> [String] {
        let mono = (probe.audioChannels ?? 2) == 1
        let rate = mono ? MediaTargets.audioBitrateMono : MediaTargets.audioBitrateStereo
        return ["-c:a", "aac", "-b:a", "\(rate / 1000)k", "-ac", mono ? "1" : "2", "-flags:a", "+bitexact"]
    }

    static func video(probe: MediaProbe, input: ConverterInput, output: String, settings: MediaOptimizationSettings) -> ConversionPlan {
        // ffmpeg turns rotated phone video upright itself, so the target is fitted to the displayed size.
        let target = fit(
            probe.displaySize ?? (MediaTargets.videoLongSide, MediaTargets.videoLongSide * 9 / 16),
            longSide: MediaTargets.videoLongSide,
            even: true
        )
        var arguments = ffmpegCommon(input: input, settings: settings)
        arguments += [
            "-map", "0:v:0", "-map", "0:a:0?",
            "-vf", "scale=\(target.width):\(target.height),format=yuv420p",
            // One encoder thread: x264's threaded rate control is not repeatable, and a repeatable copy keeps
            // its SHA-256, so a delta update does not send an unchanged video again.
            "-c:v", "libx264", "-preset", "veryfast", "-profile:v", "high", "-x264-params", "threads=1",
            "-b:v", "\(MediaTargets.videoBitrate / 1000)k", "-maxrate", "\(MediaTargets.videoMaxRate / 1000)k",
            "-bufsize", "\(2 * MediaTargets.videoMaxRate / 1000)k", "-flags:v", "+bitexact",
        ]
        arguments += audioArguments(probe)
        arguments += ffmpegTail(output: output)
        return ConversionPlan(
            executable: settings.ffmpeg,
            arguments: arguments,
            mimeType: "video/mp4",
            fileExtension: "mp4",
            width: target.width,
            height: target.height,
            reportsProgress: true
        )
    }

    static func audio(probe: MediaProbe, input: ConverterInput, output: String, settings: MediaOptimizationSettings) -> ConversionPlan {
        var arguments = ffmpegCommon(input: input, settings: settings)
        arguments += ["-map", "0:a:0", "-vn"]
        arguments += audioArguments(probe)
        arguments += ffmpegTail(output: output)
        return ConversionPlan(
            executable: settings.ffmpeg,
            arguments: arguments,
            mimeType: "audio/mp4",
            fileExtension: "m4a",
            width: nil,
            height: nil,
            reportsProgress: true
        )
    }

    static func image(probe: MediaProbe, input: ConverterInput, output: String, settings: MediaOptimizationSettings) -> ConversionPlan {
        let target = fit(
            probe.displaySize ?? (MediaTargets.imageLongSide, MediaTargets.imageLongSide),
            longSide: MediaTargets.imageLongSide,
            even: false
        )
        // `thumbnail` turns the picture upright by its EXIF orientation and shrinks it while decoding; `strip` writes
        // no metadata at all (EXIF with its GPS position and camera serial, XMP, IPTC, ICC).
        let png = probe.hasAlpha
        let outputSpec = png ? "\(output)[compression=9,strip]" : "\(output)[Q=\(MediaTargets.jpegQuality),strip,optimize_coding]"
        return ConversionPlan(
            executable: settings.vips,
            arguments: ["thumbnail", input.path, outputSpec, "\(MediaTargets.imageLongSide)", "--size", "down"],
            environment: ["VIPS_CONCURRENCY": "\(settings.threads)"],
            mimeType: png ? "image/png" : "image/jpeg",
            fileExtension: png ? "png" : "jpg",
            width: target.width,
            height: target.height,
            reportsProgress: false
        )
    }
}
