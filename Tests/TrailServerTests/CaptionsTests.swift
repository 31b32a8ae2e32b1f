import Foundation
import GRDB
import HummingbirdTesting
import NIOCore
import PackageFormat
import TestSupport
import Testing

@testable import TrailServer

/// Captions (WebVTT) for video and transcripts (text or WebVTT) for audio, checked before they are stored,
/// scanned like every upload, required or recommended per site, packaged beside their media file and shown to reviewers.
@Suite(.scratch) struct CaptionsTests {
    static let captions = "WEBVTT\n\n00:00:00.000 --> 00:00:02.500\nWind over Fish Lake.\n\n00:00:02.500 --> 00:00:05.000\nA loon calls.\n"

    /// An MP3 as the detector knows it (an ID3 tag, then bytes).
    static func mp3(size: Int = 30_000, seed: UInt64 = 9) -> Data {
        Data([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 0] + fillerBytes(count: size - 10, seed: seed))
    }

    static func multipart(
        _ client: some TestClientProtocol,
        _ uri: String,
        token: String,
        data: Data,
        name: String,
        type: String = "application/octet-stream"
    ) async throws -> TestResponse {
        let boundary = "captions-\(UUID().uuidString)"
        return try await client.execute(
            uri: uri,
            method: .post,
            headers: [.authorization: "Bearer \(token)", .contentType: "multipart/form-data; boundary=\(boundary)"],
            body: PublishFixtures.multipart(data, fileName: name, contentType: type, boundary: boundary)
        )
    }

    static func attachCaptions(_ client: some TestClientProtocol, token: String, to asset: Int64, text: String = captions) async throws {
        let response = try await multipart(
            client,
            "/api/v1/manage/assets/\(asset)/captions",
            token: token,
            data: Data(text.utf8),
            name: "captions.vtt"
        )
        #expect(response.status == .created, "\(response.text)")
    }

    /// A video, an audio file and an image on Fish Lake, without captions or transcript (raw uploads, not the fixture helper).
    static func media(_ env: TestEnv, _ client: some TestClientProtocol, token: String) async throws -> (video: Int64, audio: Int64, image: Int64) {
        func upload(_ data: Data, _ name: String) async throws -> Int64 {
            let response = try await multipart(
                client,
                "/api/v1/manage/tours/\(env.seed.tourId)/waypoints/\(env.seed.waypointId)/assets",
                token: token,
                data: data,
                name: name
            )
            return Int64(try #require(publishInt(response.jsonObject["id"]), "\(response.text)"))
        }
        let video = try await upload(PublishFixtures.mp4(size: 50_000, seed: 21), "welcome.mp4")
        let audio = try await upload(mp3(), "loon call.mp3")
        let image = try await upload(MediaFixtures.png(size: 20_000, seed: 22), "shore.png")
        _ = try await client.api(.patch, "/api/v1/manage/assets/\(image)", token: token, json: #"{"altText":"A pebble shore."}"#)
        #expect(await env.scanAll() == 3)
        return (video, audio, image)
    }

    /// ``media(_:_:token:)`` with captions on the video and a transcript ("A loon calls.") on the audio, all scanned.
    static func accessibleMedia(_ env: TestEnv, _ client: some TestClientProtocol, token: String) async throws -> (video: Int64, audio: Int64) {
        let (video, audio, _) = try await media(env, client, token: token)
        try await attachCaptions(client, token: token, to: video)
        _ = try await client.api(.post, "/api/v1/manage/assets/\(audio)/transcript", token: token, json: #"{"text":"A loon calls."}"#)
        #expect(await env.scanAll() == 2)
        return (video, audio)
    }

    /// File names in `data/<folder>`.
    static func files(_ env: TestEnv, in folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: env.paths.root.appendingPathComponent(folder).path)) ?? []).sorted()
    }

    static func companionRows(_ env: TestEnv) async throws -> Int {
        try await count(env, "SELECT COUNT(*) FROM asset WHERE companionOf IS NOT NULL")
    }

    static func count(_ env: TestEnv, _ sql: String) async throws -> Int {
        try await env.database.read { try Int.fetchOne($0, sql: sql) ?? 0 }
    }

