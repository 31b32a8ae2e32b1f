import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing
@testable import TrailServer

/// The fast paths on the real server (``TrailHTTP1Channel``): the mobile read routes answered again from
/// ``StoredAnswers`` without the router, and file bodies sent with `sendfile` by ``ZeroCopyFileHandler``. Each must
/// answer exactly what the router answers.
@Suite struct ServerFastPathTests {
    static let script = projectRoot.appendingPathComponent("Tests/TrailServerTests/Scripts/slow_client.py")

    static func get(_ client: some TestClientProtocol, _ uri: String, _ headers: HTTPFields = [:],
                    method: HTTPRequest.Method = .get) async throws -> TestResponse {
        try await client.execute(uri: uri, method: method, headers: headers)
    }

    /// Every header but `Date`, by name, in order.
    static func headers(_ response: TestResponse) -> [String] {
        response.headers.filter { $0.name != .date }.map { "\($0.name.canonicalName): \($0.value)" }
    }

    @Test("the read routes' second answers come from the store: the same status, headers and bytes as the router's, 304 alike; cookies, credentials, HEAD and encoded paths go to the router")
    func storedAnswersAreTheRoutersAnswers() async throws {
        let env = try await PublishEnv.make(requiredApprovals: 1)
        defer { env.remove() }
        try await env.app.test(.live) { client in
            let released = try await env.releaseThroughAPI(client)
            let stored = { env.app.metric("trail_stored_answers_total") }
            for uri in ["/api/v1/sites", "/api/v1/sites/alpha/packages", "/api/v1/packages/\(released.packageId)", "/api/v1/signing-key",
                        "/api/v1/catalog"] {
                let before = stored()
                let firstSent = ContinuousClock.now
                let byRouter = try await Self.get(client, uri)
                #expect(byRouter.status == .ok, "\(uri)")
                #expect(stored() == before, "\(uri): the first answer is the router's")
                // The catalog is sent again for a second at most. Its kept answer is certainly younger than a second
                // while less than 0.9 s has passed since the first request was sent; later, on a slow machine, either
                // the store or the router may answer, and that step is not judged (the age limit itself is
                // `routeMatchingAndAge`'s).
                var expected = before
                func expectStoreUse(_ step: String) {
                    if uri.hasSuffix("/catalog"), ContinuousClock.now - firstSent >= .milliseconds(900) {
                        expected = stored()
                        return
                    }
                    expected += 1
                    #expect(stored() == expected, "\(uri) \(step): from the store")
                }
                let fromStore = try await Self.get(client, uri)
                expectStoreUse("second answer")
                #expect(fromStore.status == .ok && fromStore.body == byRouter.body, "\(uri)")
                #expect(Self.headers(fromStore) == Self.headers(byRouter), "\(uri)")
                #expect(fromStore.headers[.date] != nil)

                // 304 from the store, and the router's own 304 (a cookie sends the request to the router) alike.
                let etag = try #require(byRouter.headers[.eTag])
                let notModified = try await Self.get(client, uri, [.ifNoneMatch: etag])
                #expect(notModified.status == .notModified && notModified.body.readableBytes == 0, "\(uri)")
                expectStoreUse("304")
                let routersNotModified = try await Self.get(client, uri, [.ifNoneMatch: etag, .cookie: "tc_flash=x"])
                #expect(routersNotModified.status == .notModified)
                #expect(stored() == expected, "\(uri): a request with a cookie goes to the router")
                #expect(Self.headers(notModified) == Self.headers(routersNotModified), "\(uri)")
                // A stale ETag gets the whole answer.
                #expect(try await Self.get(client, uri, [.ifNoneMatch: "\"other\""]).body == byRouter.body)
            }

            // The answers do not depend on the query: a query string gets the kept answer.
            let withQuery = stored()
            #expect(try await Self.get(client, "/api/v1/sites/alpha/packages?after=1").text.contains(released.packageId))
            #expect(stored() == withQuery + 1)

            // To the router, never the store: credentials, HEAD, a percent-encoded or doubled path segment, unknown ids.
            let before = stored()
            let manager = try env.token("manager@test.org")
            #expect(try await Self.get(client, "/api/v1/sites/alpha/packages", [.authorization: "Bearer \(manager)"]).status == .ok)
            #expect(try await Self.get(client, "/api/v1/sites/alpha/packages", method: .head).status != .internalServerError)
            #expect(try await Self.get(client, "/api/v1/sites/alph%61/packages").status != .internalServerError)
            #expect(try await Self.get(client, "/api/v1/sites//packages").status == .notFound)
            #expect(try await Self.get(client, "/api/v1/packages/no-such-package").status == .notFound)
            #expect(try await Self.get(client, "/api/v1/packages/no-such-package").status == .notFound, "a 404 is never kept")
            #expect(stored() == before)
        }
    }

