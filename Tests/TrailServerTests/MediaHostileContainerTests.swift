import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PackageFormat
import TestSupport
import Testing

@testable import TrailServer

/// Media files that are really lists of other files: an HLS playlist behind an ID3 tag (taken for MP3), an ffmpeg concat
/// list behind one, and a DASH manifest whose first bytes read as a QuickTime atom. Left to guess the format, ffmpeg
/// opened them as lists and read the media file they name, outside the data folder, into the author's tour. Made by
/// the test around a real target file (ffmpeg's sine source), in a folder of its own.
@Suite("Media that points at other files", .serialized, .scratch)
struct MediaHostileContainerTests {
    /// The target and the hostile files that name it.
    struct Lists {
        let maker: MediaMaker
        let target: URL

        /// A 3 s tone at 1234 Hz in an M4A, outside any data folder: what the lists try to read.
        static func make(_ maker: MediaMaker) async throws -> Lists {
            try await maker.ffmpeg([
                "-f", "lavfi", "-i", "sine=frequency=1234:duration=3:sample_rate=44100", "-c:a", "aac", "-b:a", "96k", maker.url("target.m4a").path,
            ])
            return Lists(maker: maker, target: maker.url("target.m4a"))
        }

        /// An ID3v2.4 tag with a title frame, as a recorder writes it; `padding` zero bytes inside the tag.
        static func id3(title: String = "Narration", padding: Int = 0) -> Data {
            func syncsafe(_ value: Int) -> [UInt8] {
                [UInt8(value >> 21 & 0x7F), UInt8(value >> 14 & 0x7F), UInt8(value >> 7 & 0x7F), UInt8(value & 0x7F)]
            }
            let text = [UInt8(3)] + Array(title.utf8)
            let frame = Array("TIT2".utf8) + syncsafe(text.count) + [0, 0] + text
            return Data(Array("ID3".utf8) + [4, 0, 0] + syncsafe(frame.count + padding) + frame + [UInt8](repeating: 0, count: padding))
        }

        var playlist: Data {
            Data("#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:3\n#EXTINF:3.0,\n\(target.path)\n#EXT-X-ENDLIST\n".utf8)
        }

        var hlsBehindID3: Data { Self.id3() + playlist }
        var concatBehindID3: Data { Self.id3() + Data("ffconcat version 1.0\nfile '\(target.path)'\n".utf8) }
        /// A concat list without its header line: only `file '…'` where the audio frames should be.
        var bareConcatBehindID3: Data { Self.id3() + Data("file '\(target.path)'\nduration 3\n".utf8) }
        /// `<!--wide` has "wide" at offset 4: a QuickTime atom to the type check, a DASH manifest to ffmpeg's guess.
        var dashAsQuickTime: Data {
            Data(
                """
                <!--wide-->
                <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-on-demand:2011" type="static" \
                mediaPresentationDuration="PT3S" minBufferTime="PT1S"><Period><AdaptationSet mimeType="audio/mp4">\
                <Representation id="a" bandwidth="96000"><BaseURL>\(target.path)</BaseURL></Representation></AdaptationSet></Period></MPD>

                """.utf8
            )
        }

        /// (what, bytes, file name, Content-Type, what ffmpeg guesses it is)
        var hostile: [(String, Data, String, String, String)] {
            [
                ("HLS playlist behind an ID3 tag", hlsBehindID3, "narration.mp3", "audio/mpeg", "hls"),
                ("concat list behind an ID3 tag", concatBehindID3, "intro.mp3", "audio/mpeg", "concat"),
                ("concat lines behind an ID3 tag", bareConcatBehindID3, "outro.mp3", "audio/mpeg", ""),
                ("DASH manifest as QuickTime", dashAsQuickTime, "clip.mp4", "video/mp4", "dash"),
            ]
        }

        /// The demuxer ffmpeg picks by probing, as it did before the fix (the file saved without an extension, as the
        /// server stores it).
        func guessedDemuxer(_ data: Data) async throws -> String {
            let file = maker.url("guess-\(UUID().uuidString.prefix(8))")
            try data.write(to: file)
            let output = try await ChildProcess.run("ffprobe", ["-v", "debug", file.path])
            guard let line = output.stderr.split(separator: "\n").first(where: { $0.contains(" probed with size=") }),
                let range = line.range(of: "Format ")
            else { return "" }
            return String(line[range.upperBound...].prefix { $0 != " " })
        }
    }

