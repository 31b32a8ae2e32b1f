import Foundation
import Logging
import PackageFormat
import ServiceLifecycle

/// `--demo`'s published sample: a short tour with a tone at each stop and a picture, so that `/visit` has a tour to
/// open on the first start and a newcomer can try the player before building anything.
///
/// It is published through the same steps as a ranger's tour, not around them: the files are registered as uploads
/// (typed, scanned), the tour is submitted, built and signed by the builder, approved and released by the first
/// admin. Only the media are made here, from numbers, never from outside: a sine tone as WAV and a drawn PNG. On a
/// server whose scanner has no signatures yet the files wait like any upload, and the tour is published once the
/// signatures arrive. The draft demo tour stays a draft, to edit.
struct DemoSample: Service {
    static let tourName = "Fish Lake Remount Depot"
    static let stops: [(name: String, latitude: Double, longitude: Double, description: String, hertz: Double)] = [
        ("Remount Depot", 44.4012, -121.9948, "The depot kept the pack mules and horses of the Forest Service's trail crews.", 440),
        ("Guard Station", 44.4031, -121.9921, "Rangers watched for fires and greeted wagon travellers here.", 554.37),
        ("Lake Shore", 44.3998, -121.9902, "In summer the lake drains into lava tubes and becomes a meadow.", 659.25),
    ]

    let database: AppDatabase
    let intake: AssetIntake
    let publishing: PublishingService
    let logger: Logger
    /// How often the waiting steps look again (scans, the build).
    var interval: Duration = .milliseconds(500)

    func run() async throws {
        await cancelWhenGracefulShutdown {
            do {
                try await publish()
            } catch is CancellationError {
            } catch {
                logger.error("the demo's sample tour could not be published: \(error)")
            }
        }
        // A service that returns ends the whole server (ServiceLifecycle stops the group), so this one, its work done,
        // waits for the stop like the others.
        try? await gracefulShutdown()
    }

    /// Every step that is not done yet, in turn; returns once the sample is released, or a step needs a person.
    func publish() async throws {
        guard let site = try await database.site(slug: DemoContent.siteSlug),
            let admin = try await database.user(email: Bootstrap.firstAdminEmail)
        else { return }
        let tour = try await sampleTour(siteId: site.id)
        if try await database.package(tourId: tour.id)?.currentVersion != nil { return }
        try await addMedia(tourId: tour.id)
        guard try await waitForCleanFiles(tourId: tour.id) else { return }
        let reviewer = AuthenticatedUser(admin)
        let actor = AuditActor(userId: admin.id, ipAddress: "demo")
        var request = try await database.openRequest(tourId: tour.id)
        if request == nil {
            request = try await publishing.submit(tourId: tour.id, user: reviewer, actor: .server(.demo))
        }
        while let current = request {
            switch current.state {
            case .building:
                try await Task.sleep(for: interval)
            case .pending:
                if try await database.reviews(requestId: current.id).contains(where: { $0.review.reviewerId == admin.id }) {
                    logger.notice("the demo's sample tour waits for more approvals than the first admin's; review it in the panel")
                    return
                }
                _ = try await publishing.approve(
                    requestId: current.id,
                    reviewer: reviewer,
                    comment: "The sample tour, approved at the first start.",
                    actor: actor
                )
            case .ready:
                let version = try await publishing.release(requestId: current.id, user: reviewer, actor: actor)
                logger.info("the demo's sample tour “\(Self.tourName)” is published (version \(version.version)); open /visit")
                return
            case .published:
                return
            case .denied, .failed, .withdrawn:
                logger.warning("the demo's sample tour was not published: its request is \(current.state.rawValue)")
                return
            }
            request = try await database.publishRequest(id: current.id)
        }
    }

    /// The sample tour, made once: its frame and stops.
    func sampleTour(siteId: Int64) async throws -> Tour {
        if let existing = try await database.tours(siteId: siteId).first(where: { $0.name == Self.tourName }) { return existing }
        let tour = try await database.createTour(
            siteId: siteId,
            TourInput(
                name: Self.tourName,
                description:
                    "A ten-minute sample walk around the old remount depot at Fish Lake: a tone at each stop stands in for a ranger's voice.",
                mapName: "fish-lake-sample"
            ),
            actor: .system
        )
        _ = try await database.setFrame(
            tourId: tour.id,
            FrameInput(north: 44.4080, south: 44.3940, east: -121.9840, west: -122.0010, minZoom: 13, maxZoom: 16),
            maxAreaKm2: .infinity,
            actor: .system
        )
        for stop in Self.stops {
            _ = try await database.createWaypoint(
                tourId: tour.id,
                WaypointInput(name: stop.name, description: stop.description, latitude: stop.latitude, longitude: stop.longitude),
                actor: .system
            )
        }
        return tour
    }

