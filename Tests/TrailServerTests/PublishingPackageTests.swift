import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MalwareScan
import NIOCore
import PackageFormat
import Testing

@testable import TrailServer

/// The built package itself: read back by Python's zipfile and Info-ZIP, its signature, its determinism,
/// and builds that must fail (a missing file, a file the re-scan now finds infected).
@Suite("Publishing: the built package", .scratch)
struct PublishingPackageTests {
    /// 200 characters (grapheme clusters) of Unicode from several scripts, with emoji, a right-to-left override and a zero-width joiner.
    static let longUnicodeName: String = {
        let pieces = ["Ωμέγα", " 東京タワー", " Café Ñandú", " ☃︎", " 👩‍👩‍👧", " עברית", " \u{202E}gnp.exe", " Łódź", " 𝔘𝔫𝔦𝔠𝔬𝔡𝔢"]
        var name = ""
        var index = 0
        while name.count < 200 {
            name += pieces[index % pieces.count]
            index += 1
        }
        return String(name.prefix(200))
    }()

    @Test("Python's zipfile reads back exactly the manifest: paths, sizes, SHA-256, no extras, safe names even for hostile waypoint and file names")
    func independentReaderWithHostileNames() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let author = try await env.token("author@test.org")
        let tourURI = "/api/v1/manage/tours/\(env.seed.tourId)"
        try await env.app.test { client in
            // Waypoint names an attacker (or a careless import) might choose.
            var waypointIds: [String: Int64] = [:]
            let apiNames = ["../../x", "CON", String(Self.longUnicodeName.prefix(120)), "..\\..\\windows", "/etc/cron.d/evil", "nul.txt"]
            for (index, name) in apiNames.enumerated() {
                let body = try JSONSerialization.data(withJSONObject: [
                    "name": name, "latitude": 44.37 + Double(index) * 0.005, "longitude": -122.2 + Double(index) * 0.02,
                ])
                let response = try await client.api(.post, "\(tourURI)/waypoints", token: author, json: String(decoding: body, as: UTF8.self))
                #expect(response.status == .created, "waypoint \(name.debugDescription): \(response.status) \(response.text)")
                waypointIds[name] = Int64(try #require(publishInt(response.jsonObject["id"])))
            }
            // The 200-character name is longer than the panel accepts (120): put it in as an import or an old row might.
            let longId = try #require(waypointIds[String(Self.longUnicodeName.prefix(120))])
            try await env.sql("UPDATE waypoint SET name = ? WHERE id = ?", [Self.longUnicodeName, longId])

            // Files with hostile original names, of the three kinds (stored and deflated).
            let uploads: [(Int64, Data, String, String)] = [
                (try #require(waypointIds["../../x"]), MediaFixtures.png(size: 20_000, seed: 21), "../../etc/passwd", "image/png"),
                (try #require(waypointIds["CON"]), MediaFixtures.text("CON is a device on Windows."), "CON.txt", "text/plain"),
                (longId, PublishFixtures.mp4(size: 50_000, seed: 22), "..\\..\\boot.ini", "video/mp4"),
                (try #require(waypointIds["..\\..\\windows"]), MediaFixtures.text("same name twice"), "notes.txt", "text/plain"),
                (try #require(waypointIds["..\\..\\windows"]), MediaFixtures.text("same name twice, other bytes"), "notes.txt", "text/plain"),
                (env.seed.waypointId, MediaFixtures.png(size: 20_000, seed: 21), "same bytes as the passwd one.png", "image/png"),
            ]
            var assetIds: [Int64] = []
            for (waypointId, data, name, type) in uploads {
                assetIds.append(
                    try await client.publishUpload(env, token: author, data: data, fileName: name, contentType: type, waypointId: waypointId)
                )
            }
            await env.scanAll()
            for id in assetIds { #expect(try await env.database.asset(id: id)?.scanStatus == .clean, "asset \(id) is not clean") }
            // The upload keeps only the last component of a name; give some the raw hostile names as an older row might hold.
            for (id, name) in [(assetIds[0], "../../etc/passwd"), (assetIds[1], "/CON"), (assetIds[2], "..\\..\\boot.ini"), (assetIds[5], "..")] {
                try await env.sql("UPDATE asset SET originalName = ? WHERE id = ?", [name, id])
            }

            let rid = try await client.publishSubmit(env, token: author)
            #expect(await env.buildAll() == 1)
            let request = try await env.request(rid)
            #expect(request.state == .pending, "build failed: \(request.failureReason ?? "")")
            let zip = env.stagedZip(rid)
            let listing = try await expectPackageMatchesManifest(zip)

            // The names in the manifest are the originals; only the paths are made safe.
            let manifestNames = (listing.manifest["waypoints"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
            #expect(manifestNames == ["Fish Lake"] + ["../../x", "CON", Self.longUnicodeName] + apiNames.suffix(3), "\(manifestNames)")
            for entry in listing.entries {
                #expect(
                    entry.name.unicodeScalars.allSatisfy {
                        ("a"..."z").contains($0) || ("0"..."9").contains($0) || "._/-".unicodeScalars.contains($0)
                    },
                    "entry name outside [a-z0-9._/-]: \(entry.name.debugDescription)"
                )
                #expect(PackageLayout.isSafeEntryPath(entry.name))
                #expect(entry.name.utf8.count <= 200, "very long entry name \(entry.name)")
                let lastComponent = entry.name.split(separator: "/").last.map(String.init) ?? ""
                let stem = lastComponent.split(separator: ".").first.map(String.init) ?? ""
                #expect(!["con", "prn", "aux", "nul"].contains(stem.lowercased()), "Windows device name \(entry.name)")
            }
            // The video's captions are packaged beside it (`…-captions.vtt`, deflated text), the one entry more than the uploads.
            let captions = listing.entries.map(\.name).filter { $0.hasSuffix("-captions.vtt") }
            #expect(captions.count == 1, "\(captions)")
            let media = listing.entries.map(\.name).filter { $0.hasPrefix("waypoints/") && !$0.hasSuffix("-captions.vtt") }
            #expect(media.count == uploads.count, "\(media)")
            #expect(Set(media.map { $0.split(separator: "/")[1] }).count == 5, "one folder per waypoint with files: \(media)")
            #expect(media.contains { $0.hasPrefix("waypoints/02-x/") }, "\(media)")
            #expect(media.contains { $0.hasPrefix("waypoints/03-con/") }, "\(media)")
            // Two files with the same original name in one waypoint get different paths; the same bytes twice are two entries.
            #expect(media.filter { $0.hasPrefix("waypoints/05-") }.count == 2)
            let stored = listing.entries.filter { $0.method == PythonZipListing.stored }.map(\.name)
            let deflated = listing.entries.filter { $0.method == PythonZipListing.deflated }.map(\.name)
            #expect(
                Set(deflated) == Set(["manifest.json", "waypoints.geojson"] + captions + media.filter { $0.hasSuffix(".txt") }),
                "deflated: \(deflated)"
            )
            #expect(stored.contains("manifest.sig"))
            #expect(stored.filter { $0.hasPrefix("waypoints/") }.count == 3, "stored media: \(stored)")
            #expect(listing.fileSHA256 == request.zipSha256)
            #expect(listing.fileSize == request.zipSize)
            #expect(!listing.zip64, "a small package needs no ZIP64")

            // And our own verifier agrees.
            let report = PackageVerifier.verify(zipAt: zip, publicKeyBase64: env.publicKey)
            #expect(report.isValid, "\(report.problems)")
        }
    }

    @Test(
        "manifest.sig verifies with the server's public key (the key file in data/keys, mode 0600) and fails when one byte of manifest.json changes"
    )
    func signatureVerifiesAndDetectsOneByte() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let author = try await env.token("author@test.org")
        try await env.app.test { client in
            try await env.addCleanMedia(client, token: author)
            let rid = try await client.publishSubmit(env, token: author)
            #expect(await env.buildAll() == 1)
            let request = try await env.request(rid)
            let zipURL = env.stagedZip(rid)

            // The key the server signs with is the one created in data/keys, readable by the owner only.
            let keyFile = env.paths.signingKey
            let attributes = try FileManager.default.attributesOfItem(atPath: keyFile.path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            #expect(try SigningKey.load(at: keyFile).publicKeyBase64 == env.publicKey)

            // The key the API publishes is that key.
            let published = try await client.api(.get, "/api/v1/signing-key", token: nil)
            #expect(published.status == .ok)
            #expect(published.jsonObject["algorithm"] as? String == "ed25519")
            #expect(published.jsonObject["publicKey"] as? String == env.publicKey)

            let report = PackageVerifier.verify(zipAt: zipURL, publicKeyBase64: env.publicKey)
            #expect(report.isValid, "\(report.problems)")
            #expect(report.signatureValid == true)
            let manifestBytes = try #require(report.manifestBytes)
            let signature = try #require(report.signature)
            #expect(signature.count == 64)
            #expect(signature.base64EncodedString() == request.signature, "the recorded signature is not the one in the zip")
            #expect(String(decoding: manifestBytes, as: UTF8.self) == request.manifestJSON)
            #expect(SignatureCheck.verify(signature: signature, of: manifestBytes, publicKeyBase64: env.publicKey))

            // One byte changed anywhere: first, middle, last, and one bit of a digit.
            for offset in [0, manifestBytes.count / 2, manifestBytes.count - 1] {
                var altered = manifestBytes
                altered[altered.startIndex + offset] ^= 0x01
                #expect(
                    !SignatureCheck.verify(signature: signature, of: altered, publicKeyBase64: env.publicKey),
                    "byte \(offset) changed and the signature still verifies"
                )
            }
            #expect(
                !SignatureCheck.verify(signature: signature, of: manifestBytes, publicKeyBase64: SigningKey.generate().publicKeyBase64),
                "another key verifies the signature"
            )

            // The same through a whole zip: Python rewrites manifest.json with one letter's case flipped.
            let tampered = env.folder.appendingPathComponent("tampered.zip")
            let output = try await TestScripts.python("package_zip.py", ["tamper", zipURL.path, tampered.path])
            #expect(output.status == 0, "\(output.stderr)")
            #expect(output.lastLineJSON["changed"] != nil, "\(output.stdout)")
            let tamperedReport = PackageVerifier.verify(zipAt: tampered, publicKeyBase64: env.publicKey)
            #expect(!tamperedReport.isValid)
            #expect(tamperedReport.signatureValid == false)
            #expect(tamperedReport.issues.contains(.signatureMismatch), "\(tamperedReport.problems)")
            let tamperedManifest = try #require(tamperedReport.manifestBytes)
            #expect(tamperedManifest.count == manifestBytes.count)
            #expect(zip(tamperedManifest, manifestBytes).filter { $0 != $1 }.count == 1, "exactly one byte differs")
        }
    }

    @Test("The same snapshot built twice, a second apart, gives the same bytes and SHA-256")
    func sameSnapshotSameBytes() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let author = try await env.token("author@test.org")
        try await env.app.test { client in
            try await env.addCleanMedia(client, token: author)
            let rid = try await client.publishSubmit(env, token: author)
            #expect(await env.buildAll() == 1)
            let first = try await env.request(rid)
            #expect(first.state == .pending)
            let firstBytes = try Data(contentsOf: env.stagedZip(rid))
            #expect(MediaFixtures.sha256(firstBytes) == first.zipSha256)

            try await Task.sleep(for: .milliseconds(1_100))
            // Re-queue the same request (what recovery does), and build it again through the same code path.
            try await env.sql("UPDATE publishRequest SET state = 'building' WHERE id = ?", [rid])
            try await env.sql("INSERT INTO buildJob (requestId, queuedAt) VALUES (?, ?)", [rid, Date().timeIntervalSince1970])
            #expect(await env.buildAll() == 1)
            let second = try await env.request(rid)
            #expect(second.state == .pending)
            #expect(second.zipSha256 == first.zipSha256, "a rebuild of the same snapshot changed the SHA-256")
            #expect(second.zipSize == first.zipSize)
            #expect(second.signature == first.signature)
            #expect(try Data(contentsOf: env.stagedZip(rid)) == firstBytes)
        }
    }

    @Test("A file missing from data/assets/ at build time: failed with the reason, staging removed, the tour editable again")
    func buildFailsOnMissingFile() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let author = try await env.token("author@test.org")
        try await env.app.test { client in
            let ids = try await env.addCleanMedia(client, token: author)
            let asset = try #require(try await env.database.asset(id: ids[1]))
            let rid = try await client.publishSubmit(env, token: author)
            try FileManager.default.removeItem(at: env.paths.absolute(asset.storedPath))
            #expect(await env.buildAll() == 1)
            let request = try await env.request(rid)
            #expect(request.state == .failed)
            #expect(request.failureReason?.contains("“intro.mp4” is missing") == true, "\(request.failureReason ?? "")")
            #expect(!env.exists(env.stagingFolder(rid)), "the staging folder of a failed build was kept")
            await #expect(try env.tour().state == .draft)
            await #expect(try env.auditCount("publish.failed", objectId: rid) == 1)
            #expect(try await env.database.queuedBuilds().isEmpty)
            let state = try await client.publishState(rid, token: author)
            #expect(state["state"] as? String == "failed")
            #expect((state["failureReason"] as? String)?.contains("missing") == true)
            let edit = try await client.api(.patch, "/api/v1/manage/tours/\(env.seed.tourId)", token: author, json: #"{"description":"editable"}"#)
            #expect(edit.status == .ok)
            let session = try await client.signIn("author@test.org")
            let page = try await client.get("/requests/\(rid)", session: session)
            #expect(page.text.contains("id=\"failure-reason\""))
            #expect(page.text.contains("is missing from the data folder"))
        }
    }

    @Test(
        "A file the re-scan now finds infected (a signature added after the upload): failed with the re-scan's message, the file queued for a rescan"
    )
    func buildFailsWhenRescanFindsMalware() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let author = try await env.token("author@test.org")
        try await env.app.test { client in
            try await env.addCleanMedia(client, token: author)
            let marker = "TRAIL-LATE-SIGNATURE-\(UUID().uuidString)"
            let lateId = try await client.publishUpload(
                env,
                token: author,
                data: MediaFixtures.text("Ranger notes \(marker) end."),
                fileName: "ranger.txt",
                contentType: "text/plain"
            )
            #expect(await env.scanAll() == 1)
            #expect(try await env.database.asset(id: lateId)?.scanStatus == .clean)

            // Today's signatures know the file: a body signature for its marker (the scanner reloads before the re-scan).
            let hex = marker.utf8.map { String(format: "%02x", $0) }.joined()
            try Data("Trail.Test.Late:0:*:\(hex)\n".utf8).write(to: env.signatures.appendingPathComponent("trail-test-late.ndb"), options: .atomic)

            let rid = try await client.publishSubmit(env, token: author)
            #expect(await env.buildAll() == 1)
            let request = try await env.request(rid)
            #expect(request.state == .failed)
            let reason = request.failureReason ?? ""
            #expect(reason.contains("the re-scan found a problem in “ranger.txt”"), "\(reason)")
            #expect(reason.contains("Trail.Test.Late"), "\(reason)")
            #expect(!env.exists(env.stagingFolder(rid)))
            await #expect(try env.tour().state == .draft)
            // The asset goes back through the scan queue and ends infected, in quarantine.
            #expect(try await env.database.scanJobCount() == 1)
            #expect(await env.scanAll() == 1)
            let asset = try #require(try await env.database.asset(id: lateId))
            #expect(asset.scanStatus == .infected)
            #expect(asset.storedPath.hasPrefix("quarantine/"))
            let response = try await client.api(.post, "/api/v1/manage/tours/\(env.seed.tourId)/publish", token: author)
            #expect(response.status == .unprocessableContent)
            #expect(response.errorFields.values.contains("File “ranger.txt” at “Fish Lake” is infected, not clean."), "\(response.errorFields)")
        }
    }

    @Test("No signatures loaded at build time: the build fails closed")
    func buildFailsWithoutSignatures() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let author = try await env.token("author@test.org")
        try await env.app.test { client in
            try await env.addCleanMedia(client, token: author)
            let rid = try await client.publishSubmit(env, token: author)
            // A restart with an empty signature folder.
            try FileManager.default.removeItem(at: env.signatures)
            try FileManager.default.createDirectory(at: env.signatures, withIntermediateDirectories: true)
            let restarted = try await env.reopen()
            #expect(await restarted.buildAll() == 1)
            let request = try await restarted.request(rid)
            #expect(request.state == .failed)
            #expect(request.failureReason?.contains("no signature database") == true, "\(request.failureReason ?? "")")
        }
    }
}