    @Test("route matching: plain parameters only; the catalog is sent again for a second at most, the other answers until the data changes")
    func routeMatchingAndAge() async throws {
        #expect(ReadRoute.matching(path: "/api/v1/sites") == .sites)
        #expect(ReadRoute.matching(path: "/api/v1/sites/alpha-2/packages") == .sitePackages)
        #expect(ReadRoute.matching(path: "/api/v1/packages/0b6f1a52-1c1d-4a7e-9a3c-8d2f6b1e0c11") == .package)
        #expect(ReadRoute.matching(path: "/api/v1/signing-key") == .signingKey)
        #expect(ReadRoute.matching(path: "/api/v1/catalog") == .catalog)
        for path in ["/api/v1/sites/", "/api/v1/sites/al%70ha/packages", "/api/v1/sites//packages", "/api/v1/sites/../packages",
                     "/api/v1/packages/a/download", "/api/v2/sites", "/api/v1", "/", "", "/API/v1/sites", "/api/v1/packages/a b"] {
            #expect(ReadRoute.matching(path: Substring(path)) == nil, "\(path)")
        }

        let cache = ReadAPICache()
        let store = StoredAnswers(readCache: cache, distribution: nil, metrics: AppMetrics())
        let now = NIODeadline.now()
        for (path, route) in [("/api/v1/catalog", ReadRoute.catalog), ("/api/v1/sites", .sites)] {
            store.keep(.init(stamp: store.stamp, storedAt: now, route: route, headers: HTTPHeaders([("etag", "\"e\"")]), body: ByteBuffer(string: "{}"),
                             etag: "\"e\""), path: path)
        }
        #expect(store.answer(path: "/api/v1/catalog", now: now + .milliseconds(500)) != nil)
        #expect(store.answer(path: "/api/v1/catalog", now: now + .milliseconds(1500)) == nil)
        #expect(store.answer(path: "/api/v1/sites", now: now + .hours(24)) != nil)
        cache.invalidate()
        #expect(store.answer(path: "/api/v1/sites", now: now) == nil, "a change of the data retires every kept answer")
    }