    /// Every file below `folder`, as (relative path, SHA-256).
    static func storedFiles(_ folder: URL) throws -> [(String, String)] {
        let root = folder.standardizedFileURL.path
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
        var found: [(String, String)] = []
        while let relative = walker.nextObject() as? String {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            found.append((relative, PackageHashing.sha256Hex(try Data(contentsOf: URL(fileURLWithPath: root + "/" + relative)))))
        }
        return found
    }

    @Test("a playlist, a concat list or a manifest dressed as MP3 or MP4 is refused at upload (415, no path named), before any conversion")
    func refusedAtUpload() async throws {
        let env = try await TestEnv.withMediaOptimization()
        let maker = try MediaMaker()
        let lists = try await Lists.make(maker)
        let targetHash = PackageHashing.sha256Hex(try Data(contentsOf: lists.target))
        // The fixtures are the review's: ffmpeg left to guess really opens them as lists.
        for (what, data, _, _, guessed) in lists.hostile where !guessed.isEmpty {
            #expect(try await lists.guessedDemuxer(data) == guessed, "\(what)")
        }
        let author = try await env.token("author@test.org")
        let uri = "/api/v1/manage/tours/\(env.seed.tourId)/waypoints/\(env.seed.waypointId)/assets"
        try await env.app.test { client in
            for (what, data, fileName, contentType, _) in lists.hostile {
                let response = try await client.mediaAPIUpload(
                    uri: uri,
                    token: author,
                    parts: [MediaMultipart.file(data, fileName: fileName, contentType: contentType)]
                )
                #expect(response.status == .unsupportedMediaType, "\(what): \(response.status) \(response.text)")
                let message = response.mediaErrorMessage ?? ""
                #expect(message.contains("not audio or video") && message.contains("playlist"), "\(what): \(message)")
                #expect(message.contains(FileTypeDetector.acceptedDescription), "\(what): the usual list of accepted types")
                for path in [lists.target.path, maker.folder.path, env.dataFolder.path] {
                    #expect(!response.text.contains(path), "\(what) names a path: \(response.text)")
                }
            }
            #expect(try await env.database.assets(waypointId: env.seed.waypointId).isEmpty)
            await env.scanAll()
            await env.drainMedia()
            #expect(try await env.copyCount() == 0, "nothing was queued for conversion")
            // No file of the data folder holds the target or any hostile upload (refused files are removed).
            let stored = try Self.storedFiles(env.dataFolder)
            let hostileHashes = Set(lists.hostile.map { PackageHashing.sha256Hex($0.1) })
            #expect(stored.allSatisfy { $0.1 != targetHash && !hostileHashes.contains($0.1) }, "\(stored.map(\.0))")
            #expect(stored.allSatisfy { !$0.0.hasPrefix("assets/") && !$0.0.hasPrefix("uploads/") }, "\(stored.map(\.0))")
        }
    }

