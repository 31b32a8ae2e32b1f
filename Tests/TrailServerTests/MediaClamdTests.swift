import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MalwareScan
import NIOCore
import Testing

@testable import TrailServer

/// The clamd backend behind the server: a real `/usr/sbin/clamd` on a unix socket in a temp folder, loaded with
/// the test's EICAR signature, and a ScanService built with `ClamdScanner`.
@Suite("Media: scanning through clamd", .enabled(if: MediaClamd.isInstalled, "needs clamav-daemon (/usr/sbin/clamd)"), .scratch)
struct MediaClamdTests {
    @Test("clamd gives the same verdicts: EICAR infected in quarantine, a clean file in assets/<sha256>, over StreamMaxLength not clean")
    func sameVerdicts() async throws {
        var daemon: MediaClamd?
        let env = try await TestEnv.media(scanner: { signatures in
            // Started here so the scanner points at the socket; the signature folder already holds the EICAR signature.
            daemon = try? MediaClamd(signatureFolder: signatures, streamMaxLength: "1M")
            return ClamdScanner(endpoint: .unixSocket(path: daemon?.socketPath ?? "/nonexistent"), signatureDirectories: [signatures.path])
        })
        let clamd = try #require(daemon, "clamd did not start")
        do {
            try await clamd.waitUntilReady()
            #expect(env.scans.scanner is ClamdScanner)
            let author = try await env.token("author@test.org")
            try await env.app.test { client in
                let infected = try await client.mediaAPIUpload(env, token: author, data: MediaFixtures.eicar, fileName: "eicar.txt")
                let clean = try await client.mediaAPIUpload(env, token: author, data: MediaFixtures.png(size: 300_000), fileName: "lake.png")
                // 2 MiB with EICAR at its very end, over clamd's 1 MiB StreamMaxLength: clamd cannot see it whole.
                let big = try await client.mediaAPIUpload(
                    env,
                    token: author,
                    data: MediaFixtures.pngEndingWithEICAR(size: 2 * 1024 * 1024),
                    fileName: "big.png"
                )
                for response in [infected, clean, big] { #expect(response.status == .created, "\(response.text)") }
                #expect(await env.scanAll() == 3)

                let infectedAsset = try await env.asset(try #require(infected.mediaAssetId))
                #expect(infectedAsset.scanStatus == .infected)
                #expect(infectedAsset.scanDetail == EICAR.reportedSignatureName)
                #expect(infectedAsset.storedPath.hasPrefix("quarantine/"))

                let cleanAsset = try await env.asset(try #require(clean.mediaAssetId))
                #expect(cleanAsset.scanStatus == .clean, "\(cleanAsset.scanDetail)")
                #expect(cleanAsset.storedPath == "assets/\(cleanAsset.sha256)")

                let bigAsset = try await env.asset(try #require(big.mediaAssetId))
                #expect(bigAsset.scanStatus != .clean)
                #expect(bigAsset.scanStatus == .unscannable, "\(bigAsset.scanStatus): \(bigAsset.scanDetail)")
                #expect(bigAsset.storedPath.hasPrefix("quarantine/"))

                #expect(env.files(in: "assets") == [cleanAsset.sha256])
                #expect(env.files(in: "quarantine").count == 2)
                #expect(env.files(in: "uploads").isEmpty)
                let json = try await client.mediaAsset(infectedAsset.id, token: author)
                #expect(json["scanDetail"] as? String == EICAR.reportedSignatureName)
            }
            // clamd gone: nothing is scanned and nothing turns clean (fail closed).
            await clamd.stop()
            try await env.app.test { client in
                let later = try await client.mediaAPIUpload(env, token: author, data: MediaFixtures.text("after clamd stopped"), fileName: "late.txt")
                let id = try #require(later.mediaAssetId)
                #expect(await env.scanAll() == 0)
                #expect(env.scans.scannerReady == false)
                await #expect(try env.asset(id).scanStatus == .pending)
            }
        } catch {
            Issue.record("clamd log:\n\(clamd.log)")
            await clamd.stop()
            throw error
        }
        await clamd.stop()
        #expect(clamd.isRunning == false)
    }
}
