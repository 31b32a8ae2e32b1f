import Foundation

/// First start: with no users at all, create an admin whose one-time password must be changed at sign-in.
///
/// The password is written to a file only the server's user can read (``passwordFileName`` in the data folder, 0600),
/// never to the log: logs are kept, shipped and read by more people than the operator. The log says where the file is,
/// and the file is removed when that admin first signs in (the password then works no more anyway).
enum Bootstrap {
    static let firstAdminEmail = "admin@trail.local"
    static let passwordFileName = "first-admin-password"

    static func passwordFile(in dataFolder: URL) -> URL { dataFolder.appendingPathComponent(passwordFileName) }

    @discardableResult
    static func firstStart(database: AppDatabase, config: AppConfig, print: (String) -> Void) async throws -> String? {
        guard try await database.userCount() == 0 else { return nil }
        let password = OneTimePassword.make()
        let file = passwordFile(in: config.dataFolder)
        try writePrivately("email:    \(firstAdminEmail)\npassword: \(password)\n", to: file)
        try await database.createUser(
            email: firstAdminEmail,
            displayName: "Administrator",
            password: password,
            isAdmin: true,
            mustChangePassword: true,
            bcryptCost: config.bcryptCost,
            actor: .system
        )
        print(
            """

            ============================================================
              First start: an administrator account was created.
                email:    \(firstAdminEmail)
              Its one-time password is in \(file.path)
              (readable only by this user; removed at the first sign-in).
              It works once: you will choose a new one at sign-in.
            ============================================================

            """
        )
        return password
    }

    /// The first admin signed in: the file with their one-time password goes.
    static func firstAdminSignedIn(_ user: User, dataFolder: URL) {
        guard user.email == firstAdminEmail else { return }
        try? FileManager.default.removeItem(at: passwordFile(in: dataFolder))
    }

    /// Creates `url` with mode 0600 (a file left there by an earlier first start is replaced), without following a
    /// symbolic link, and fsyncs it.
    static func writePrivately(_ text: String, to url: URL) throws {
        try? FileManager.default.removeItem(at: url)
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw POSIXFailure(operation: "create \(url.path)", code: errno) }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        defer { try? handle.close() }
        try handle.write(contentsOf: Data(text.utf8))
        try handle.synchronize()
    }
}

/// `--demo`: a real place to try things on. Idempotent: a second start adds nothing.
enum DemoContent {
    static let siteSlug = "sweet-home"
    static let tourName = "Santiam Wagon Road"

    /// Places along the historic Santiam Wagon Road in the Sweet Home Ranger District (Willamette National Forest), west to east.
    static let waypoints: [(String, Double, Double, String)] = [
        ("House Rock", 44.3927, -122.2449, "The wagon road crossed the South Santiam River here, below the overhanging House Rock."),
        ("Iron Mountain", 44.4023, -122.1558, "A lookout and one of the richest wildflower meadows of the Cascades, above the road."),
        ("Tombstone Pass", 44.3963, -122.1419, "Named for the grave of a young traveller; the summit of the western climb."),
        ("Hackleman Creek", 44.3990, -122.0882, "Old-growth Douglas fir along the creek where wagons rested."),
        ("Lost Prairie", 44.4036, -122.0623, "A meadow camp on the road, later a campground."),
        ("Fish Lake", 44.4012, -121.9948, "The Fish Lake Remount Depot: a way station, then a Forest Service guard station."),
    ]

    static func install(database: AppDatabase, config: AppConfig, print: (String) -> Void) async throws {
        let site: Site
        if let existing = try await database.site(slug: siteSlug) {
            site = existing
        } else {
            site = try await database.createSite(
                SiteInput(
                    slug: siteSlug,
                    name: "Sweet Home Ranger District",
                    description: "Willamette National Forest, Oregon: the western slopes of the Cascades along the South Santiam River.",
                    requiredApprovals: config.defaultRequiredApprovals
                ),
                actor: .system
            )
        }
        if try await !database.tours(siteId: site.id).contains(where: { $0.name == tourName }) {
            let tour = try await database.createTour(
                siteId: site.id,
                TourInput(
                    name: tourName,
                    description: "Follow the 1860s wagon road over the Cascades from House Rock to Fish Lake.",
                    mapName: "santiam-wagon-road"
                ),
                actor: .system
            )
            _ = try await database.setFrame(
                tourId: tour.id,
                FrameInput(north: 44.43, south: 44.36, east: -121.97, west: -122.28, minZoom: 11, maxZoom: 15),
                maxAreaKm2: config.maxFrameAreaKm2,
                actor: .system
            )
            for (name, latitude, longitude, description) in waypoints {
                _ = try await database.createWaypoint(
                    tourId: tour.id,
                    WaypointInput(name: name, description: description, latitude: latitude, longitude: longitude),
                    actor: .system
                )
            }
        }
        // The first admin manages the demo site, so the whole workflow can be tried at once.
        if let admin = try await database.user(email: Bootstrap.firstAdminEmail) {
            try await database.setMembership(siteId: site.id, email: admin.email, role: .manager, actor: .system)
        }
        print("Demo content: site “\(site.name)” at \(config.effectivePublicURL)/sites/\(siteSlug)")
        print("Sample tour: “\(DemoSample.tourName)” is published in the background once its files are scanned: \(config.effectivePublicURL)/visit")
    }
}