    @Test("a list that got past the upload check is never opened: its copy fails naming no path, and no byte of the target reaches the tour")
    func neverOpenedByTheConverter() async throws {
        let env = try await TestEnv.withMediaOptimization()
        let maker = try MediaMaker()
        let lists = try await Lists.make(maker)
        let target = try Data(contentsOf: lists.target)
        let actor = try await env.actor("author@test.org")
        // Registered as the type check took them before the fix (bypassing today's check), so the converter's own
        // guard is what is tested.
        let detected: [String: FileTypeDetector.Detected] = [
            "audio/mpeg": .init(kind: .audio, mimeType: "audio/mpeg", fileExtension: "mp3"),
            "video/mp4": .init(kind: .video, mimeType: "video/quicktime", fileExtension: "mov"),
        ]
        var ids: [Int64] = []
        try FileManager.default.createDirectory(at: env.paths.uploads, withIntermediateDirectories: true)
        for (_, data, fileName, contentType, _) in lists.hostile {
            let uploadId = UUID().uuidString.lowercased()
            try data.write(to: env.paths.upload(uploadId))
            let (asset, _) = try await env.database.addAsset(
                NewAsset(
                    tourId: env.seed.tourId,
                    waypointId: env.seed.waypointId,
                    replacesAssetId: nil,
                    detected: try #require(detected[contentType]),
                    originalName: fileName,
                    size: Int64(data.count),
                    sha256: PackageHashing.sha256Hex(data),
                    uploadId: uploadId
                ),
                actor: actor
            )
            ids.append(asset.id)
        }
        await env.scanAll()
        #expect(try await env.optimizer.drain() == lists.hostile.count)
        for (id, (what, data, _, _, _)) in zip(ids, lists.hostile) {
            let copy = try await env.copy(id)
            #expect(copy.state == .failed, "\(what): \(copy.state) \(copy.message)")
            #expect(copy.storedPath == nil && copy.sha256 == nil && copy.size == nil, "\(what): no copy")
            #expect(copy.message.contains("could not be read"), "\(what): \(copy.message)")
            // Neither where the target is, nor whether it exists or how long it plays.
            #expect(!copy.message.contains("/") && !copy.message.contains("target") && !copy.message.contains("3.0"), "\(what): \(copy.message)")
            // The original is stored as uploaded, nothing of the target in its place.
            let asset = try await env.asset(id)
            #expect(try Data(contentsOf: env.paths.absolute(asset.storedPath)) == data, "\(what)")
        }
        // Every stored file is one of the uploads: no copy, no file with the target's bytes or its sound in AAC.
        let uploaded = Set(lists.hostile.map { PackageHashing.sha256Hex($0.1) })
        let stored = try Self.storedFiles(env.dataFolder).filter { $0.0.hasPrefix("assets/") || $0.0.hasPrefix("media-work/") }
        #expect(stored.count == uploaded.count && stored.allSatisfy { uploaded.contains($0.1) }, "\(stored)")
        let largest = stored.map { (try? Data(contentsOf: env.paths.absolute($0.0)).count) ?? 0 }.max() ?? 0
        #expect(largest < target.count / 4, "no stored file is anywhere near the target's \(target.count) bytes")
        let ready = try await env.database.optimizedCopies(assetIds: ids).values.filter { $0.state != .failed }
        #expect(ready.isEmpty, "no optimized copy exists")
    }

