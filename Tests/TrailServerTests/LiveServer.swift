import Hummingbird
import HummingbirdCore
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle

// HummingbirdTesting's live server wrapper and its response type have no public initialisers; debug builds compile
// the package with testing enabled, which is the only configuration the tests run in.
@testable import HummingbirdTesting

extension ApplicationProtocol {
    /// `test(.live)` with a read time-out of our choosing. HummingbirdTesting's live client gives up after 20 s without
    /// a byte, a figure it does not let a test change. The Swift suites run in parallel on two cores beside tests that
    /// write gigabytes and start ffmpeg, SeaweedFS and Python servers; a request that waits its turn behind them for
    /// 20 s is slow, not broken, and the failure it caused named a time-out instead of anything the test checks. A
    /// stuck test is still caught: by this time-out, and by the watchdog around the whole run.
    func testLive<Value>(
        readTimeout: Duration = .seconds(120),
        _ test: @Sendable (any TestClientProtocol) async throws -> Value
    ) async throws -> Value {
        let application = TestApplication(base: self)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            let serviceGroup = ServiceGroup(
                configuration: .init(
                    services: [application],
                    gracefulShutdownSignals: [],
                    logger: application.logger
                )
            )
            group.addTask { try await serviceGroup.run() }
            let port = await application.portPromise.wait()
            let client = LiveClient(port: port, readTimeout: readTimeout)
            do {
                let value = try await test(client)
                try await client.shutdown()
                await serviceGroup.triggerGracefulShutdown()
                return value
            } catch {
                try? await client.shutdown()
                await serviceGroup.triggerGracefulShutdown()
                throw error
            }
        }
    }
}

/// The client `testLive` hands a test: one keep-alive HTTP/1.1 connection, as `test(.live)`'s, opened again when the
/// server has closed it. A test that does slow work between two requests (a Python client's whole upload, a scan) can
/// leave its connection idle past the server's idle time-out, and the server rightly closes it; a browser or
/// AsyncHTTPClient would open a new one, where HummingbirdTesting's client fails the next request with "I/O on closed
/// channel". That error comes from the write of the request, so the request was not sent and sending it again on a
/// new connection is safe.
private final class LiveClient: TestClientProtocol, Sendable {
    let livePort: Int
    let readTimeout: Duration
    private let connection: NIOLockedValueBox<TestClient>

    init(port: Int, readTimeout: Duration) {
        self.livePort = port
        self.readTimeout = readTimeout
        self.connection = NIOLockedValueBox(Self.connect(port: port, readTimeout: readTimeout))
    }

    private static func connect(port: Int, readTimeout: Duration) -> TestClient {
        let client = TestClient(host: "localhost", port: port, configuration: .init(timeout: readTimeout))
        client.connect()
        return client
    }

    func executeRequest(uri: String, method: HTTPRequest.Method, headers: HTTPFields, body: ByteBuffer?) async throws -> TestResponse {
        var headers = headers
        headers[.connection] = "keep-alive"
        let request = TestClient.Request(uri, method: method, authority: "localhost", headers: headers, body: body)
        let deadline = ContinuousClock.now + readTimeout
        while true {
            let client = connection.withLockedValue { $0 }
            do {
                let response = try await client.execute(request)
                return TestResponse(head: response.head, body: response.body ?? ByteBuffer(), trailerHeaders: response.trailerHeaders)
            } catch ChannelError.ioOnClosedChannel where ContinuousClock.now < deadline {
                // A new connection can itself sit idle past a short idle time-out before the request is written, when
                // the test's task waits for a thread behind the parallel suites: new ones until the read time-out.
                let fresh = Self.connect(port: livePort, readTimeout: readTimeout)
                connection.withLockedValue { $0 = fresh }
                try? await client.shutdown()
            }
        }
    }

    var port: Int? { livePort }

    func shutdown() async throws {
        try await connection.withLockedValue { $0 }.shutdown()
    }
}

extension TestingSetup {
    var isLive: Bool {
        if case .live = value { return true }
        return false
    }
}
