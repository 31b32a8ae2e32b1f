import Foundation
import TestSupport
import Testing

@testable import TrailServer

/// Camera-like media made during the test run by ffmpeg itself (test patterns and tones), EXIF written by exiftool,
/// and the hostile files of the optimizer's tests. Each lands in `folder`.
struct MediaMaker {
    let folder: URL

    init() throws {
        folder = TestScratch.folder("trail-mediamaker")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func url(_ name: String) -> URL { folder.appendingPathComponent(name) }

    @discardableResult
    func tool(_ name: String, _ arguments: [String]) async throws -> ChildProcess.Output {
        let output = try await ChildProcess.run(name, arguments)
        guard output.status == 0 else { throw MediaTestError("\(name) \(arguments.joined(separator: " ")): \(output.stderr)") }
        return output
    }

    func ffmpeg(_ arguments: [String]) async throws {
        try await tool("ffmpeg", ["-nostdin", "-v", "error", "-y"] + arguments)
    }

    /// A camera-sized video: a moving test pattern and a tone, at a camera's bit rates (`moov` at the end, as cameras write it).
    func cameraVideo(_ name: String = "camera.mp4", size: String = "1920x1080", seconds: Int = 3, bitrate: String = "12M") async throws -> URL {
        try await ffmpeg([
            "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=30:duration=\(seconds)", "-f", "lavfi", "-i",
            "sine=frequency=440:duration=\(seconds):sample_rate=48000",
            "-c:v", "libx264", "-preset", "ultrafast", "-b:v", bitrate, "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "320k", "-ac", "2",
            url(name).path,
        ])
        return url(name)
    }

    /// A 320 kbit/s stereo MP3, as a field recorder exports it.
    func recorderAudio(_ name: String = "narration.mp3", seconds: Int = 4) async throws -> URL {
        try await ffmpeg([
            "-f", "lavfi", "-i", "sine=frequency=330:duration=\(seconds):sample_rate=44100", "-ac", "2", "-c:a", "libmp3lame", "-b:a", "320k",
            url(name).path,
        ])
        return url(name)
    }

    /// A 4000 × 3000 photo taken with the phone on its side (EXIF orientation 6), with the GPS position of where it was
    /// taken and the camera's serial number.
    func phonePhoto(_ name: String = "photo.jpg") async throws -> URL {
        try await ffmpeg(["-f", "lavfi", "-i", "testsrc=size=4000x3000:duration=1", "-frames:v", "1", "-q:v", "2", url(name).path])
        try await tool(
            "exiftool",
            [
                "-q", "-overwrite_original", "-Orientation#=6", "-GPSLatitude=44.4605", "-GPSLatitudeRef=N",
                "-GPSLongitude=110.8281", "-GPSLongitudeRef=W", "-SerialNumber=CAM-0042-SERIAL", "-Make=TrailCam", url(name).path,
            ]
        )
        return url(name)
    }

    /// A small JPEG without any metadata: already phone-sized.
    func smallPhoto(_ name: String = "small.jpg") async throws -> URL {
        try await ffmpeg([
            "-f", "lavfi", "-i", "color=c=green:size=640x480:duration=1", "-frames:v", "1", "-q:v", "12", "-map_metadata", "-1",
            "-fflags", "+bitexact", "-flags", "+bitexact", url(name).path,
        ])
        return url(name)
    }

    /// A 3000 × 3000 PNG with an alpha channel.
    func transparentPNG(_ name: String = "overlay.png") async throws -> URL {
        try await ffmpeg([
            "-f", "lavfi", "-i", "testsrc=size=3000x3000:duration=1,format=rgba,colorchannelmixer=aa=0.5", "-frames:v", "1", url(name).path,
        ])
        return url(name)
    }

    /// The first 40 % of a video whose index (`moov`) is at the end: it passes the scanner and the type check, but no
    /// reader finds its streams.
    func truncatedVideo(_ name: String = "truncated.mp4") async throws -> URL {
        let whole = try Data(contentsOf: try await cameraVideo("whole.mp4", size: "640x360", seconds: 2, bitrate: "2M"))
        try whole.prefix(whole.count * 2 / 5).write(to: url(name))
        return url(name)
    }

    /// A 30000 × 30000 PNG of a few kilobytes: the header promises 900 megapixels (a decompression bomb).
    func pixelBomb(_ name: String = "bomb.png") async throws -> URL {
        try await tool(
            "python3",
            [
                "-c",
                """
                import struct, sys, zlib
                def chunk(kind, data): return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data) & 0xffffffff)
                w = h = 30000
                idat = zlib.compress(b'\\0' * (w * 3 + 1) * 16, 9)
                open(sys.argv[1], 'wb').write(b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0)) + chunk(b'IDAT', idat) + chunk(b'IEND', b''))
                """, url(name).path,
            ]
        )
        return url(name)
    }

    /// An audio file that plays for ten hours (one second of tone, its time stamps stretched 36,000 times).
    func tenHourAudio(_ name: String = "ten-hours.m4a") async throws -> URL {
        try await ffmpeg(["-f", "lavfi", "-i", "sine=duration=1", "-c:a", "aac", "-b:a", "32k", url("second.m4a").path])
        try await ffmpeg(["-itsscale", "36000", "-i", url("second.m4a").path, "-c", "copy", url(name).path])
        return url(name)
    }

    /// A video with twenty sound tracks.
    func manyStreamsVideo(_ name: String = "many-streams.mp4") async throws -> URL {
        try await ffmpeg(
            ["-f", "lavfi", "-i", "testsrc=duration=1:size=160x120", "-f", "lavfi", "-i", "sine=duration=1", "-map", "0:v"]
                + Array(repeating: ["-map", "1:a"], count: 20).flatMap { $0 }
                + ["-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-b:a", "32k", url(name).path]
        )
        return url(name)
    }

    /// An MP4 whose container says H.264 but whose stream is random bytes after the first frame's start.
    func garbageH264(_ name: String = "garbage.mp4") async throws -> URL {
        try await ffmpeg([
            "-f", "lavfi", "-i", "testsrc=duration=2:size=640x360", "-c:v", "libx264", "-preset", "ultrafast", "-movflags", "+faststart",
            url("clean.mp4").path,
        ])
        var bytes = [UInt8](try Data(contentsOf: url("clean.mp4")))
        let mdat = try #require(Data(bytes).range(of: Data("mdat".utf8))).upperBound + 200
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        for index in mdat..<bytes.count {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            bytes[index] = UInt8(truncatingIfNeeded: state)
        }
        try Data(bytes).write(to: url(name))
        return url(name)
    }
}

/// Independent readers of the copies: ffprobe for audio and video, exiftool for images.
enum MediaReaders {
    /// `ffprobe -show_format -show_streams` as JSON.
    static func probe(_ file: URL) async throws -> [String: Any] {
        let output = try await ChildProcess.run("ffprobe", ["-v", "error", "-print_format", "json", "-show_format", "-show_streams", file.path])
        #expect(output.status == 0, "ffprobe \(file.lastPathComponent): \(output.stderr)")
        return (try? JSONSerialization.jsonObject(with: Data(output.stdout.utf8))) as? [String: Any] ?? [:]
    }

