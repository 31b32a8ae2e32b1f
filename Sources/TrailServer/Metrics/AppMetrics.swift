import Foundation
import GRDB
import Hummingbird
import Prometheus

/// The server's metrics, recorded through swift-metrics, in Prometheus' text format at `GET /metrics`.
///
/// Request counts and durations are counted as they happen in this app's own registry (one per app, so tests and
/// several apps in one process never mix); the state of the work queues and the content is read from the database at
/// each scrape, so it is right after a restart and needs no bookkeeping in every write.
package final class AppMetrics: Sendable {
    package let registry: PrometheusCollectorRegistry
    static let durationBuckets: [Duration] = [
        .milliseconds(5), .milliseconds(25), .milliseconds(100), .milliseconds(500),
        .seconds(2), .seconds(10), .seconds(60),
    ]

    /// Body bytes handed to connections by the download routes: what updates cost the server, and what a CDN in
    /// front of it would take off.
    let packageBytesSent: Counter
    let fileBytesSent: Counter
    let manifestBytesSent: Counter
    /// Visitor events counted by `POST /api/v1/events`, and those dropped because their address had sent its hour's
    /// share: a flood shows here, not in the statistics.
    let visitEventsCounted: Counter
    let visitEventsDropped: Counter

    /// The download routes whose body bytes are counted.
    enum DownloadRoute: String, Sendable {
        case package, file, manifest
    }

    /// swift-prometheus names a metric by its parts (namespace, subsystem, name, unit); ours are whole names already,
    /// so the other parts stay empty and the emitted name is exactly `name`.
    static func named(_ name: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }

    package init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        func sent(_ route: String) -> Counter {
            registry.makeCounter(
                descriptor: Self.named("trail_download_bytes_total", "Response body bytes sent by the mobile download routes"),
                labels: [("route", route)]
            )
        }
        packageBytesSent = sent("package")
        fileBytesSent = sent("file")
        manifestBytesSent = sent("manifest")
        visitEventsCounted = registry.makeCounter(
            descriptor: Self.named("trail_visit_events_counted_total", "Visitor events added to the statistics")
        )
        visitEventsDropped = registry.makeCounter(
            descriptor: Self.named("trail_visit_events_dropped_total", "Visitor events dropped: their address had sent its events for the hour")
        )
    }

    func countSent(_ route: DownloadRoute, bytes: Int) {
        switch route {
        case .package: packageBytesSent.increment(by: Int64(bytes))
        case .file: fileBytesSent.increment(by: Int64(bytes))
        case .manifest: manifestBytesSent.increment(by: Int64(bytes))
        }
    }

    func recordRequest(method: String, status: Int, duration: Duration) {
        requestCounter(method: method, status: status).increment()
        requestDuration(method: method).recordNanoseconds(duration.nanoseconds)
    }

    func requestCounter(method: String, status: Int) -> Counter {
        registry.makeCounter(
            descriptor: Self.named("trail_http_requests_total", "HTTP requests answered, by method and status"),
            labels: [("method", method), ("status", String(status))]
        )
    }

    func requestDuration(method: String) -> DurationHistogram {
        registry.makeDurationHistogram(
            descriptor: Self.named("trail_http_request_duration_seconds", "Time to the response head, by method"),
            labels: [("method", method)],
            buckets: Self.durationBuckets
        )
    }

    /// Sets the gauges that describe the stored state, then renders everything.
    func scrape(_ database: AppDatabase) async throws -> String {
        let state = try await database.metricsState()
        // Every case of the enums, so a state with no rows reads 0 rather than vanishing from the scrape.
        for status in ScanStatus.allCases.map(\.rawValue) {
            registry.makeGauge(descriptor: Self.named("trail_assets", "Uploaded files by scan status"), labels: [("scan_status", status)])
                .set(Double(state.assetsByStatus[status] ?? 0))
        }
        for requestState in PublishState.allCases.map(\.rawValue) {
            registry.makeGauge(descriptor: Self.named("trail_publish_requests", "Publish requests by state"), labels: [("state", requestState)])
                .set(Double(state.requestsByState[requestState] ?? 0))
        }
        registry.makeGauge(descriptor: Self.named("trail_scan_jobs_queued", "Scans waiting or running")).set(Double(state.scanJobs))
        registry.makeGauge(descriptor: Self.named("trail_build_jobs_queued", "Package builds waiting or running")).set(Double(state.buildJobs))
        registry.makeGauge(descriptor: Self.named("trail_packages_published", "Packages the mobile API lists")).set(Double(state.publishedPackages))
        registry.makeGauge(descriptor: Self.named("trail_package_versions", "Released package versions kept")).set(Double(state.packageVersions))
        registry.makeGauge(descriptor: Self.named("trail_verified_downloads", "Downloads the apps reported as verified")).set(
            Double(state.verifiedDownloads)
        )
        registry.makeGauge(descriptor: Self.named("trail_catalog_version", "The signed catalog's version")).set(Double(state.catalogVersion))
        return registry.emitToString()
    }
}

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

struct MetricsState: Sendable {
    var assetsByStatus: [String: Int] = [:]
    var requestsByState: [String: Int] = [:]
    var scanJobs = 0, buildJobs = 0, publishedPackages = 0, packageVersions = 0, verifiedDownloads = 0, catalogVersion = 0
}

/// Counts every answer, including errors (it sits outside the error middleware).
struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: AppMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        do {
            let response = try await next(request, context)
            metrics.recordRequest(method: request.method.rawValue, status: response.status.code, duration: .now - started)
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            metrics.recordRequest(method: request.method.rawValue, status: status, duration: .now - started)
            throw error
        }
    }
}

/// `GET /metrics` for admins: a signed-in admin, or Prometheus with an admin's API token
/// (`authorization: {type: Bearer, credentials: …}` in its scrape configuration).
struct MetricsController {
    let metrics: AppMetrics
    let database: AppDatabase

    func addRoutes(to router: RouterGroup<SignedInContext>) {
        router.get("/metrics", use: scrape)
    }

    /// The Prometheus text of every metric.
    func scrape(_ request: Request, _ context: SignedInContext) async throws -> Response {
        guard context.user.isAdmin else { throw HTTPError(.forbidden, message: "Only admins can read the metrics.") }
        let text = try await metrics.scrape(database)
        return Response(
            status: .ok,
            headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: text))
        )
    }
}