    @Test("the sniffer finds each list, at the start or behind ID3 tags, and none in real media made by ffmpeg")
    func sniffer() async throws {
        let maker = try MediaMaker()
        let lists = try await Lists.make(maker)
        func isList(_ data: Data, _ kind: AssetKind) async throws -> Bool {
            let file = maker.url("sniff-\(UUID().uuidString.prefix(8))")
            try data.write(to: file)
            return try await AssetIntake.isReferenceList(url: file, header: Array(data.prefix(FileTypeDetector.headerLength)), kind: kind)
        }
        for (what, data, _, _, _) in lists.hostile {
            let kind = try #require(FileTypeDetector.detect(header: Array(data.prefix(64)), fileSize: Int64(data.count)) { false }?.kind)
            #expect(try await isList(data, kind), "\(what)")
        }
        // Behind two tags, behind a tag padded past the first 4 KB, and in capitals after a BOM as text.
        #expect(try await isList(Lists.id3() + Lists.id3(title: "Second") + lists.playlist, .audio))
        #expect(try await isList(Lists.id3(padding: 10_000) + lists.playlist, .audio))
        #expect(try await isList(Data([0xEF, 0xBB, 0xBF]) + Data("\n#EXTM3U\nclip.m4a\n".utf8), .text))
        #expect(try await isList(Data("[Playlist]\nFile1=/srv/a.mp3\n".utf8), .text))
        // A note that only mentions a playlist is text like any other.
        #expect(try await !isList(Data("Bring water. The [playlist](https://example.org) has the songs.\n".utf8), .text))

        // Real media of every type the detector accepts as audio or video.
        let made: [(String, [String])] = [
            ("a.mp3", ["-c:a", "libmp3lame"]), ("a.m4a", ["-c:a", "aac"]), ("a.aac", ["-c:a", "aac"]), ("a.ogg", ["-c:a", "libvorbis"]),
            ("a.wav", []), ("a.flac", []),
        ]
        var files: [URL] = []
        for (name, codec) in made {
            try await maker.ffmpeg(
                ["-f", "lavfi", "-i", "sine=frequency=440:duration=2", "-metadata", "title=Lake shore"] + codec + [maker.url(name).path]
            )
            files.append(maker.url(name))
        }
        files.append(try await maker.cameraVideo("v.mp4", size: "320x240", seconds: 1, bitrate: "1M"))
        try await maker.ffmpeg([
            "-f", "lavfi", "-i", "testsrc=duration=1:size=160x120", "-f", "lavfi", "-i", "sine=duration=1", "-c:v", "libvpx", "-c:a", "libopus",
            maker.url("v.webm").path,
        ])
        try await maker.ffmpeg([
            "-f", "lavfi", "-i", "testsrc=duration=1:size=160x120", "-c:v", "libx264", "-preset", "ultrafast", maker.url("v.mov").path,
        ])
        files += [maker.url("v.webm"), maker.url("v.mov")]
        for file in files {
            let data = try Data(contentsOf: file)
            let detected = try #require(
                FileTypeDetector.detect(header: Array(data.prefix(64)), fileSize: Int64(data.count)) { false },
                "\(file.lastPathComponent) is detected"
            )
            #expect(try await !isList(data, detected.kind), "\(file.lastPathComponent) is not a list")
            // …and ffprobe reads it with the demuxer the type names, nothing else allowed.
            let input = try ConverterInput(path: file.path, kind: detected.kind, mimeType: detected.mimeType, dataFolder: maker.folder)
            let probe = try await ChildProcess.run(
                "ffprobe",
                ["-v", "error", "-show_entries", "format=format_name", "-of", "csv=p=0"] + input.ffprobeArguments
            )
            #expect(probe.status == 0 && probe.stdout.contains(input.demuxer ?? "?"), "\(file.lastPathComponent): \(probe.stdout) \(probe.stderr)")
        }
    }

    @Test("ffmpeg and ffprobe get the type's demuxer, the media demuxers only, the file protocol only, and a file: path inside the data folder")
    func converterArguments() async throws {
        let data = URL(fileURLWithPath: "/srv/trail/data")
        let expected = [
            "video/mp4": "mov", "video/quicktime": "mov", "audio/mp4": "mov", "audio/mpeg": "mp3", "audio/aac": "aac", "audio/ogg": "ogg",
            "audio/wav": "wav", "audio/flac": "flac", "video/webm": "matroska",
        ]
        for (mimeType, demuxer) in expected {
            let kind: AssetKind = mimeType.hasPrefix("video") ? .video : .audio
            let input = try ConverterInput(path: "/srv/trail/data/assets/abc", kind: kind, mimeType: mimeType, dataFolder: data)
            #expect(input.demuxer == demuxer, "\(mimeType)")
            var probe = MediaProbe()
            (probe.width, probe.height, probe.audioChannels, probe.streamCount, probe.videoStreams, probe.audioStreams) = (640, 360, 2, 2, 1, 1)
            let plan = ConversionPlan.make(kind: kind, probe: probe, input: input, output: "/srv/trail/data/media-work/x/copy.mp4", settings: .init())
            let arguments = plan.arguments
            let i = try #require(arguments.firstIndex(of: "-i"))
            #expect(arguments[i + 1] == "file:/srv/trail/data/assets/abc")
            // Input options come before the input they apply to.
            let before = Array(arguments[..<i])
            let pairs = zip(before, before.dropFirst()).map { [$0, $1] }
            #expect(pairs.contains(["-f", demuxer]) && pairs.contains(["-protocol_whitelist", "file"]), "\(before)")
            let whitelist = try #require(before.firstIndex(of: "-format_whitelist")).advanced(by: 1)
            #expect(before[whitelist].split(separator: ",").sorted() == ["aac", "flac", "matroska", "mov", "mp3", "ogg", "wav"])
            #expect(!before[whitelist].contains("hls") && !before[whitelist].contains("concat"))
        }
        // A type without a demuxer of its own is not left to ffmpeg's guess.
        #expect(throws: MediaRefusal.unreadable) {
            try ConverterInput(path: "/srv/trail/data/assets/abc", kind: .audio, mimeType: "application/vnd.apple.mpegurl", dataFolder: data)
        }
        // Only absolute paths inside the data folder.
        for outside in ["/etc/passwd", "/srv/trail/data/../secret.m4a", "/srv/trail/database/x", "assets/abc"] {
            #expect(throws: ConverterInput.OutsideDataFolder.self, "\(outside)") {
                try ConverterInput(path: outside, kind: .audio, mimeType: "audio/mpeg", dataFolder: data)
            }
        }
        // An error line that names a path it was not given (a file some list pointed to) reaches nobody as it is.
        let stderr = "[dash @ 0x55d0] Filename extension of '/home/ranger/private/interview.mp3' is not a common multimedia extension"
        #expect(MediaOptimizer.reason(stderr, hiding: ["/srv/trail/data/assets/abc"]) == "the converter could not read it")
        #expect(
            MediaOptimizer.reason("file:/srv/trail/data/assets/abc: Invalid data found when processing input", hiding: ["/srv/trail/data/assets/abc"])
                == "the file: Invalid data found when processing input"
        )
    }
}
