import Foundation
import Logging
import NIOConcurrencyHelpers
import PackageFormat
import ServiceLifecycle

/// Makes the phone-sized copies (table `optimizedCopy`) in the background: probe the clean original, refuse what is
/// over a limit, convert it in a bounded child process into `media-work/`, check the result, and move it to
/// `assets/<sha256>`. Jobs survive restarts; a conversion cut off by a crash or a stop is started again, and its
/// half-written file, never under `assets/`, is removed at the next start.
package final class MediaOptimizer: Service, Sendable {
    let database: AppDatabase
    let paths: DataPaths
    let settings: MediaOptimizationSettings
    let logger: Logger
    private let running = NIOLockedValueBox(false)
    private let worker: JobWorker
    /// Told when a copy is finished (the package builds waiting for it).
    let finished: @Sendable () -> Void

    package init(
        database: AppDatabase,
        paths: DataPaths,
        settings: MediaOptimizationSettings,
        logger: Logger = Logger(label: "trail.media"),
        finished: @escaping @Sendable () -> Void = {}
    ) {
        self.database = database
        self.paths = paths
        self.settings = settings
        self.logger = logger
        self.finished = finished
        worker = JobWorker(queue: "optimization", logger: logger)
    }

    var settingsID: String { MediaTargets.settingsID }

    /// Where conversions write; emptied at every start.
    var workFolder: URL { paths.root.appendingPathComponent("media-work") }

    func wake() { worker.wake() }

    package func run() async throws {
        running.withLockedValue { $0 = true }
        defer { running.withLockedValue { $0 = false } }
        // On SIGTERM the running conversion is killed (its task is cancelled) and stays pending for the next start.
        await worker.run(onStop: .cancel) { _ = await self.drain() }
    }

    /// Removes what a conversion cut off by a crash left, and queues again the copies of older settings.
    func recover() async throws {
        try? FileManager.default.removeItem(at: workFolder)
        let requeued = try await database.requeueOutdatedOptimizations(settings: settingsID)
        if requeued > 0 { logger.notice("media: \(requeued) optimized copies are made again with the current settings") }
    }

    /// Works every pending job, `settings.concurrency` at a time; returns how many finished. Tests and the CLI call it.
    @discardableResult
    func drain() async -> Int {
        await worker.drain(
            batch: { try await database.pendingOptimizations(limit: settings.concurrency) },
            concurrency: settings.concurrency,
            work: {
                await self.process($0.0, $0.1)
                return true
            }
        )
    }

    /// Waits until none of `assetIds` has a pending copy: works them here when no service runs (tests, the CLI).
    func waitForCopies(of assetIds: [Int64]) async throws {
        while true {
            let copies = try await database.optimizedCopies(assetIds: assetIds)
            guard copies.values.contains(where: { $0.state == .pending }) else { return }
            if running.withLockedValue({ $0 }) {
                try await Task.sleep(for: .milliseconds(500))
            } else {
                _ = await drain()
                try Task.checkCancellation()
            }
        }
    }

    func process(_ copy: OptimizedCopy, _ asset: Asset) async {
        let work = workFolder.appendingPathComponent(UUID().uuidString.lowercased())
        defer { try? FileManager.default.removeItem(at: work) }
        let result: OptimizeResult
        do {
            result = try await convert(asset, in: work)
        } catch is CancellationError {
            return  // stopping: the job stays pending
        } catch let refusal as MediaRefusal {
            result = OptimizeResult(state: .failed, message: refusal.description)
        } catch {
            logger.error("optimizing asset \(asset.id) failed: \(error)")
            result = OptimizeResult(
                state: .failed,
                message: "Optimizing failed on the server (\(type(of: error))); an admin finds the details in the log."
            )
        }
        guard !Task.isCancelled else { return }
        do {
            let outcome = try await database.finishOptimization(assetId: asset.id, sourceSha256: copy.sourceSha256, settings: settingsID, result)
            if let released = outcome.released { try? FileManager.default.removeItem(at: paths.absolute(released)) }
            if !outcome.accepted, let made = result.storedPath {
                let unused = try await !database.isMediaPathReferenced(made)
                if unused { try? FileManager.default.removeItem(at: paths.absolute(made)) }
            }
            logger.info("optimized asset \(asset.id): \(result.state.rawValue) \(result.message)")
        } catch {
            logger.error("cannot record the copy of asset \(asset.id): \(error)")
        }
        finished()
    }

    /// Probe, check, convert, check again, and place the copy. Throws ``MediaRefusal`` for what the ranger must fix.
    func convert(_ asset: Asset, in work: URL) async throws -> OptimizeResult {
        let source = paths.absolute(asset.storedPath)
        let input = try ConverterInput(path: source.path, kind: asset.kind, mimeType: asset.mimeType, dataFolder: paths.root)
        let probe = try await self.probe(input, kind: asset.kind)
        try settings.check(probe, kind: asset.kind)
        if asset.kind == .image, probe.pages > 1 {
            return OptimizeResult(
                state: .skipped,
                width: probe.width,
                height: probe.height,
                message: "Animated images are kept as they are."
            )
        }
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let output = work.appendingPathComponent("copy." + ConversionPlan.fileExtension(kind: asset.kind, probe: probe))
        let plan = ConversionPlan.make(kind: asset.kind, probe: probe, input: input, output: output.path, settings: settings)
        let duration = probe.durationSeconds
        let assetId = asset.id
        // Server-made paths and fixed settings only, so the line is safe to log; scripts/bench/bench-media.sh runs it again by hand.
        logger.info("asset \(assetId): converting with \(plan.executable) \(plan.arguments.joined(separator: " "))")
        // The converter's output reader calls this on its own thread; the write is awaited in a task of its own (at most
        // one a second: the figure is advisory, the result is recorded when the conversion ends).
        let progress = ProgressThrottle { [database] fraction in
            Task { try? await database.recordOptimizeProgress(assetId: assetId, progress: fraction) }
        }
        let onLine = plan.reportsProgress ? Self.progressReader(duration: duration, progress: progress) : nil
        let outcome = try await ConverterProcess.run(
            plan.executable,
            plan.arguments,
            environment: plan.environment,
            memoryLimit: settings.memoryLimit,
            timeLimit: settings.timeLimit(durationSeconds: duration),
            keepStdout: false,
            onLine: onLine
        )
        try Task.checkCancellation()
        if outcome.timedOut { throw MediaRefusal.timedOut(seconds: Int(settings.timeLimit(durationSeconds: duration).components.seconds)) }
        guard outcome.succeeded, FileManager.default.fileExists(atPath: output.path) else {
            // The whole of stderr stays in the server's log; the ranger gets one line that names no path.
            logger.notice("asset \(assetId): \(plan.executable) failed (status \(outcome.status)): \(outcome.stderr)")
            throw MediaRefusal.doesNotDecode(Self.reason(outcome.stderr, hiding: [source.path, output.path]))
        }
        // The copy is read back as a player would, and must play as long as the original.
        let made = try await self.probe(
            ConverterInput(path: output.path, kind: asset.kind, mimeType: plan.mimeType, dataFolder: paths.root),
            kind: asset.kind
        )
        if asset.kind != .image, let before = duration, let after = made.durationSeconds, abs(after - before) > MediaTargets.durationTolerance {
            throw MediaRefusal.durationChanged(from: before, to: after)
        }
        let (sha256, size) = try await BlockingWork.files { try PackageHashing.sha256(ofFileAt: output) }
        let encoder = await version(of: asset.kind == .image ? settings.vips : settings.ffmpeg)
        let shown = made.displaySize ?? probe.displaySize
        let measured = asset.kind == .image ? nil : (made.durationSeconds ?? duration)
        // Kept as it is: a file already within the targets whose copy is not smaller (a copy of a photo with a GPS
        // position always ships: the position must not).
        if size >= asset.size, Self.withinTargets(asset: asset, probe: probe) {
            return OptimizeResult(
                state: .skipped,
                width: probe.displaySize?.width,
                height: probe.displaySize?.height,
                durationSeconds: duration,
                encoder: encoder,
                message: "Already phone-sized: the copy would not be smaller."
            )
        }
        let stored = "assets/\(sha256)"
        try ScanService.place(output, at: paths.absolute(stored))
        return OptimizeResult(
            state: .ready,
            storedPath: stored,
            size: size,
            sha256: sha256,
            mimeType: plan.mimeType,
            width: shown?.width,
            height: shown?.height,
            durationSeconds: measured,
            encoder: encoder
        )
    }

    /// Reads the `out_time_us=…` lines of ffmpeg's `-progress`: how far into the file the conversion is.
    static func progressReader(duration: Double?, progress: ProgressThrottle) -> @Sendable (Substring) -> Void {
        { line in
            guard let duration, duration > 0, line.hasPrefix("out_time_us="), let micros = Double(String(line.dropFirst(12))) else { return }
            progress.record(micros / 1e6 / duration)
        }
    }

    /// Whether the original already is what a copy would be: the right codecs and container, small enough, and (images)
    /// without metadata.
    static func withinTargets(asset: Asset, probe: MediaProbe) -> Bool {
        let longSide = probe.displaySize.map { max($0.width, $0.height) } ?? Int.max
        switch asset.kind {
        case .video:
            return asset.mimeType == "video/mp4" && probe.videoCodec == "h264" && probe.pixelFormat == "yuv420p"
                && [nil, "aac"].contains(probe.audioCodec)
                && longSide <= MediaTargets.videoLongSide
                && (probe.bitRate ?? Int.max) <= MediaTargets.videoBitrate + MediaTargets.audioBitrateStereo * 2
        case .audio:
            return asset.mimeType == "audio/mp4" && probe.audioCodec == "aac" && (probe.bitRate ?? Int.max) <= MediaTargets.audioBitrateStereo + 8_000
        case .image:
            return ["image/jpeg", "image/png"].contains(asset.mimeType) && !probe.hasMetadata && longSide <= MediaTargets.imageLongSide
        case .text:
            return true
        }
    }

    /// What the file's headers say. A probe that fails tells the ranger only that the file could not be read; what
    /// the tool said (which may name paths) goes to the server's log.
    func probe(_ input: ConverterInput, kind: AssetKind) async throws -> MediaProbe {
        let limit = Duration.seconds(60)
        if kind == .image {
            let outcome = try await ConverterProcess.run(
                settings.vipsheader,
                ["-a", input.path],
                memoryLimit: settings.memoryLimit,
                timeLimit: limit
            )
            guard outcome.succeeded else {
                logger.notice("vipsheader failed on \(input.path) (status \(outcome.status)): \(outcome.stderr)")
                throw MediaRefusal.unreadable
            }
            return try MediaProbe.parseVipsHeader(String(decoding: outcome.stdout, as: UTF8.self))
        }
        let outcome = try await ConverterProcess.run(
            settings.ffprobe,
            ["-v", "error", "-print_format", "json", "-show_format", "-show_streams"] + input.ffprobeArguments,
            memoryLimit: settings.memoryLimit,
            timeLimit: limit
        )
        guard outcome.succeeded else {
            logger.notice("ffprobe failed on \(input.url) (status \(outcome.status)): \(outcome.stderr)")
            throw MediaRefusal.unreadable
        }
        return try MediaProbe.parseFFprobe(outcome.stdout)
    }

    /// The converter's version line (`ffmpeg version 5.1.6-0+deb12u1`, `vips-8.14.1`), recorded with each copy.
    func version(of tool: String) async -> String {
        let arguments = tool.hasSuffix("vips") ? ["--version"] : ["-version"]
        guard let outcome = try? await ConverterProcess.run(tool, arguments, memoryLimit: nil, timeLimit: .seconds(20)), outcome.succeeded else {
            return tool
        }
        let line = String(decoding: outcome.stdout, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? tool
        return line.components(separatedBy: " Copyright").first ?? line
    }

    /// The converter's last error line for the ranger: the server's own paths said as "the file", and a line that still
    /// names a path or address (a file some list pointed to) replaced by a plain statement.
    static func reason(_ stderr: String, hiding paths: [String]) -> String {
        var text = stderr
        for path in paths {
            text = text.replacingOccurrences(of: "file:" + path, with: "the file").replacingOccurrences(of: path, with: "the file")
        }
        let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard var last = lines.last else { return "the converter stopped without saying why" }
        // "[h264 @ 0x55d…] Error splitting the input into NAL units." → "Error splitting the input into NAL units"
        if last.hasPrefix("["), let close = last.firstIndex(of: "]") { last = last[last.index(after: close)...].trimmingCharacters(in: .whitespaces) }
        while last.hasSuffix(".") { last.removeLast() }
        if last.contains("/") || last.contains("\\") {
            return "the converter could not read it"
        }
        return String(last.prefix(200))
    }
}

/// Progress at most once a second, so a long conversion does not write to the database for every frame.
final class ProgressThrottle: Sendable {
    private let last = NIOLockedValueBox<Double>(0)
    private let write: @Sendable (Double) -> Void

    init(write: @escaping @Sendable (Double) -> Void) { self.write = write }

    func record(_ fraction: Double) {
        let now = Date().timeIntervalSince1970
        let due = last.withLockedValue { previous in
            guard now - previous >= 1 else { return false }
            previous = now
            return true
        }
        if due { write(fraction) }
    }
}

/// `trail-companion media optimize`: copies for files uploaded before copies existed (or made with older settings).
package struct ExistingMediaReport: Sendable {
    package struct Line: Sendable {
        package var assetId: Int64
        var name: String
        package var kind: AssetKind
        package var originalSize: Int64
        /// The copy's size once made; with `--dry-run`, an estimate from the play time (audio and video), else nil.
        package var shippedSize: Int64?
        package var state: OptimizeState?
        package var message: String
    }

    package var lines: [Line] = []
    var dryRun: Bool

    /// Bytes a package no longer carries (made copies), or would not (estimates of a dry run).
    package var savedBytes: Int64 { lines.reduce(0) { $0 + max(0, $1.originalSize - ($1.shippedSize ?? $1.originalSize)) } }
}

extension MediaOptimizer {
    /// Queues and makes the missing copies of one site's files (or every site's), here and now; with `dryRun`, lists
    /// them with estimates and changes nothing.
    package func optimizeExisting(siteId: Int64?, dryRun: Bool) async throws -> ExistingMediaReport {
        let assets = try await database.queueMissingOptimizations(siteId: siteId, settings: settingsID, dryRun: dryRun)
        var report = ExistingMediaReport(dryRun: dryRun)
        if dryRun {
            report.lines = assets.map { asset in
                // Audio and video: the target bit rates times the play time; images: only a conversion tells.
                let rate = asset.kind == .video ? MediaTargets.videoBitrate + MediaTargets.audioBitrateStereo : MediaTargets.audioBitrateStereo
                let estimate = asset.kind == .image ? nil : asset.durationSeconds.map { min(asset.size, Int64($0 * Double(rate) / 8)) }
                return .init(
                    assetId: asset.id,
                    name: asset.originalName,
                    kind: asset.kind,
                    originalSize: asset.size,
                    shippedSize: estimate,
                    state: nil,
                    message: estimate == nil ? "size known once converted" : "estimate"
                )
            }
            return report
        }
        wake()
        try await waitForCopies(of: assets.map { $0.id })
        let copies = try await database.optimizedCopies(assetIds: assets.map { $0.id })
        report.lines = assets.map { asset in
            let copy = copies[asset.id]
            return .init(
                assetId: asset.id,
                name: asset.originalName,
                kind: asset.kind,
                originalSize: asset.size,
                shippedSize: copy?.state == .ready ? copy?.size : asset.size,
                state: copy?.state,
                message: copy?.message ?? ""
            )
        }
        return report
    }
}
