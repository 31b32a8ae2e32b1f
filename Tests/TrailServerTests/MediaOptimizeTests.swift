import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PackageFormat
import TestSupport
import Testing

@testable import TrailServer

/// Phone-sized copies: made by real ffmpeg and libvips from media that ffmpeg makes during the run, checked by
/// independent readers (ffprobe, exiftool), shipped in a package that verifies.
@Suite("Media for phones", .serialized, .scratch)
struct MediaOptimizeTests {
    @Test("a camera video, a recorder's MP3, a phone photo and a transparent PNG get copies within the targets; the originals stay")
    func copiesWithinTargets() async throws {
        let env = try await TestEnv.withMediaOptimization()
        let maker = try MediaMaker()
        let author = try await env.token("author@test.org")
        let files = [
            (try await maker.cameraVideo(), "video/mp4"), (try await maker.recorderAudio(), "audio/mpeg"),
            (try await maker.phonePhoto(), "image/jpeg"), (try await maker.transparentPNG(), "image/png"),
        ]
        try await env.app.test { client in
            var ids: [Int64] = []
            for (file, type) in files {
                ids.append(
                    try await client.publishUpload(
                        env,
                        token: author,
                        data: try Data(contentsOf: file),
                        fileName: file.lastPathComponent,
                        contentType: type
                    )
                )
            }
            await env.scanAll()
            for id in ids { await #expect(try env.copy(id).state == .pending, "queued with the clean verdict") }
            let media = try env.optimizer
            #expect(await media.drain() == 4)
            let (video, audio, photo, png) = (ids[0], ids[1], ids[2], ids[3])

            // Video: H.264 yuv420p + AAC, 1280 × 720, under 2 Mbit/s, `moov` before `mdat`, same play time.
            let videoCopy = try await env.copy(video)
            #expect(videoCopy.state == .ready, "\(videoCopy.message)")
            let videoFile = env.paths.absolute(try #require(videoCopy.storedPath))
            let videoProbe = try await MediaReaders.probe(videoFile)
            let picture = try #require(MediaReaders.streams(videoProbe, "video").first)
            #expect(picture["codec_name"] as? String == "h264")
            #expect(picture["pix_fmt"] as? String == "yuv420p")
            #expect(picture["width"] as? Int == 1280 && picture["height"] as? Int == 720)
            #expect(MediaReaders.streams(videoProbe, "audio").first?["codec_name"] as? String == "aac")
            #expect(MediaReaders.bitRate(videoProbe) <= 2_000_000)
            let originalProbe = try await MediaReaders.probe(files[0].0)
            #expect(abs(MediaReaders.duration(videoProbe) - MediaReaders.duration(originalProbe)) <= 0.1)
            let boxes = try await MediaReaders.topLevelBoxes(videoFile)
            let moov = try #require(boxes.firstIndex(of: "moov"))
            let mdat = try #require(boxes.firstIndex(of: "mdat"))
            #expect(moov < mdat, "boxes: \(boxes)")
            #expect(videoCopy.width == 1280 && videoCopy.height == 720 && videoCopy.mimeType == "video/mp4")
            #expect(videoCopy.encoder.hasPrefix("ffmpeg version"), "the converter's version is recorded: \(videoCopy.encoder)")

            // Audio: AAC in MP4 at most 96 kbit/s, same play time.
            let audioCopy = try await env.copy(audio)
            #expect(audioCopy.state == .ready && audioCopy.mimeType == "audio/mp4")
            let audioProbe = try await MediaReaders.probe(env.paths.absolute(try #require(audioCopy.storedPath)))
            #expect(MediaReaders.streams(audioProbe, "audio").first?["codec_name"] as? String == "aac")
            #expect(MediaReaders.bitRate(audioProbe) <= 100_000, "bit rate \(MediaReaders.bitRate(audioProbe))")
            let audioOriginal = try await MediaReaders.probe(files[1].0)
            #expect(abs(MediaReaders.duration(audioProbe) - MediaReaders.duration(audioOriginal)) <= 0.1)

            // Photo: upright (the 4000 × 3000 picture shot on its side becomes 1536 × 2048), every metadata block gone.
            let photoCopy = try await env.copy(photo)
            #expect(photoCopy.state == .ready && photoCopy.mimeType == "image/jpeg")
            let tags = try await MediaReaders.exif(env.paths.absolute(try #require(photoCopy.storedPath)))
            #expect(tags["File:ImageWidth"] as? Int == 1536 && tags["File:ImageHeight"] as? Int == 2048, "\(tags)")
            let leaked = tags.keys.filter {
                $0.hasPrefix("GPS") || $0.hasPrefix("IFD0") || $0.hasPrefix("ExifIFD") || $0.hasPrefix("XMP") || $0.hasPrefix("ICC")
            }
            #expect(leaked.isEmpty, "metadata left in the copy: \(leaked)")
            #expect(!tags.values.contains { "\($0)".contains("CAM-0042") })
            let originalTags = try await MediaReaders.exif(env.paths.absolute(try env.asset(photo).storedPath))
            #expect(originalTags["GPS:GPSLatitude"] != nil, "the original keeps what the ranger uploaded")

            // Transparent PNG: stays a PNG (with its alpha), at most 2048 px.
            let pngCopy = try await env.copy(png)
            #expect(pngCopy.state == .ready && pngCopy.mimeType == "image/png" && pngCopy.width == 2048 && pngCopy.height == 2048)

            // Content-addressed, with size and SHA-256 recorded; the originals are where they were.
            for id in ids {
                let copy = try await env.copy(id)
                let asset = try await env.asset(id)
                #expect(copy.storedPath == "assets/\(copy.sha256 ?? "")")
                #expect(try MediaFixtures.sha256(fileAt: env.paths.absolute(copy.storedPath!)) == copy.sha256)
                #expect(copy.size! < asset.size, "the copy of \(asset.originalName) is smaller")
                #expect(FileManager.default.fileExists(atPath: env.paths.absolute(asset.storedPath).path))
            }
            await #expect(try env.auditCount("asset.optimize.ready") == 4)

            // The API describes both files and the choice.
            let body = try await client.mediaAsset(video, token: author)
            let original = try #require(body["original"] as? [String: Any])
            let optimized = try #require(body["optimized"] as? [String: Any])
            let videoAsset = try await env.asset(video)
            #expect(original["sha256"] as? String == videoAsset.sha256)
            #expect(optimized["state"] as? String == "ready" && optimized["sha256"] as? String == videoCopy.sha256)
            #expect(optimized["width"] as? Int == 1280 && (optimized["durationSeconds"] as? Double ?? 0) > 2.9)
            #expect(body["useOriginal"] as? Bool == false)
        }
    }

    @Test("a small photo without metadata is kept as it is (skipped), and the original ships")
    func alreadySmallIsSkipped() async throws {
        let env = try await TestEnv.withMediaOptimization()
        let maker = try MediaMaker()
        let author = try await env.token("author@test.org")
        try await env.app.test { client in
            let id = try await client.publishUpload(
                env,
                token: author,
                data: try Data(contentsOf: try await maker.smallPhoto()),
                fileName: "small.jpg",
                contentType: "image/jpeg"
            )
            await env.scanAll()
            await env.drainMedia()
            let copy = try await env.copy(id)
            #expect(copy.state == .skipped, "\(copy.state) \(copy.message)")
            #expect(copy.storedPath == nil && copy.width == 640 && copy.height == 480)
            let asset = try await env.asset(id)
            #expect(
                ShippedFile(asset: asset, copy: copy)
                    == ShippedFile(
                        storedPath: asset.storedPath,
                        size: asset.size,
                        sha256: asset.sha256,
                        mimeType: "image/jpeg",
                        width: 640,
                        height: 480,
                        durationSeconds: nil,
                        isOptimized: false
                    )
            )
        }
    }

    @Test("the same original gives a byte-identical copy, so delta updates do not send an unchanged video again")
    func copiesAreRepeatable() async throws {
        let env = try await TestEnv.withMediaOptimization()
        let maker = try MediaMaker()
        let author = try await env.token("author@test.org")
        let video = try Data(contentsOf: try await maker.cameraVideo(size: "1280x960", seconds: 2))
        try await env.app.test { client in
            let first = try await client.publishUpload(env, token: author, data: video, fileName: "a.mp4", contentType: "video/mp4")
            await env.scanAll()
            await env.drainMedia()
            let made = try await env.copy(first)
            // The same bytes again, as another file: converted again from scratch.
            try await env.sql("DELETE FROM optimizedCopy WHERE assetId = ?", [first])
            let second = try await client.publishUpload(env, token: author, data: video, fileName: "b.mp4", contentType: "video/mp4")
            await env.scanAll()
            await env.drainMedia()
            await #expect(try env.copy(second).state == .ready)
            await #expect(try env.copy(second).sha256 == made.sha256)
        }
    }

    @Test("hostile files: each gets `failed` with a clear message, keeps its original, and blocks publishing until kept or replaced")
    func hostileFiles() async throws {
        let env = try await TestEnv.withMediaOptimization()
        let maker = try MediaMaker()
        let author = try await env.token("author@test.org")
        let cases: [(URL, String, String)] = [
            (try await maker.truncatedVideo(), "video/mp4", "could not be read"),
            (try await maker.pixelBomb(), "image/png", "30000 × 30000 pixels"),
            (try await maker.tenHourAudio(), "audio/mp4", "longer than the 4 h 0 min allowed"),
            (try await maker.manyStreamsVideo(), "video/mp4", "21 streams"),
            (try await maker.garbageH264(), "video/mp4", "does not decode: Error splitting the input into NAL units. Upload"),
        ]
        try await env.app.test { client in
            var ids: [Int64] = []
            for (file, type, _) in cases {
                ids.append(
                    try await client.publishUpload(
                        env,
                        token: author,
                        data: try Data(contentsOf: file),
                        fileName: file.lastPathComponent,
                        contentType: type
                    )
                )
            }
            await env.scanAll()
            let media = try env.optimizer
            #expect(await media.drain() == cases.count)
            for (id, (file, _, expected)) in zip(ids, cases) {
                let copy = try await env.copy(id)
                let asset = try await env.asset(id)
                #expect(copy.state == .failed, "\(file.lastPathComponent): \(copy.state)")
                #expect(copy.message.contains(expected), "\(file.lastPathComponent): \(copy.message)")
                #expect(!copy.message.contains(env.dataFolder.path), "no server path in the message")
                #expect(copy.storedPath == nil)
                let stored = try Data(contentsOf: env.paths.absolute(asset.storedPath))
                let uploaded = try Data(contentsOf: file)
                #expect(stored == uploaded, "the original is kept")
            }
            let work = try env.optimizer.workFolder.path
            let leftOver = (try? FileManager.default.contentsOfDirectory(atPath: work)) ?? []
            #expect(leftOver.isEmpty, "nothing half-written is left: \(leftOver)")

            // The checklist names each file; publishing is refused.
            let checklist = try await env.database.publishChecklist(tourId: env.seed.tourId, tiles: env.app.dependencies.tileSettings.current)
            for (file, _, _) in cases {
                #expect(checklist.contains { $0.contains(file.lastPathComponent) && $0.contains("could not be optimized") }, "\(checklist)")
            }
            let refused = try await client.api(.post, "/api/v1/manage/tours/\(env.seed.tourId)/publish", token: author)
            #expect(refused.status == .unprocessableContent || refused.status == .conflict, "\(refused.status) \(refused.text)")

            // "Keep original" on each (the API's PATCH) lifts the block; the server answered every file and is still here.
            for id in ids {
                let kept = try await client.api(.patch, "/api/v1/manage/assets/\(id)", token: author, json: #"{"useOriginal": true}"#)
                #expect(kept.status == .ok && kept.jsonObject["useOriginal"] as? Bool == true, "\(kept.text)")
            }
            #expect(
                try await env.database.publishChecklist(tourId: env.seed.tourId, tiles: env.app.dependencies.tileSettings.current).allSatisfy {
                    !$0.contains("could not be optimized")
                }
            )
            await #expect(try env.auditCount("asset.keepOriginal") == cases.count)
        }
    }

    @Test("a conversion killed halfway stays pending, leaves nothing under assets/, and is made whole by the next run")
    func killedConversionResumes() async throws {
        let env = try await TestEnv.withMediaOptimization()
        let maker = try MediaMaker()
        let author = try await env.token("author@test.org")
        let video = try await maker.cameraVideo("long.mp4", size: "960x540", seconds: 15, bitrate: "3M")
        try await env.app.test { client in
            let id = try await client.publishUpload(
                env,
                token: author,
                data: try Data(contentsOf: video),
                fileName: "long.mp4",
                contentType: "video/mp4"
            )
            await env.scanAll()
            let assetsBefore = try FileManager.default.contentsOfDirectory(atPath: env.paths.assets.path).sorted()
            let media = try env.optimizer
            let work = Task { await media.drain() }
            // Wait for the conversion to report progress, then stop it as a shutdown or a crash would.
            while try await env.copy(id).progress == 0 { try await Task.sleep(for: .milliseconds(50)) }
            work.cancel()
            _ = await work.value
            let cut = try await env.copy(id)
            #expect(cut.state == .pending && cut.progress > 0 && cut.progress < 1, "\(cut.state) \(cut.progress)")
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: env.paths.assets.path).sorted() == assetsBefore,
                "no half-written copy under assets/"
            )

            // The next start: a new optimizer on the same data clears the work folder and makes the copy whole.
            try FileManager.default.createDirectory(at: media.workFolder.appendingPathComponent("left-over"), withIntermediateDirectories: true)
            try Data(count: 1000).write(to: media.workFolder.appendingPathComponent("left-over/copy.mp4"))
            let restarted = MediaOptimizer(database: env.database, paths: env.paths, settings: env.config.mediaOptimization)
            try await restarted.recover()
            #expect(!FileManager.default.fileExists(atPath: media.workFolder.appendingPathComponent("left-over").path))
            #expect(await restarted.drain() == 1)
            let copy = try await env.copy(id)
            #expect(copy.state == .ready)
            let probe = try await MediaReaders.probe(env.paths.absolute(copy.storedPath!))
            #expect(abs(MediaReaders.duration(probe) - 15) <= 0.1)
        }
    }

    @Test("publishing waits for pending copies and ships them: the package verifies, and its media pass the same checks")
    func publishedPackageShipsCopies() async throws {
        let env = try await TestEnv.withMediaOptimization()
        let maker = try MediaMaker()
        let author = try await env.token("author@test.org")
        try await env.app.test { client in
            let video = try await client.publishUpload(
                env,
                token: author,
                data: try Data(contentsOf: try await maker.cameraVideo("trail.mov")),
                fileName: "trail.mov",
                contentType: "video/mp4"
            )
            let photo = try await client.publishUpload(
                env,
                token: author,
                data: try Data(contentsOf: try await maker.phonePhoto()),
                fileName: "photo.jpg",
                contentType: "image/jpeg"
            )
            let kept = try await client.publishUpload(
                env,
                token: author,
                data: try Data(contentsOf: try await maker.phonePhoto("zoom.jpg")),
                fileName: "zoom.jpg",
                contentType: "image/jpeg"
            )
            await env.scanAll()
            // Submitted while the copies are still pending: the build waits for them (here it makes them itself, as no
            // optimizer service runs in this test).
            let requestId = try await client.publishSubmit(env, token: author)
            await #expect(try env.request(requestId).snapshot.waypoints.flatMap(\.assets).allSatisfy { $0.awaitingCopy == true })
            // Meanwhile the ranger cannot change the choice: the tour is locked for review.
            let locked = try await client.api(.patch, "/api/v1/manage/assets/\(kept)", token: author, json: #"{"useOriginal": true}"#)
            #expect(locked.status == .conflict, "\(locked.text)")
            #expect(await env.buildAll() == 1)
            var request = try await env.request(requestId)
            #expect(request.state == .pending, "\(request.failureReason ?? "")")
            let zip = env.stagedZip(requestId)
            let verification = PackageVerifier.verify(zipAt: zip, publicKeyBase64: env.publicKey)
            #expect(verification.isValid, "\(verification.problems)")
            let manifest = try #require(request.manifestJSON.flatMap { try? JSONDecoder().decode(Manifest.self, from: Data($0.utf8)) })
            let assets = manifest.waypoints.flatMap(\.assets)
            let shippedVideo = try #require(assets.first { $0.type == .video })
            #expect(shippedVideo.path.hasSuffix("-trail.mp4"), "named by its new type: \(shippedVideo.path)")
            let videoCopy = try await env.copy(video)
            let photoCopy = try await env.copy(photo)
            #expect(shippedVideo.sha256 == videoCopy.sha256 && shippedVideo.mimeType == "video/mp4")
            #expect(shippedVideo.width == 1280 && shippedVideo.height == 720 && abs((shippedVideo.durationSeconds ?? 0) - 3) <= 0.1)
            #expect(assets.first { $0.path.hasSuffix("photo.jpg") }?.sha256 == photoCopy.sha256)
            #expect(request.snapshot.waypoints.flatMap(\.assets).allSatisfy { $0.awaitingCopy == nil }, "the resolved snapshot is stored")
            #expect(request.bytesTotal == request.snapshot.totalBytes)

            // The shipped video, read out of the zip by Info-ZIP, passes the same checks as the copy.
            let out = maker.url("unzipped")
            let unzip = try await ChildProcess.run("/usr/bin/unzip", ["-q", "-o", zip.path, shippedVideo.path, "-d", out.path])
            #expect(unzip.status == 0, "\(unzip.stderr)")
            let probe = try await MediaReaders.probe(out.appendingPathComponent(shippedVideo.path))
            #expect(MediaReaders.streams(probe, "video").first?["codec_name"] as? String == "h264" && MediaReaders.bitRate(probe) <= 2_000_000)

            // Withdrawn, "keep original" on the zoomable photo, submitted again: that one ships as uploaded.
            #expect(try await client.publishAction(requestId, "withdraw", token: author).status == .ok)
            let keep = try await client.api(.patch, "/api/v1/manage/assets/\(kept)", token: author, json: #"{"useOriginal": true}"#)
            #expect(keep.status == .ok, "\(keep.text)")
            let second = try await client.publishSubmit(env, token: author)
            request = try await env.request(second)
            let entry = try #require(request.snapshot.waypoints.flatMap(\.assets).first { $0.assetId == kept })
            let keptAsset = try await env.asset(kept)
            let photoAsset = try await env.asset(photo)
            #expect(entry.sha256 == keptAsset.sha256 && entry.originalSize == nil && entry.awaitingCopy == nil)
            let optimizedEntry = try #require(request.snapshot.waypoints.flatMap(\.assets).first { $0.assetId == photo })
            #expect(optimizedEntry.sha256 == photoCopy.sha256 && optimizedEntry.originalSize == photoAsset.size)
        }
    }

    @Test("the waypoint page shows both sizes, the state and the keep-original switch; the tour page the download size")
    func pagesShowCopies() async throws {
        let env = try await TestEnv.withMediaOptimization()
        let maker = try MediaMaker()
        let author = try await env.token("author@test.org")
        try await env.app.test { client in
            let id = try await client.publishUpload(
                env,
                token: author,
                data: try Data(contentsOf: try await maker.phonePhoto()),
                fileName: "photo.jpg",
                contentType: "image/jpeg"
            )
            await env.scanAll()
            var session = try await client.signIn("author@test.org")
            let waypointURI = "/tours/\(env.seed.tourId)/waypoints/\(env.seed.waypointId)"
            let pending = try await client.get(waypointURI, session: session)
            #expect(pending.text.contains(#"data-optimizing="true""#) && pending.text.contains("<progress"), "a pending copy shows its progress bar")
            await env.drainMedia()
            let page = try await client.get(waypointURI, session: session)
            let copy = try await env.copy(id)
            #expect(page.text.contains("Optimized") && page.text.contains("→ copy \(ByteFormat.string(copy.size!))"))
            #expect(page.text.contains("1536 × 2048 px") && page.text.contains("Keep original"))
            session.absorb(page)
            let chosen = try await client.post("/assets/\(id)/original", form: ["useOriginal": "1"], session: session)
            #expect(chosen.status == .seeOther || chosen.status == .found, "\(chosen.status)")
            await #expect(try env.asset(id).useOriginal)
            let tour = try await client.get("/tours/\(env.seed.tourId)", session: session)
            #expect(tour.text.contains(#"id="download-size""#) && tour.text.contains("on a slow phone link"))
        }
    }

    @Test("`media optimize`: a dry run lists older files and estimates, changes nothing; the run makes the copies and reports the saving")
    func existingMedia() async throws {
        // Uploaded while copies were off: no rows.
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let maker = try MediaMaker()
        let author = try await env.token("author@test.org")
        try await env.app.test { client in
            _ = try await client.publishUpload(
                env,
                token: author,
                data: try Data(contentsOf: try await maker.cameraVideo()),
                fileName: "old.mp4",
                contentType: "video/mp4"
            )
            _ = try await client.publishUpload(
                env,
                token: author,
                data: try Data(contentsOf: try await maker.phonePhoto()),
                fileName: "old.jpg",
                contentType: "image/jpeg"
            )
        }
        await env.scanAll()
        await #expect(try env.copyCount() == 0)
        var settings = env.config.mediaOptimization
        settings.enabled = true
        let optimizer = MediaOptimizer(database: env.database, paths: env.paths, settings: settings)
        let dry = try await optimizer.optimizeExisting(siteId: env.seed.alphaId, dryRun: true)
        #expect(dry.lines.count == 2 && dry.savedBytes > 0, "the video's estimate: \(dry.lines.map(\.shippedSize))")
        await #expect(try env.copyCount() == 0, "a dry run changes nothing")
        let other = try await optimizer.optimizeExisting(siteId: env.seed.bravoId, dryRun: true)
        #expect(other.lines.isEmpty, "another site's files are left alone")
        let run = try await optimizer.optimizeExisting(siteId: env.seed.alphaId, dryRun: false)
        #expect(run.lines.allSatisfy { $0.state == .ready } && run.lines.count == 2)
        #expect(run.savedBytes == run.lines.reduce(0) { $0 + $1.originalSize - ($1.shippedSize ?? 0) } && run.savedBytes > 0)
        let again = try await optimizer.optimizeExisting(siteId: nil, dryRun: true)
        #expect(again.lines.isEmpty, "made once, not again")
        // New settings make them again at the next start; the same settings do not.
        try await optimizer.recover()
        #expect(try await env.database.pendingOptimizationCount() == 0)
        try await env.sql("UPDATE optimizedCopy SET settings = 'v0 older settings'")
        try await optimizer.recover()
        #expect(try await env.database.pendingOptimizationCount() == 2)
    }

    @Test("the converter runs bounded: a time limit kills it, a memory limit stops it, and no argument holds the ranger's text")
    func boundedConversions() async throws {
        let slow = try await ConverterProcess.run("sleep", ["30"], memoryLimit: nil, timeLimit: .milliseconds(300))
        #expect(slow.timedOut && !slow.succeeded)
        let greedy = try await ConverterProcess.run(
            "python3",
            ["-c", "bytearray(1024 * 1024 * 1024)"],
            memoryLimit: 256 * 1024 * 1024,
            timeLimit: .seconds(30)
        )
        #expect(!greedy.succeeded && greedy.stderr.contains("MemoryError"), "\(greedy.status) \(greedy.stderr)")
        let fine = try await ConverterProcess.run(
            "python3",
            ["-c", "bytearray(16 * 1024 * 1024); print('ok')"],
            memoryLimit: 256 * 1024 * 1024,
            timeLimit: .seconds(30)
        )
        #expect(fine.succeeded && String(decoding: fine.stdout, as: UTF8.self).contains("ok"))

        var probe = MediaProbe()
        (probe.width, probe.height, probe.durationSeconds, probe.audioChannels, probe.streamCount, probe.videoStreams, probe.audioStreams) = (
            3840, 2160, 12, 2, 2, 1, 1
        )
        let settings = MediaOptimizationSettings()
        for kind in [AssetKind.video, .audio, .image] {
            let mimeType = ["video": "video/mp4", "audio": "audio/mpeg"][kind.rawValue] ?? "image/jpeg"
            let plan = ConversionPlan.make(
                kind: kind,
                probe: probe,
                input: try ConverterInput(path: "/data/assets/abc", kind: kind, mimeType: mimeType, dataFolder: URL(fileURLWithPath: "/data")),
                output: "/data/media-work/x/copy.mp4",
                settings: settings
            )
            #expect(plan.arguments.contains(kind == .image ? "/data/assets/abc" : "file:/data/assets/abc"))
            #expect(plan.arguments.allSatisfy { !$0.contains("Fish Lake") && !$0.contains(".mov") }, "only server-made paths and fixed settings")
        }
        #expect(ConversionPlan.fit((3840, 2160), longSide: 1280, even: true) == (1280, 720))
        #expect(ConversionPlan.fit((1080, 1920), longSide: 1280, even: true) == (720, 1280))
        #expect(ConversionPlan.fit((800, 600), longSide: 2048, even: false) == (800, 600), "never enlarged")
        // The limits are checked before anything decodes.
        probe.width = 30000
        probe.height = 30000
        #expect(throws: MediaRefusal.self) { try settings.check(probe, kind: .image) }
    }
}