    static func streams(_ probe: [String: Any], _ type: String) -> [[String: Any]] {
        (probe["streams"] as? [[String: Any]] ?? []).filter { $0["codec_type"] as? String == type }
    }

    static func duration(_ probe: [String: Any]) -> Double {
        Double((probe["format"] as? [String: Any])?["duration"] as? String ?? "") ?? -1
    }

    static func bitRate(_ probe: [String: Any]) -> Int {
        Int((probe["format"] as? [String: Any])?["bit_rate"] as? String ?? "") ?? Int.max
    }

    /// The order of the top-level MP4 boxes as ffprobe's own parser reports them (`-v trace`).
    static func topLevelBoxes(_ file: URL) async throws -> [String] {
        let output = try await ChildProcess.run("ffprobe", ["-v", "trace", file.path])
        return output.stderr.split(separator: "\n").compactMap { line -> String? in
            guard line.contains("parent:'root'"), let start = line.range(of: "type:'") else { return nil }
            return String(line[start.upperBound...].prefix(4))
        }
    }

    /// Every tag exiftool finds, by group and name (`-G1 -j`).
    static func exif(_ file: URL) async throws -> [String: Any] {
        let output = try await ChildProcess.run("exiftool", ["-j", "-G1", "-a", file.path])
        #expect(output.status == 0, "exiftool: \(output.stderr)")
        let list = (try? JSONSerialization.jsonObject(with: Data(output.stdout.utf8))) as? [[String: Any]]
        return list?.first ?? [:]
    }
}

extension TestEnv {
    var optimizer: MediaOptimizer { get throws { try #require(app.dependencies.media, "media optimization is off in this env") } }

    /// An env with media optimization on (the tests' default is off).
    static func withMediaOptimization(requiredApprovals: Int = 1) async throws -> TestEnv {
        try await TestEnv.publishing(requiredApprovals: requiredApprovals, configure: { $0.mediaOptimization.enabled = true })
    }

    @discardableResult
    func drainMedia() async -> Int { await app.dependencies.media?.drain() ?? 0 }

    func copyCount() async throws -> Int { try await database.read { try OptimizedCopy.fetchCount($0) } }

    func copy(_ assetId: Int64) async throws -> OptimizedCopy {
        try #require(try await database.optimizedCopy(assetId: assetId), "asset \(assetId) has no optimized copy row")
    }
}
