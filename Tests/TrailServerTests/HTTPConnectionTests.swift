import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle
import TestSupport
import Testing

@testable import TrailServer

/// Connections on the real server (``HTTPServerBuilder/trail(_:)``): pipelining, back-pressure, file bodies, the idle
/// time-out, and ``WriteProgressTimeout`` against peers that never read.
@Suite(.scratch) struct HTTPConnectionTests {
    static let script = projectRoot.appendingPathComponent("Tests/TrailServerTests/Scripts/slow_client.py")

    static func get(
        _ client: some TestClientProtocol,
        _ uri: String,
        _ headers: HTTPFields = [:],
        method: HTTPRequest.Method = .get
    ) async throws -> TestResponse {
        try await client.execute(uri: uri, method: method, headers: headers)
    }

    /// Every header but `Date`, by name, in order.
    static func headers(_ response: TestResponse) -> [String] {
        response.headers.filter { $0.name != .date }.map { "\($0.name.canonicalName): \($0.value)" }
    }

    @Test("pipelined requests on one connection are answered in order")
    func pipelinedRequestsKeepTheirOrder() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test(.live) { client in
            let released = try await env.releaseThroughAPI(client)
            let port = try #require(client.port)
            let list = "/api/v1/sites/alpha/packages"
            let detail = "/api/v1/packages/\(released.packageId)"
            let paths = [list, "/healthz", "/api/v1/sites/bravo/packages", detail, "/healthz", list]
            let output = try await ChildProcess.run("python3", [Self.script.path, "pipeline", "\(port)"] + paths, timeout: .seconds(60))
            let answers = try #require(
                try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [[String: Any]],
                "\(output.stdout) \(output.stderr)"
            )
            #expect(answers.map { $0["status"] as? Int } == [200, 200, 200, 200, 200, 200])
            let bodies = answers.map { $0["body"] as? String ?? "" }
            #expect(bodies[1] == "ok" && bodies[4] == "ok")
            #expect(bodies[0].contains(released.packageId) && bodies[5] == bodies[0])
            #expect(bodies[2] == "[]", "bravo has no packages")
            #expect(bodies[3].contains("\"manifest\""))
        }
    }

    @Test("a client that sends requests without reading the answers is not answered without end; the answers it reads are in order")
    func answersRespectBackPressure() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        // On an event loop of its own: thousands of requests in a burst must not slow the other suites' servers.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let application = Application(
            router: buildRouter(env.app.dependencies),
            server: .trail(env.app.dependencies.config),
            eventLoopGroupProvider: .shared(group)
        )
        try await application.testLive { client in
            let port = try #require(client.port)
            let first = try await Self.get(client, "/api/v1/sites")
            // An answer's size on the wire (body and about a kilobyte of headers), and enough requests that their
            // answers are far more than the socket buffers (4 MiB at most here) can hold. With back-pressure, about
            // what those buffers hold stays queued; without it, the queue keeps growing: the limit below lies between.
            let answerBytes = first.body.readableBytes + first.headers.reduce(0) { $0 + $1.name.rawName.utf8.count + $1.value.utf8.count + 4 } + 20
            let count = (24 << 20) / answerBytes
            let answered = { env.app.metric(#"trail_http_requests_total{method="GET",status="200"}"#) }
            let before = answered()
            async let flood = ChildProcess.run(
                "python3",
                [Self.script.path, "flood", "\(port)", "/api/v1/sites", "\(count)", "3", "200"],
                timeout: .seconds(120)
            )
            try await Task.sleep(for: .milliseconds(2500))
            let queued = (answered() - before) * Double(answerBytes)
            let result = try await flood
            #expect(queued < Double(8 << 20), "\(Int(queued) >> 20) MiB of answers queued for a client that reads nothing (\(count) sent)")
            #expect(result.lastLineJSON["answers"] as? Int == 200, "\(result.stdout) \(result.stderr)")
            #expect(result.lastLineJSON["allOK"] as? Bool == true)
        }
        try await group.shutdownGracefully()
    }

    @Test("downloads: whole, ranges, If-Range, 416 and HEAD; the byte counter; a forged X-Accel-Redirect means nothing")
    func downloads() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test(.live) { client in
            let released = try await env.releaseThroughAPI(client, videoSize: 3 << 20)
            let bytes = try Data(contentsOf: released.zip)
            let url = "/api/v1/packages/\(released.packageId)/download"
            let counted = { env.app.metric(#"trail_download_bytes_total{route="package"}"#) }
            let before = counted()

            let whole = try await Self.get(client, url)
            #expect(whole.status == .ok && Data(buffer: whole.body) == bytes)
            #expect(whole.headers[.contentLength] == "\(bytes.count)")
            #expect(whole.headers[.xAccelRedirect] == nil, "without --accel-redirect the server sends the bytes")
            // Counted as each chunk is handed to the connection, which may be a moment after the client has the bytes.
            for _ in 0..<200 where counted() < before + Double(bytes.count) { try await Task.sleep(for: .milliseconds(10)) }
            #expect(counted() == before + Double(bytes.count))

            let middle = try await Self.get(client, url, [.range: "bytes=100-1099"])
            #expect(middle.status == .partialContent && Data(buffer: middle.body) == bytes[100..<1100])
            #expect(middle.headers[.contentRange] == "bytes 100-1099/\(bytes.count)")
            let tail = try await Self.get(client, url, [.range: "bytes=-10"])
            #expect(Data(buffer: tail.body) == bytes.suffix(10))
            let resumed = try await Self.get(client, url, [.range: "bytes=\(bytes.count - 5000)-", .ifRange: released.etag])
            #expect(resumed.status == .partialContent && Data(buffer: resumed.body) == bytes.suffix(5000))
            let otherVersion = try await Self.get(client, url, [.range: "bytes=10-", .ifRange: "\"old\""])
            #expect(otherVersion.status == .ok && otherVersion.body.readableBytes == bytes.count)
            let outside = try await Self.get(client, url, [.range: "bytes=\(bytes.count)-"])
            #expect(outside.status == .rangeNotSatisfiable && outside.text.contains("range_not_satisfiable"))
            let head = try await Self.get(client, url, method: .head)
            #expect(head.status == .ok && head.headers[.contentLength] == "\(bytes.count)" && head.body.readableBytes == 0)

            // A header only nginx's upstream may send means nothing from a client.
            let forged = try await Self.get(client, url, [.xAccelRedirect: "/etc/passwd"])
            #expect(Data(buffer: forged.body) == bytes && forged.headers[.xAccelRedirect] == nil)

            // The connection goes on after a file answer: a JSON answer on the same client.
            #expect(try await Self.get(client, "/api/v1/sites").status == .ok)
        }
    }

    @Test("the idle time-out: a connection polling the read routes stays open past it; a silent one is closed")
    func idleTimeout() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1, configure: { $0.idleConnectionTimeout = .seconds(2) })
        try await env.app.test(.live) { client in
            let port = try #require(client.port)
            // 10 polls, one every 0.5 s: 5 s on one connection.
            let poll = try await ChildProcess.run(
                "python3",
                [Self.script.path, "poll", "\(port)", "/api/v1/sites", "10", "0.5"],
                timeout: .seconds(60)
            )
            let statuses = try #require(poll.lastLineJSON["statuses"] as? [Int], "\(poll.stdout) \(poll.stderr)")
            let gaps = try #require(poll.lastLineJSON["gaps"] as? [Double])
            // Every poll sent within 1.8 s of the previous answer is answered (a machine too busy to keep that pace
            // may see the connection closed as idle, rightly, and the polls after that are not judged), and the
            // polls judged span more than the time-out, which a time-out counted from the connection's start would have cut.
            let judged = gaps.prefix { $0 < 1.8 }.count
            #expect(statuses.prefix(judged).allSatisfy { $0 == 200 }, "\(poll.stdout)")
            #expect(gaps.prefix(judged).reduce(0, +) > 2.5, "the polls judged span more than the time-out: \(poll.stdout)")
            let idle = try await ChildProcess.run("python3", [Self.script.path, "idle", "\(port)"], timeout: .seconds(60))
            let closedAfter = try #require(idle.lastLineJSON["closedAfter"] as? Double, "never closed: \(idle.stdout) \(idle.stderr)")
            #expect(closedAfter >= 1.9 && closedAfter < 30, "closed after \(closedAfter) s")
        }
    }

    @Test("a slow reader's download outlasts the idle time-out and completes")
    func slowDownloadIsNotCutByTheIdleTimeout() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1, configure: { $0.idleConnectionTimeout = .seconds(2) })
        // Released through the router: the live test client's own connection would be closed as idle whenever the
        // machine takes two seconds between two of its requests.
        let package = NIOLockedValueBox<ReleasedPackage?>(nil)
        try await env.app.test(.router) { client in
            let released = try await env.releaseThroughAPI(client, videoSize: 12 << 20)
            package.withLockedValue { $0 = released }
        }
        let released = try #require(package.withLockedValue { $0 })
        try await env.app.test(.live) { client in
            let port = try #require(client.port)
            // 256 KiB every 0.1 s through a 64 KiB window: about 5 s for 12 MiB, more than twice the time-out.
            let output = try await ChildProcess.run(
                "python3",
                [
                    Self.script.path, "download", "\(port)", "/api/v1/packages/\(released.packageId)/download", "\(256 << 10)", "0.1",
                ],
                timeout: .seconds(120)
            )
            let result = output.lastLineJSON
            #expect(result["status"] as? Int == 200, "\(output.stdout) \(output.stderr)")
            #expect(result["bytes"] as? Int == Int(released.size))
            #expect(result["sha256"] as? String == released.sha256)
            #expect((result["seconds"] as? Double ?? 0) > 4, "it really outlasted the time-out twice")
        }
    }

    /// A package released through the router (a live test client's own connection could be closed as idle while a
    /// busy machine takes its time between two requests).
    static func released(_ env: TestEnv, videoSize: Int) async throws -> ReleasedPackage {
        let package = NIOLockedValueBox<ReleasedPackage?>(nil)
        try await env.app.test(.router) { client in
            let released = try await env.releaseThroughAPI(client, videoSize: videoSize)
            package.withLockedValue { $0 = released }
        }
        return try #require(package.withLockedValue { $0 })
    }

    @Test("a download nobody reads is cut after the write time-out; one read slowly is not")
    func unreadDownloadIsCut() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1, configure: { $0.fileWriteTimeout = .seconds(3) })
        let released = try await Self.released(env, videoSize: 12 << 20)
        let path = "/api/v1/packages/\(released.packageId)/download"
        try await env.app.test(.live) { client in
            let port = try #require(client.port)
            // Nothing read for 8 s, more than twice the limit; then read to the end. Without the time-out, the whole file
            // would come once the client reads.
            let stalled = try await ChildProcess.run("python3", [Self.script.path, "stall", "\(port)", path, "8"], timeout: .seconds(120))
            let result = stalled.lastLineJSON
            #expect(result["status"] as? Int == 200, "\(stalled.stdout) \(stalled.stderr)")
            #expect(result["length"] as? Int == Int(released.size))
            #expect(result["cut"] as? Bool == true, "the server kept the connection of a peer that read nothing: \(stalled.stdout)")
            // A slow reader makes progress: 256 KiB every 0.1 s is about 5 s for the whole file, more than the limit. (The
            // server sees progress when the kernel takes bytes, which it does once a good part of its send buffer, up
            // to 4 MiB, has drained: a reader far slower than this would need a longer limit, as the real one is.)
            let slow = try await ChildProcess.run(
                "python3",
                [Self.script.path, "download", "\(port)", path, "\(256 << 10)", "0.1"],
                timeout: .seconds(120)
            )
            #expect(slow.lastLineJSON["bytes"] as? Int == Int(released.size), "\(slow.stdout) \(slow.stderr)")
            #expect(slow.lastLineJSON["sha256"] as? String == released.sha256)
        }
    }

    @Test(
        "50 clients pipelining requests and reading nothing: /healthz answers within 3 s throughout and after, and the write time-out closes them all"
    )
    func peersThatNeverReadCannotStallTheServer() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1, configure: { $0.writeTimeout = .seconds(2) })
        // Two event loops of its own, as `serve` has on a two-core machine: the other suites' servers do not share them.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let application = Application(
            router: buildRouter(env.app.dependencies),
            server: .trail(env.app.dependencies.config),
            eventLoopGroupProvider: .shared(group)
        )
        try await application.testLive { client in
            let port = try #require(client.port)
            // Each asks for the API document (about 100 KB) 40 times in one go: megabytes of answers, far more than the
            // sockets hold, for little work (the full flood of small answers, which takes a release build to answer in
            // time, is scripts/bench/bench-hostile.sh). Held 6 s, then up to 30 s for the server to close them all: only the write
            // time-out can, the idle time-out (60 s) does not count while an answer is being written.
            let output = try await ChildProcess.run(
                "python3",
                [
                    Self.script.path, "hold", "\(port)", "/api/v1/openapi.json", "50", "\(40 * 60)", "6", "30",
                ],
                timeout: .seconds(180)
            )
            let result = output.lastLineJSON
            let during = try #require(result["during"] as? [Any], "\(output.stdout) \(output.stderr)")
            let after = try #require(result["after"] as? [Any])
            #expect(!during.isEmpty && during.allSatisfy { $0 is Double }, "a /healthz took more than 3 s while they held on: \(during)")
            #expect(!after.isEmpty && after.allSatisfy { $0 is Double }, "a /healthz took more than 3 s after they left: \(after)")
            #expect(result["closedByServer"] as? Int == 50, "the write time-out closes every connection whose answers are not read: \(output.stdout)")
        }
        try await group.shutdownGracefully()
    }

    @Test("a graceful stop does not wait for a download nobody reads")
    func stopDoesNotWaitForAStalledPeer() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1, configure: { $0.stoppingWriteTimeout = .seconds(1) })
        let released = try await Self.released(env, videoSize: 12 << 20)
        let port = NIOLockedValueBox<Int?>(nil)
        let application = Application(
            router: buildRouter(env.app.dependencies),
            server: .trail(env.app.dependencies.config),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in port.withLockedValue { $0 = channel.localAddress?.port } }
        )
        let services = ServiceGroup(configuration: .init(services: [application], logger: Logger(label: "stop-test")))
        let running = Task { try await services.run() }
        var serverPort: Int?
        for _ in 0..<600 where serverPort == nil {
            serverPort = port.withLockedValue { $0 }
            if serverPort == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        let listening = try #require(serverPort, "the server did not start")
        let counted = { env.app.metric(#"trail_download_bytes_total{route="package"}"#) }
        let before = counted()
        // Reads nothing until the server has stopped (at most 60 s; the file limit is 300 s), then reads to the end.
        let scratch = TestScratch.folder("stop-go")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let go = scratch.appendingPathComponent("go")
        async let stalled = ChildProcess.run(
            "python3",
            [
                Self.script.path, "stall", "\(listening)", "/api/v1/packages/\(released.packageId)/download", "60", go.path,
            ],
            timeout: .seconds(180)
        )
        for _ in 0..<1200 where counted() == before { try await Task.sleep(for: .milliseconds(50)) }
        #expect(counted() > before, "the download started")
        await services.triggerGracefulShutdown()
        try await running.value
        // Had the stop waited for the download, it would have ended only when the client gave up stalling (60 s) and
        // read all of it.
        _ = FileManager.default.createFile(atPath: go.path, contents: Data())
        let result = try await stalled.lastLineJSON
        #expect(result["status"] as? Int == 200)
        #expect(result["cut"] as? Bool == true, "the stop waited for a peer that read nothing")
    }
}
