import Foundation
import NIOPosix
import PackageFormat

/// Everything that moves a review request or a package from one state to the next, with the files that go with each
/// step: the state change (a named database write that records its audit event), the file moves inside that
/// transaction, and the cleanup after it. The panel, the management API and any other caller (a CLI, a test) go
/// through here, so no caller can change a state and leave the files behind (as `AssetIntake` is for media).
///
/// Permissions are checked here too, on the object (`Authorization`); the database methods re-check the rules that
/// must hold inside their transaction (one review per reviewer, never the author's own request).
struct PublishingService: Sendable {
    let database: AppDatabase
    let authorization: Authorization
    let builds: PackageBuildService
    let paths: DataPaths
    /// The tile settings in force, frozen into each submission.
    let tileSettings: TileSettingsStore
    /// Emails the people each step concerns (after its commit; a lost email never fails the step).
    var mailer: Mailer? = nil

    /// draft → building: the tour is frozen into a request and its package is built in the background.
    /// Throws ``NotReadyToPublish`` with the checklist's problems.
    func submit(tourId: Int64, user: AuthenticatedUser, actor: AuditActor) async throws -> PublishRequest {
        let (tour, _, _) = try await authorization.editableTour(id: tourId, user: user)
        return try await submit(tour, user: user, actor: actor)
    }

    /// The same for a tour the user may change, as a tour route's group has checked before its handler.
    func submit(_ tour: Tour, user: AuthenticatedUser, actor: AuditActor) async throws -> PublishRequest {
        let publish = try await database.startPublish(tourId: tour.id, actor: actor, tiles: tileSettings.current)
        builds.wake()
        await mailer?.reviewRequested(requestId: publish.id, by: user)
        return publish
    }

    /// One reviewer's approval; the request becomes ready with its last required one.
    func approve(requestId: String, reviewer: AuthenticatedUser, comment: String, actor: AuditActor) async throws -> AppDatabase.ReviewOutcome {
        let outcome = try await database.approve(requestId: requestId, reviewer: reviewer, comment: comment, actor: actor)
        await mailer?.reviewed(requestId: requestId, by: reviewer, outcome: outcome, comment: comment)
        return outcome
    }

    /// A denial (with its comment) closes the request; the staged package goes.
    func deny(requestId: String, reviewer: AuthenticatedUser, comment: String, actor: AuditActor) async throws {
        try await database.deny(requestId: requestId, reviewer: reviewer, comment: comment, actor: actor)
        removeStaging(requestId)
        await mailer?.reviewed(requestId: requestId, by: reviewer, outcome: .denied, comment: comment)
    }

    /// The author (or a manager) takes an open request back; the staged package goes.
    func withdraw(requestId: String, user: AuthenticatedUser, actor: AuditActor) async throws -> PublishRequest {
        let publish = try await database.withdraw(requestId: requestId, user: user, actor: actor)
        removeStaging(requestId)
        return publish
    }

    /// ready → published: the staged zip moves to `packages/<id>/<n>.zip` (fsync'd, then renamed) inside the release
    /// transaction, so no row ever names a missing file; the rest of the staging folder goes after the commit.
    ///
    /// Both steps run off the request's task: flushing a zip of hundreds of megabytes can take many seconds on a busy
    /// disk, and done on Swift's cooperative threads (two on a two-core server) it would stall every other request.
    /// The zip is flushed first, on the blocking pool and outside the transaction (it no longer changes once built), so
    /// the write lock is held only for the rename and the folder's flush.
    func release(requestId: String, user: AuthenticatedUser, actor: AuditActor) async throws -> PackageVersion {
        let staged = builds.stagedZip(requestId)
        // (The shared pool, not the long-job threads: a release must not wait for builds running there.)
        try await BlockingWork.short {
            if FileManager.default.fileExists(atPath: staged.path) { try DurableFile.fsync(staged) }
        }
        // The move runs inside the write transaction, on GRDB's writer thread (not a cooperative one).
        let (builds, paths) = (self.builds, self.paths)
        let version = try await database.push(requestId: requestId, user: user, actor: actor) { request in
            let source = builds.stagedZip(request.id)
            let folder = paths.packages.appendingPathComponent(request.packageId)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let target = folder.appendingPathComponent("\(request.version).zip")
            guard FileManager.default.fileExists(atPath: source.path) else {
                throw Conflict("The built package is missing; submit the tour again.")
            }
            guard rename(source.path, target.path) == 0 else { throw POSIXFailure(operation: "rename package", code: errno) }
            try DurableFile.fsyncFolder(folder)
        }
        removeStaging(requestId)
        await mailer?.released(requestId: requestId, version: version.version, by: user)
        return version
    }

    /// Unpublish (`visible: false`: the apps stop listing it) or publish again.
    func setVisible(packageId: String, visible: Bool, user: AuthenticatedUser, actor: AuditActor) async throws {
        _ = try await managedPackage(id: packageId, user: user)
        try await database.setPackageVisible(id: packageId, visible: visible, actor: actor)
    }

    /// Serve an earlier (or later) released version again.
    func rollback(packageId: String, to version: Int, user: AuthenticatedUser, actor: AuditActor) async throws {
        _ = try await managedPackage(id: packageId, user: user)
        try await database.setCurrentVersion(packageId: packageId, version: version, actor: actor)
    }

    /// The package, when the user may see it (else `NotFound`), with the site and the user's access.
    func viewablePackage(id: String, user: AuthenticatedUser) async throws -> (PackageRecord, Site, SiteAccess) {
        guard let package = try await database.package(id: id) else { throw NotFound() }
        let (site, access) = try await authorization.site(id: package.siteId, user: user)
        return (package, site, access)
    }

    /// The package, when the user manages its site (else `Forbidden`, or `NotFound` when they cannot see it).
    func managedPackage(id: String, user: AuthenticatedUser) async throws -> (PackageRecord, Site, SiteAccess) {
        let (package, site, access) = try await viewablePackage(id: id, user: user)
        try access.require(.manage, to: "unpublish or roll back its packages")
        return (package, site, access)
    }

    /// The request's staging folder (its zip and the copies of its files) is only needed while the request is open.
    func removeStaging(_ requestId: String) {
        try? FileManager.default.removeItem(at: paths.staging.appendingPathComponent(requestId))
    }
}