    @Test("WebVTT: a BOM, CRLF, hours, cue names, NOTE and STYLE blocks pass; each broken rule is refused naming its line")
    func webVTTRules() throws {
        let good =
            "\u{FEFF}WEBVTT - Fish Lake\r\n\r\nSTYLE\r\n::cue { color: yellow }\r\n\r\nNOTE made by hand\r\n\r\nintro\r\n00:00.000 --> 00:02.000 line:90%\r\nHello\r\n\r\n01:00:02.000 --> 01:00:04.500\r\n<v Ranger>Welcome.\r\n"
        #expect(try CompanionText.check(Data(good.utf8), role: .captions) == .webVTT)
        #expect(try WebVTT.validate(good).map(\.start) == [0, 3602])
        let refused: [(Data, String)] = [
            (Data("00:00:00.000 --> 00:00:01.000\nHi\n".utf8), "Line 1 must be “WEBVTT”"),
            (Data("WEBVTTX\n\n00:00:00.000 --> 00:00:01.000\nHi\n".utf8), "Line 1 must be “WEBVTT”"),
            (
                Data("WEBVTT\n\n00:00:05.000 --> 00:00:06.000\nB\n\n00:00:02.000 --> 00:00:03.000\nA\n".utf8),
                "Line 6: this cue starts at 00:00:02.000, before the one on line 3 (00:00:05.000): cue times must not go backwards."
            ),
            (Data("WEBVTT\n\n00:00:04.000 --> 00:00:01.000\nA\n".utf8), "Line 3: the cue ends (00:00:01.000) before it starts (00:00:04.000)."),
            (Data("WEBVTT\n\n00:00:01.000 --> 00:00:61.000\nA\n".utf8), "Line 3: “00:00:01.000 --> 00:00:61.000” is not a cue timing"),
            (Data("WEBVTT\n\n0:00:01.000 --> 00:00:02.000\nA\n".utf8), "is not a cue timing"),
            (Data("WEBVTT\n\nHello there\nGeneral\n".utf8), "Line 3: “Hello there” is neither a cue timing"),
            (Data("WEBVTT\n".utf8), "The captions have no cues"),
            // Hours that would overflow, a signed fraction, a NOTE running into a cue: refused, never a crash.
            (Data("WEBVTT\n\n9999999999999999:00:00.000 --> 9999999999999999:00:01.000\nx\n".utf8), "is not a cue timing"),
            (Data("WEBVTT\n\n100000000000000:00:00.000 --> 00:00:01.000\nx\n".utf8), "is not a cue timing"),
            (Data("WEBVTT\n\n00:00:01.-50 --> 00:00:02.000\nx\n".utf8), "is not a cue timing"),
            (Data("WEBVTT\n\nNOTE see\n00:00:01.000 --> 00:00:02.000\nx\n".utf8), "a NOTE may not contain"),
            (Data([0x57, 0x45, 0x42, 0x56, 0x54, 0x54, 0x0A, 0x0A, 0xFF, 0xFE]), "not UTF-8"),
            (Data("<!DOCTYPE html>\n<html><body>WEBVTT</body></html>\n".utf8), "This is an HTML page, not WebVTT captions"),
            (Data(), "The file is empty."),
        ]
        for (data, message) in refused {
            do {
                _ = try CompanionText.check(data, role: .captions)
                Issue.record("accepted: \(String(decoding: data, as: UTF8.self))")
            } catch {
                #expect(error.message.contains(message), "\(error.message)")
            }
        }
        // A transcript may be plain text, or WebVTT held to the same rules.
        #expect(try CompanionText.check(Data("Welcome to Fish Lake.\n".utf8), role: .transcript) == .plainText)
        #expect(try CompanionText.check(Data(Self.captions.utf8), role: .transcript) == .webVTT)
        #expect(throws: CompanionTextProblem.self) {
            try CompanionText.check(Data("WEBVTT\n\n00:00:04.000 --> 00:00:01.000\nA\n".utf8), role: .transcript)
        }
        #expect(throws: CompanionTextProblem.self) { try CompanionText.check(Data(" \n\n".utf8), role: .transcript) }
    }

    @Test("API: each bad caption file (no header, times backwards, not UTF-8, HTML named .vtt) and captions on an image: 422 on `file`, nothing kept")
    func apiRefusals() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            let token = try await env.token("author@test.org")
            let (video, _, image) = try await Self.media(env, client, token: token)
            let assetsBefore = try await Self.count(env, "SELECT COUNT(*) FROM asset")
            let auditBefore = try await Self.count(env, "SELECT COUNT(*) FROM auditEvent")
            let cases: [(Int64, Data, String, String)] = [
                (video, Data("1\n00:00:00.000 --> 00:00:01.000\nHi\n".utf8), "intro.vtt", "Line 1 must be “WEBVTT”"),
                (
                    video, Data("WEBVTT\n\n00:00:05.000 --> 00:00:06.000\nB\n\n00:00:02.000 --> 00:00:03.000\nA\n".utf8), "intro.vtt",
                    "must not go backwards"
                ),
                (video, Data([0x57, 0x45, 0x42, 0x56, 0x54, 0x54, 0x0A, 0x0A, 0xC3, 0x28]), "intro.vtt", "not UTF-8"),
                (video, MediaFixtures.text("<!doctype html><html><script>alert(1)</script></html>"), "intro.vtt", "This is an HTML page"),
                (image, Data(Self.captions.utf8), "shore.vtt", "An image gets alt text, not captions"),
            ]
            for (asset, data, name, message) in cases {
                let refused = try await Self.multipart(client, "/api/v1/manage/assets/\(asset)/captions", token: token, data: data, name: name)
                #expect(refused.status == .unprocessableContent, "\(name): \(refused.status) \(refused.text)")
                #expect(refused.errorFields["file"]?.contains(message) == true, "\(refused.text)")
            }
            let transcriptOnImage = try await client.api(
                .post,
                "/api/v1/manage/assets/\(image)/transcript",
                token: token,
                json: #"{"text":"Shore."}"#
            )
            #expect(
                transcriptOnImage.status == .unprocessableContent && transcriptOnImage.errorFields["text"]?.contains("alt text") == true,
                "\(transcriptOnImage.text)"
            )
            let emptyTranscript = try await client.api(.post, "/api/v1/manage/assets/\(video)/transcript", token: token, json: #"{"text":"  "}"#)
            #expect(emptyTranscript.status == .unprocessableContent && emptyTranscript.errorFields["text"] != nil, "\(emptyTranscript.text)")
            let wrongType = try await client.api(.post, "/api/v1/manage/assets/\(video)/captions", token: token, json: #"{"text":"Hi"}"#)
            #expect(wrongType.status == .unsupportedMediaType, "captions come as a file")
            await #expect(try Self.count(env, "SELECT COUNT(*) FROM asset") == assetsBefore, "no row added")
            await #expect(try Self.count(env, "SELECT COUNT(*) FROM auditEvent") == auditBefore, "nothing recorded")
            #expect(Self.files(env, in: "uploads").isEmpty, "no upload file left behind: \(Self.files(env, in: "uploads"))")
            let reviewer = try await Self.multipart(
                client,
                "/api/v1/manage/assets/\(video)/captions",
                token: try env.token("reviewer@test.org"),
                data: Data(Self.captions.utf8),
                name: "intro.vtt"
            )
            #expect(reviewer.status == .forbidden)
        }
    }

    @Test("API: captions and a typed transcript attach, are scanned, listed under their file and in the tour; a second upload replaces the first")
    func apiAttach() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            let token = try await env.token("author@test.org")
            let (video, audio, _) = try await Self.media(env, client, token: token)
            let added = try await Self.multipart(
                client,
                "/api/v1/manage/assets/\(video)/captions",
                token: token,
                data: Data(Self.captions.utf8),
                name: "welcome.vtt",
                type: "text/vtt"
            )
            #expect(added.status == .created, "\(added.text)")
            #expect(added.jsonObject["role"] as? String == "captions" && publishInt(added.jsonObject["companionOf"]) == Int(video))
            #expect(added.jsonObject["mimeType"] as? String == "text/vtt" && added.jsonObject["scanStatus"] as? String == "pending")
            let typed = try await client.api(
                .post,
                "/api/v1/manage/assets/\(audio)/transcript",
                token: token,
                json: #"{"text":"A loon calls across Fish Lake.\nThen wind."}"#
            )
            #expect(typed.status == .created && typed.jsonObject["mimeType"] as? String == "text/plain", "\(typed.text)")
            #expect(typed.jsonObject["originalName"] as? String == "loon call.transcript.txt")
            // A companion file has no place among the media: its `order` is 0, which the document's Asset schema allows.
            let document =
                try JSONSerialization.jsonObject(with: Data(contentsOf: projectRoot.appendingPathComponent("openapi.json"))) as? [String: Any]
            let asset = ((document?["components"] as? [String: Any])?["schemas"] as? [String: Any])?["Asset"] as? [String: Any]
            let minimum = try #require(((asset?["properties"] as? [String: Any])?["order"] as? [String: Any])?["minimum"] as? Int)
            for answer in [added, typed] {
                #expect(
                    publishInt(answer.jsonObject["order"]) == 0 && minimum <= 0,
                    "order \(answer.jsonObject["order"] ?? "none") against minimum \(minimum)"
                )
            }
            #expect(await env.scanAll() == 2, "captions and transcript are scanned like any upload")

            let listed = try await client.api(.get, "/api/v1/manage/assets/\(video)", token: token)
            let captions = try #require(listed.jsonObject["captions"] as? [String: Any], "\(listed.text)")
            #expect(captions["scanStatus"] as? String == "clean" && captions["sha256"] as? String == MediaFixtures.sha256(Data(Self.captions.utf8)))
            let tour = try await client.api(.get, "/api/v1/manage/tours/\(env.seed.tourId)", token: token)
            let files = ((tour.jsonObject["waypoints"] as? [[String: Any]])?.first?["assets"] as? [[String: Any]]) ?? []
            #expect(files.count == 3, "captions and transcripts are not listed as files of their own: \(files.map { $0["originalName"] ?? "" })")
            #expect((files.first { publishInt($0["id"]) == Int(audio) }?["transcript"] as? [String: Any])?["mimeType"] as? String == "text/plain")

            // The content serves as WebVTT, for the <track>.
            let session = try await client.signIn("author@test.org")
            let content = try await client.get("/assets/\(try #require(publishInt(captions["id"])))/content", session: session)
            #expect(content.headers[.contentType] == "text/vtt; charset=utf-8" && content.text == Self.captions)

            let replacement = "WEBVTT\n\n00:00:00.000 --> 00:00:01.000\nWelcome.\n"
            try await Self.attachCaptions(client, token: token, to: video, text: replacement)
            await #expect(try Self.companionRows(env) == 2, "one captions file per video")
            #expect(try await env.database.companions(of: video).captions?.sha256 == MediaFixtures.sha256(Data(replacement.utf8)))
            #expect(await env.scanAll() == 1)
            #expect(!Self.files(env, in: "assets").contains(MediaFixtures.sha256(Data(Self.captions.utf8))), "the replaced file is gone")
        }
    }

    @Test("required: a video without captions and audio without a transcript stop the submission, each named; recommended: warnings")
    func checklist() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            let token = try await env.token("author@test.org")
            let (video, audio, _) = try await Self.media(env, client, token: token)
            let refused = try await client.api(.post, "/api/v1/manage/tours/\(env.seed.tourId)/publish", token: token)
            #expect(refused.status == .unprocessableContent)
            let problems = Set(refused.errorFields.values)
            #expect(
                problems.contains("Video “welcome.mp4” at “Fish Lake” has no captions: add a WebVTT file on the waypoint's page."),
                "\(refused.text)"
            )
            #expect(problems.contains("Audio “loon call.mp3” at “Fish Lake” has no transcript: add one on the waypoint's page."), "\(refused.text)")

            try await env.sql("UPDATE site SET mediaAccessibility = 'recommended' WHERE id = ?", [env.seed.alphaId])
            let readiness = try await env.database.publishReadiness(tourId: env.seed.tourId, tiles: env.app.dependencies.tileSettings.current)
            #expect(readiness.problems.isEmpty && readiness.warnings.count == 2, "\(readiness)")
            try await env.sql("UPDATE site SET mediaAccessibility = 'required' WHERE id = ?", [env.seed.alphaId])

            // Captions added but not yet scanned: the file is named as not clean.
            try await Self.attachCaptions(client, token: token, to: video)
            _ = try await client.api(.post, "/api/v1/manage/assets/\(audio)/transcript", token: token, json: #"{"text":"A loon calls."}"#)
            #expect(
                try await env.database.publishChecklist(tourId: env.seed.tourId, tiles: env.app.dependencies.tileSettings.current) == [
                    "File “captions.vtt” at “Fish Lake” is pending, not clean.",
                    "File “loon call.transcript.txt” at “Fish Lake” is pending, not clean.",
                ]
            )
            #expect(await env.scanAll() == 2)
            #expect(try await env.database.publishChecklist(tourId: env.seed.tourId, tiles: env.app.dependencies.tileSettings.current).isEmpty)
        }
    }

    @Test(
        "package: captions and transcript beside their files, listed, hashed and signed; a v1 reader still verifies; the review page plays the track"
    )
    func packageAndReview() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            let token = try await env.token("author@test.org")
            _ = try await Self.accessibleMedia(env, client, token: token)
            let request = try await env.readyRequest(approvers: ["reviewer@test.org"])
            #expect(request.state == .ready, "\(request.failureReason ?? "")")
            let zip = env.stagedZip(request.id)
            let report = PackageVerifier.verify(zipAt: zip, publicKeyBase64: env.publicKey)
            #expect(report.isValid, "\(report.issues)")
            #expect(report.listedFileCount == 6, "three files, captions, transcript, waypoints.geojson")
            let manifest = try Manifest.decode(Data(#require(request.manifestJSON).utf8))
            let assets = manifest.waypoints[0].assets
            let videoEntry = try #require(assets.first { $0.type == .video })
            #expect(videoEntry.path == "waypoints/01-fish-lake/01-welcome.mp4")
            #expect(
                videoEntry.captions
                    == Manifest.CompanionFile(
                        path: "waypoints/01-fish-lake/01-welcome-captions.vtt",
                        size: Int64(Self.captions.utf8.count),
                        sha256: MediaFixtures.sha256(Data(Self.captions.utf8))
                    )
            )
            #expect(assets.first { $0.type == .audio }?.transcript?.path == "waypoints/01-fish-lake/02-loon-call-transcript.txt")
            // Python's zipfile: the entries are there, deflated (text), with the manifest's bytes.
            let listing = try await PythonZipListing.read(zip)
            let captionsEntry = try #require(
                listing.entries.first { $0.name == "waypoints/01-fish-lake/01-welcome-captions.vtt" },
                "\(listing.entries.map(\.name))"
            )
            #expect(captionsEntry.method == PythonZipListing.deflated && captionsEntry.sha256 == videoEntry.captions?.sha256)
            // The independent v1 reader, which knows nothing of captions, still verifies the package and ignores the new keys.
            let check = try await TestScripts.python("package_v1_check.py", [zip.path, env.publicKey])
            let result = try #require(try JSONSerialization.jsonObject(with: Data(check.stdout.utf8)) as? [String: Any], "\(check.stderr)")
            #expect(result["valid"] as? Bool == true, "\(check.stdout)")

            let session = try await client.signIn("reviewer@test.org")
            let page = try await client.get("/requests/\(request.id)", session: session)
            #expect(page.text.contains(#"<track kind="captions" label="Captions" src="/requests/\#(request.id)/assets/0/captions" default>"#))
            #expect(page.text.contains("Captions</div>") || page.text.contains(">Captions<"), "the reviewer sees what is present")
            #expect(page.text.contains("No captions") == false && page.text.contains("Transcript"))
            let track = try await client.get("/requests/\(request.id)/assets/0/captions", session: session)
            #expect(track.status == .ok && track.headers[.contentType] == "text/vtt; charset=utf-8" && track.text == Self.captions)
            let transcript = try await client.get("/requests/\(request.id)/assets/1/transcript", session: session)
            #expect(transcript.text == "A loon calls.")
            #expect(try await client.get("/requests/\(request.id)/assets/2/captions", session: session).status == .notFound, "the image has none")
        }
    }

    @Test(
        "panel: an HTML file as captions is refused under its field, nothing saved; a typed transcript is saved; the clean captions play as a track"
    )
    func panelForms() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            let token = try await env.token("author@test.org")
            let (video, audio, _) = try await Self.media(env, client, token: token)
            let session = try await client.signIn("author@test.org")
            let page = try await client.get("/tours/\(env.seed.tourId)/waypoints/\(env.seed.waypointId)", session: session)
            #expect(page.text.contains(#"<label class="form-label small mb-0" for="captions-\#(video)">Captions file (WebVTT, .vtt)</label>"#))
            #expect(page.text.contains(#"for="transcript-text-\#(audio)">Type or paste the words</label>"#))
            #expect(page.text.contains("No captions yet") && page.text.contains("No transcript yet"))

            let boundary = "----WebKitFormBoundary\(UUID().uuidString.prefix(16))"
            let html = try await client.execute(
                uri: "/assets/\(video)/captions",
                method: .post,
                headers: [.cookie: session.cookieHeader, .contentType: "multipart/form-data; boundary=\(boundary)"],
                body: PublishFixtures.multipart(
                    Data("<html><body>hi</body></html>".utf8),
                    fileName: "welcome.vtt",
                    contentType: "text/vtt",
                    boundary: boundary,
                    csrf: session.csrf
                )
            )
            #expect(html.status == .unprocessableContent)
            #expect(
                html.text.contains(#"<div class="invalid-feedback d-block" id="captions-error-\#(video)">This is an HTML page, not WebVTT captions"#),
                "the message sits under the field"
            )
            await #expect(try Self.companionRows(env) == 0 && Self.files(env, in: "uploads").isEmpty)

            let typed = try await client.post("/assets/\(audio)/transcript", form: ["text": "A loon calls across the lake."], session: session)
            #expect(typed.status == .seeOther && typed.location == "/tours/\(env.seed.tourId)/waypoints/\(env.seed.waypointId)#asset-\(audio)")
            let empty = try await client.post("/assets/\(audio)/transcript", form: ["text": ""], session: session)
            #expect(empty.status == .unprocessableContent && empty.text.contains(#"id="transcript-error-\#(audio)">Write the transcript"#))
            try await Self.attachCaptions(client, token: token, to: video)
            #expect(await env.scanAll() == 2)
            let after = try await client.get("/tours/\(env.seed.tourId)/waypoints/\(env.seed.waypointId)", session: session)
            let captionsId = try #require(try await env.database.companions(of: video).captions?.id)
            #expect(after.text.contains(#"<track kind="captions" label="Captions" src="/assets/\#(captionsId)/content" default>"#))
            #expect(after.text.contains("A loon calls across the lake.") && !after.text.contains("No transcript yet"))
        }
    }

    @Test(
        "deleting a video removes its captions and their file; a new take of the audio keeps its transcript; an image in a video's place drops its captions"
    )
    func deleteAndReplace() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            let token = try await env.token("author@test.org")
            let (video, audio) = try await Self.accessibleMedia(env, client, token: token)
            let captionsFile = MediaFixtures.sha256(Data(Self.captions.utf8))
            #expect(Self.files(env, in: "assets").contains(captionsFile))

            /// `replaces`: the panel's and the API's way to upload a new version of a file in its place.
            func replace(_ id: Int64, with data: Data, name: String) async throws -> Int64 {
                let boundary = "replace-\(UUID().uuidString)"
                var body = ByteBuffer()
                body.writeString("--\(boundary)\r\nContent-Disposition: form-data; name=\"replaces\"\r\n\r\n\(id)\r\n")
                body.writeString(
                    "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(name)\"\r\nContent-Type: application/octet-stream\r\n\r\n"
                )
                body.writeBytes(data)
                body.writeString("\r\n--\(boundary)--\r\n")
                let response = try await client.execute(
                    uri: "/api/v1/manage/tours/\(env.seed.tourId)/waypoints/\(env.seed.waypointId)/assets",
                    method: .post,
                    headers: [.authorization: "Bearer \(token)", .contentType: "multipart/form-data; boundary=\(boundary)"],
                    body: body
                )
                #expect(response.status == .created, "\(response.text)")
                return Int64(try #require(publishInt(response.jsonObject["id"])))
            }

            // A new take of the audio (same kind): the transcript stays with it.
            let takeTwo = try await replace(audio, with: Self.mp3(seed: 34), name: "take2.mp3")
            #expect(try await env.database.asset(id: audio) == nil)
            #expect(try await env.database.companions(of: takeTwo).transcript != nil, "the transcript moved to the new take")

            // The video deleted: its captions row and their file go too.
            let deleted = try await client.post("/assets/\(video)/delete", form: [:], session: try await client.signIn("author@test.org"))
            #expect(deleted.status == .seeOther)
            await #expect(try Self.count(env, "SELECT COUNT(*) FROM asset WHERE companionRole = 'captions'") == 0)
            #expect(!Self.files(env, in: "assets").contains(captionsFile), "the captions' file went with the video")

            // A video replaced by an image: an image cannot use captions, so they go.
            let second = try await Self.multipart(
                client,
                "/api/v1/manage/tours/\(env.seed.tourId)/waypoints/\(env.seed.waypointId)/assets",
                token: token,
                data: PublishFixtures.mp4(size: 40_000, seed: 35),
                name: "second.mp4"
            )
            let secondVideo = Int64(try #require(publishInt(second.jsonObject["id"])))
            try await Self.attachCaptions(client, token: token, to: secondVideo)
            #expect(await env.scanAll() == 3)
            let picture = try await replace(secondVideo, with: MediaFixtures.png(size: 10_000, seed: 36), name: "still.png")
            #expect(try await env.database.companions(of: picture).captions == nil)
            await #expect(try Self.count(env, "SELECT COUNT(*) FROM asset WHERE companionRole = 'captions'") == 0)
            #expect(!Self.files(env, in: "assets").contains(captionsFile))
        }
    }
}