    @Test("a full close asked for during a handler's own writes waits for the last of them, with every promise; half-closes go on")
    func heldCloseWaitsForTheLastWrite() throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        var close = HeldClose()
        var held = close.hold(mode: .all, promise: nil, channelIsActive: true)
        #expect(!held, "nothing in flight: the close goes on")
        close.started()
        close.started()
        held = close.hold(mode: .all, promise: nil, channelIsActive: false)
        #expect(!held, "a closed channel: nothing to wait for")
        let first = loop.makePromise(of: Void.self), second = loop.makePromise(of: Void.self)
        let heldOutput = close.hold(mode: .output, promise: nil, channelIsActive: true)
        let heldFirst = close.hold(mode: .all, promise: first, channelIsActive: true)
        let heldSecond = close.hold(mode: .all, promise: second, channelIsActive: true)
        let heldInput = close.hold(mode: .input, promise: nil, channelIsActive: true)
        #expect(!heldOutput && !heldInput, "NIO shuts the output after queued writes itself; a held half-close could be lost")
        #expect(heldFirst && heldSecond)
        let early = close.completed()
        #expect(early == nil, "one write still in flight")
        let last = close.completed()
        let due = try #require(last)
        #expect(due.mode == .all && due.promises.count == 2)
        for promise in due.promises { promise.succeed() }
        held = close.hold(mode: .all, promise: nil, channelIsActive: true)
        #expect(!held, "held once, then done")
    }

    @Test("the internal file header: only paths it carries unchanged, only ranges that fit; a new tile origin retires kept answers")
    func fileHeaderAndStampInputs() throws {
        typealias FileRange = ZeroCopyFileHandler.FileRange
        #expect(FileRange.canCarry("/data/packages/a b/1.zip"))
        for path in ["relative/1.zip", "/data/1.zip ", "/data/a\tb.zip", "/data/a\u{01}b.zip", "/data/a\nb.zip", "/data/\u{7F}.zip"] {
            #expect(!FileRange.canCarry(path), "\(path.debugDescription)")
        }
        let range = FileRange(first: 10, last: 99, counter: .package, path: "/data/a b.zip")
        #expect(FileRange(headerValue: range.headerValue) == range, "the path keeps its space")
        for value in ["", "10 99 package", "-1 99 - /a", "99 10 - /a", "10 99 - a", "x 99 - /a", "0 \(Int64.max) - /a"] {
            #expect(FileRange(headerValue: value) == nil, "\(value)")
        }
        #expect(FileRange(headerValue: "0 0 - /a")?.counter == nil)

        let origin = NIOLockedValueBox<String?>("https://tiles.example")
        let store = StoredAnswers(readCache: ReadAPICache(), distribution: nil, tileOrigin: { origin.withLockedValue { $0 } },
                                  metrics: AppMetrics())
        store.keep(.init(stamp: store.stamp, storedAt: .now(), route: .sites, headers: HTTPHeaders([("etag", "\"e\"")]),
                         body: ByteBuffer(string: "[]"), etag: "\"e\""), path: "/api/v1/sites")
        #expect(store.answer(path: "/api/v1/sites") != nil)
        origin.withLockedValue { $0 = "https://other.example" }
        #expect(store.answer(path: "/api/v1/sites") == nil, "the CSP names the tile origin: a new one needs a new answer")
    }

    @Test("pipelined requests on one connection are answered in order, whichever of them the store could answer")
    func pipelinedRequestsKeepTheirOrder() async throws {
        let env = try await PublishEnv.make(requiredApprovals: 1)
        defer { env.remove() }
        try await env.app.test(.live) { client in
            let released = try await env.releaseThroughAPI(client)
            let port = try #require(client.port)
            let list = "/api/v1/sites/alpha/packages", detail = "/api/v1/packages/\(released.packageId)"
            _ = try await Self.get(client, list)
            _ = try await Self.get(client, detail)  // both kept now
            // The first comes from the store (nothing is with the router yet on a new connection); the others, queued
            // behind /healthz, go to the router or the store depending on how the bytes arrive; the order holds.
            let before = env.app.metric("trail_stored_answers_total")
            let paths = [list, "/healthz", "/api/v1/sites/bravo/packages", detail, "/healthz", list]
            let output = try await PublishingProcess.run("python3", [Self.script.path, "pipeline", "\(port)"] + paths, timeout: .seconds(60))
            #expect(env.app.metric("trail_stored_answers_total") >= before + 1)
            let answers = try #require(try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [[String: Any]],
                                       "\(output.stdout) \(output.stderr)")
            #expect(answers.map { $0["status"] as? Int } == [200, 200, 200, 200, 200, 200])
            let bodies = answers.map { $0["body"] as? String ?? "" }
            #expect(bodies[1] == "ok" && bodies[4] == "ok")
            #expect(bodies[0].contains(released.packageId) && bodies[5] == bodies[0])
            #expect(bodies[2] == "[]", "bravo has no packages")
            #expect(bodies[3].contains("\"manifest\""))
        }
    }

    @Test("a client that sends requests without reading the answers is not answered from the store without end; the answers it reads are in order")
    func storedAnswersRespectBackPressure() async throws {
        let env = try await PublishEnv.make(requiredApprovals: 1)
        defer { env.remove() }
        // On an event loop of its own: thousands of requests in a burst must not slow the other suites' servers.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let application = Application(router: buildRouter(env.app.dependencies), server: .trailHTTP1(env.app.dependencies),
                                      eventLoopGroupProvider: .shared(group))
        try await application.testLive { client in
            let port = try #require(client.port)
            let first = try await Self.get(client, "/api/v1/sites")  // kept now
            // An answer's size on the wire (body and about a kilobyte of headers), and enough requests that their
            // answers are far more than the socket buffers (4 MiB at most here) can hold. With back-pressure, about
            // what those buffers hold stays queued; without it, the queue keeps growing: the limit below lies between.
            let answerBytes = first.body.readableBytes + first.headers.reduce(0) { $0 + $1.name.rawName.utf8.count + $1.value.utf8.count + 4 } + 20
            let count = (24 << 20) / answerBytes
            let before = env.app.metric("trail_stored_answers_total")
            async let flood = PublishingProcess.run("python3", [Self.script.path, "flood", "\(port)", "/api/v1/sites", "\(count)", "3", "200"],
                                                    timeout: .seconds(120))
            try await Task.sleep(for: .milliseconds(2500))
            let queued = (env.app.metric("trail_stored_answers_total") - before) * Double(answerBytes)
            let result = try await flood
            #expect(queued < Double(8 << 20), "\(Int(queued) >> 20) MiB of answers queued for a client that reads nothing (\(count) sent)")
            #expect(result.lastLineJSON["answers"] as? Int == 200, "\(result.stdout) \(result.stderr)")
            #expect(result.lastLineJSON["allOK"] as? Bool == true)
        }
        try await group.shutdownGracefully()
    }

    @Test("downloads with sendfile: whole, ranges, If-Range and 416 as before; the byte counter; no internal header leaves; a client cannot name a file")
    func zeroCopyDownloads() async throws {
        let env = try await PublishEnv.make(requiredApprovals: 1)
        defer { env.remove() }
        try await env.app.test(.live) { client in
            let released = try await env.releaseThroughAPI(client, videoSize: 3 << 20)
            let bytes = try Data(contentsOf: released.zip)
            let url = "/api/v1/packages/\(released.packageId)/download"
            let counted = { env.app.metric(#"trail_download_bytes_total{route="package"}"#) }
            let sentWithSendfile = { env.app.metric("trail_zero_copy_responses_total") }
            let before = counted(), zeroCopyBefore = sentWithSendfile()

            let whole = try await Self.get(client, url)
            #expect(whole.status == .ok && Data(buffer: whole.body) == bytes)
            #expect(whole.headers[.contentLength] == "\(bytes.count)")
            #expect(whole.headers[.zeroCopyFile] == nil && whole.headers[.zeroCopyAvailable] == nil)
            // Counted when the kernel took the last byte, which may be a moment after the client has it.
            for _ in 0..<200 where counted() < before + Double(bytes.count) { try await Task.sleep(for: .milliseconds(10)) }
            #expect(counted() == before + Double(bytes.count))
            #expect(sentWithSendfile() == zeroCopyBefore + 1, "the body went out with sendfile, not through a buffer")

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

            // Internal headers sent by a client mean nothing.
            let forged = try await Self.get(client, "/healthz", [.zeroCopyFile: "0 10 - /etc/passwd", .zeroCopyAvailable: "1"])
            #expect(forged.status == .ok && forged.text == "ok")
            let forgedDownload = try await Self.get(client, url, [.zeroCopyFile: "0 10 - /etc/passwd"])
            #expect(Data(buffer: forgedDownload.body) == bytes)

            // The connection goes on after a zero-copy answer: a JSON answer on the same client.
            #expect(try await Self.get(client, "/api/v1/sites").status == .ok)
        }
    }

    @Test("the idle time-out, kept by StoredAnswerHandler: a connection polling stored answers stays open past it; a silent one is closed")
    func idleTimeoutSeesStoredAnswers() async throws {
        let env = try await PublishEnv.make(requiredApprovals: 1, configure: { $0.idleConnectionTimeout = .seconds(2) })
        defer { env.remove() }
        try await env.app.test(.live) { client in
            let port = try #require(client.port)
            // 10 polls, one every 0.5 s: 5 s on one connection, each answered from the store after the first.
            let before = env.app.metric("trail_stored_answers_total")
            let poll = try await PublishingProcess.run("python3", [Self.script.path, "poll", "\(port)", "/api/v1/sites", "10", "0.5"],
                                                       timeout: .seconds(60))
            let statuses = try #require(poll.lastLineJSON["statuses"] as? [Int], "\(poll.stdout) \(poll.stderr)")
            let gaps = try #require(poll.lastLineJSON["gaps"] as? [Double])
            // Every poll sent within 1.8 s of the previous answer is answered (a machine too busy to keep that pace
            // may see the connection closed as idle, rightly, and the polls after that are not judged), and the
            // polls judged span more than the time-out, which a time-out blind to stored answers would have cut.
            let judged = gaps.prefix { $0 < 1.8 }.count
            #expect(statuses.prefix(judged).allSatisfy { $0 == 200 }, "\(poll.stdout)")
            #expect(gaps.prefix(judged).reduce(0, +) > 2.5, "the polls judged span more than the time-out: \(poll.stdout)")
            #expect(env.app.metric("trail_stored_answers_total") >= before + 3, "the polls came from the store")
            let idle = try await PublishingProcess.run("python3", [Self.script.path, "idle", "\(port)"], timeout: .seconds(60))
            let closedAfter = try #require(idle.lastLineJSON["closedAfter"] as? Double, "never closed: \(idle.stdout) \(idle.stderr)")
            #expect(closedAfter >= 1.9 && closedAfter < 30, "closed after \(closedAfter) s")
        }
    }

    @Test("a slow reader's sendfile download outlasts the idle time-out and completes")
    func slowZeroCopyDownloadIsNotCutByTheIdleTimeout() async throws {
        let env = try await PublishEnv.make(requiredApprovals: 1, configure: { $0.idleConnectionTimeout = .seconds(2) })
        defer { env.remove() }
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
            let output = try await PublishingProcess.run("python3", [
                Self.script.path, "download", "\(port)", "/api/v1/packages/\(released.packageId)/download", "\(256 << 10)", "0.1"],
                timeout: .seconds(120))
            let result = output.lastLineJSON
            #expect(result["status"] as? Int == 200, "\(output.stdout) \(output.stderr)")
            #expect(result["bytes"] as? Int == Int(released.size))
            #expect(result["sha256"] as? String == released.sha256)
            #expect((result["seconds"] as? Double ?? 0) > 4, "it really outlasted the time-out twice")
        }
    }
}