    /// A tone and its transcript at each stop that has no files yet, and a described picture at the first.
    func addMedia(tourId: Int64) async throws {
        let waypoints = try await database.waypoints(tourId: tourId)
        for (index, waypoint) in waypoints.enumerated() where try await database.assets(waypointId: waypoint.id).isEmpty {
            let hertz = Self.stops.first { $0.name == waypoint.name }?.hertz ?? 440
            let tone = try await register(
                SampleMedia.tone(hertz: hertz),
                name: "stop-\(index + 1)-tone.wav",
                tourId: tourId,
                waypointId: waypoint.id
            )
            _ = try await intake.registerTranscript(
                text: "A tone of \(Int(hertz.rounded())) hertz marks the stop “\(waypoint.name)”. In a real tour, a ranger tells its story here.",
                ownerId: tone.id,
                actor: .system
            )
            if index == 0 {
                let picture = try await register(try SampleMedia.picture(), name: "fish-lake.png", tourId: tourId, waypointId: waypoint.id)
                _ = try await database.describeAsset(
                    id: picture.id,
                    title: "Fish Lake",
                    altText: "A drawing of a snow-capped peak above a blue lake, with dark fir trees on the shore.",
                    actor: .system
                )
            }
        }
    }

    func register(_ data: Data, name: String, tourId: Int64, waypointId: Int64) async throws -> Asset {
        let uploadId = UUID().uuidString.lowercased()
        let paths = intake.paths
        try await BlockingWork.short {
            try FileManager.default.createDirectory(at: paths.uploads, withIntermediateDirectories: true)
            try data.write(to: paths.upload(uploadId))
        }
        let received = AssetIntake.Received(
            uploadId: uploadId,
            size: Int64(data.count),
            sha256: PackageHashing.sha256Hex(data),
            header: Array(data.prefix(FileTypeDetector.headerLength)),
            originalName: name
        )
        return try await intake.register(received, tourId: tourId, waypointId: waypointId, replacing: nil, actor: .system)
    }

    /// Waits until every file of the tour is scanned; false when one is not clean (then a person has to look).
    func waitForCleanFiles(tourId: Int64) async throws -> Bool {
        var told = false
        while true {
            // The files and their transcripts: a submission needs every one clean.
            let files =
                try await database.assets(tourId: tourId).values.flatMap { $0 }
                + database.companions(tourId: tourId).values.flatMap { [$0.captions, $0.transcript].compactMap { $0 } }
            if files.allSatisfy({ $0.scanStatus == .clean }) { return true }
            if files.contains(where: { $0.scanStatus != .clean && $0.scanStatus != .pending }) {
                logger.warning("a file of the demo's sample tour did not scan clean; it is not published")
                return false
            }
            if !told, await !intake.scans.scanner.hasSignatures {
                logger.notice("the demo's sample tour is published once the malware scanner has its signatures")
                told = true
            }
            try await Task.sleep(for: interval)
        }
    }
}

/// The sample tour's media, made from numbers.
enum SampleMedia {
    /// A tone as 16-bit mono PCM WAV, faded in and out so that it does not click.
    static func tone(hertz: Double, seconds: Double = 4, sampleRate: Int = 22_050) -> Data {
        let count = Int(seconds * Double(sampleRate))
        let fade = Double(sampleRate) / 5
        var samples = Data(capacity: count * 2)
        for index in 0..<count {
            let envelope = min(1, Double(index) / fade, Double(count - index) / fade)
            let value = Int16(0.3 * envelope * sin(2 * .pi * hertz * Double(index) / Double(sampleRate)) * Double(Int16.max))
            withUnsafeBytes(of: value.littleEndian) { samples.append(contentsOf: $0) }
        }
        var wav = Data("RIFF".utf8)
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { wav.append(contentsOf: $0) } }
        append(UInt32(36 + samples.count))
        wav += Data("WAVEfmt ".utf8)
        append(UInt32(16))  // the format chunk's size
        append(UInt16(1))  // PCM
        append(UInt16(1))  // mono
        append(UInt32(sampleRate))
        append(UInt32(sampleRate * 2))  // bytes a second
        append(UInt16(2))  // bytes a frame
        append(UInt16(16))  // bits a sample
        wav += Data("data".utf8)
        append(UInt32(samples.count))
        return wav + samples
    }

    /// A drawing of a peak above a lake among firs, 640 × 400.
    static func picture(width: Int = 640, height: Int = 400) throws -> Data {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        let shore = height * 7 / 10
        for y in 0..<height {
            for x in 0..<width {
                let peak = abs(Double(x - width / 2)) * 0.9 + Double(height) * 0.18
                let fir = Double(shore) - Double((x * 7) % 40) * 2.2 - 20
                var color: (Double, Double, Double)
                if y >= shore {
                    let depth = Double(y - shore) / Double(height - shore)
                    color = (40 - 20 * depth, 110 - 40 * depth, 170 - 50 * depth)  // the lake
                } else if Double(y) > fir && (x / 40) % 3 != 1 {
                    color = (25, 70, 40)  // firs on the shore
                } else if Double(y) > peak {
                    color = Double(y) < peak + 30 ? (245, 245, 250) : (110, 115, 125)  // snow, then rock
                } else {
                    let sky = Double(y) / Double(shore)
                    color = (130 + 90 * sky, 180 + 55 * sky, 235)
                }
                let offset = (y * width + x) * 3
                pixels[offset] = UInt8(max(0, min(255, color.0)))
                pixels[offset + 1] = UInt8(max(0, min(255, color.1)))
                pixels[offset + 2] = UInt8(max(0, min(255, color.2)))
            }
        }
        return try PNGImage.encode(width: width, height: height, color: .rgb, pixels: pixels)
    }
}
