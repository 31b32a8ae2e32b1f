import Foundation
import PackageFormat

struct QueueRowModel: Sendable {
    let id: String
    let tourName: String
    let siteName: String
    let author: String
    let age: String
    let size: String
    let approvals: Int
    let required: Int
    let waitingForMe: Bool
}

struct QueuePage: Sendable {
    let rows: [QueueRowModel]
    let isEmpty: Bool
}

struct RequestPage: Sendable {
    struct ReviewRow: Sendable {
        let reviewer: String
        let isApproval: Bool
        let comment: String
        let time: String
    }
    struct AssetItem: Sendable {
        let index: Int
        let path: String
        let type: String
        let mimeType: String
        let size: String
        let isVideo: Bool
        let isAudio: Bool
        let isImage: Bool
        let isText: Bool
        /// What the package carries for visitors who cannot see or hear the file ("Alt text: …", "No alt text").
        let access: String?
        let accessMissing: Bool
        let title: String?
        let altText: String?
        /// The captions and transcript packaged beside the file, served from the staged copies.
        var captionsURL: String? = nil
        var transcriptURL: String? = nil
        var captionsPath: String? = nil
        var transcriptPath: String? = nil
        /// "Spanish (Español)" for a file of one language; nil for every language.
        var languageLabel: String? = nil
    }
    struct WaypointItem: Sendable {
        let order: Int
        let name: String
        let description: String
        let coordinates: String
        let assets: [AssetItem]
    }
    struct ScanRow: Sendable {
        let file: String
        let verdict: String
    }

    let id: String
    let stateLabel: String
    let stateBadge: String
    let isBuilding: Bool
    let isBuilt: Bool
    let isFailed: Bool
    let progressPercent: Int
    let progressText: String
    let failureReason: String?
    let denialComment: String?
    let tourId: Int64?
    let tourName: String
    let siteName: String
    let author: String
    let version: Int
    let packageId: String
    let approvals: Int
    let required: Int
    let reviews: [ReviewRow]
    let canApprove: Bool
    let canDeny: Bool
    let canWithdraw: Bool
    let canPush: Bool
    let sha256: String
    let size: String
    let manifestJSON: String
    let mapJSON: String
    let waypoints: [WaypointItem]
    let scanReport: [ScanRow]
    let diff: [String]
    let hasDiff: Bool
    let isFirstVersion: Bool
    var denyError: String?
    /// The package's map tiles in one line ("PNG tiles, zoom 11–15, 412 tiles, 3.1 MiB"), when it has any.
    /// The map the package gives visitors: tiles, the drawn map, both or none (from the built manifest).
    var visitorMap: String? = nil
    var visitorMapKind = ""
    /// For each released version, what an app on it downloads to update to this one, newest first.
    var updateCosts: [String] = []
    /// Stored, not computed: templates see stored properties only.
    var hasUpdateCosts = false
    /// The package's languages as tabs (`?lang=es` shows the waypoints' texts in Spanish), when it has several.
    var languageTabs: [LanguageTab] = []
    var hasLanguageTabs = false
    /// Every file of the package with the language it is for, and whether it shows in the chosen language.
    var languageLabel = ""
}

struct PackagePage: Sendable {
    struct VersionRow: Sendable {
        let version: Int
        let size: String
        let sha256: String
        let released: String
        let verified: Int
        let isCurrent: Bool
        let canServe: Bool
        /// The phone preview of this version (its own map tiles).
        var previewURL: String = ""
        /// What an app on this version downloads to reach the served one ("v3 → v5: 4.2 MiB of 611 MiB"); nil for the served one.
        var updateCost: String? = nil
    }
    let id: String
    let name: String
    let siteName: String
    let siteSlug: String
    let tourId: Int64?
    let isVisible: Bool
    let currentVersion: Int
    let canManage: Bool
    var versions: [VersionRow]
    let downloadURL: String
    /// The web player's address of this package (for a sign or a message), and its QR code beside it.
    var playerURL: String? = nil
    var publicURLWarning: String? = nil
    /// With object storage: "In sync with s3://…", or what waits and why.
    var distribution: String? = nil
    var distributionInSync = false
}

extension PublishingController {
    /// Who may withdraw or release a request: its author or a manager of the site (the database checks the same).
    static func isAuthorOrManager(_ publish: PublishRequest, user: AuthenticatedUser, access: SiteAccess) -> Bool {
        publish.authorId == user.id || access.canManage
    }

    func requestPage(
        _ publish: PublishRequest,
        site: Site,
        access: SiteAccess,
        user: AuthenticatedUser,
        language: String? = nil
    ) async throws -> RequestPage {
        let snapshot = publish.snapshot
        let reviews = try await database.reviews(requestId: publish.id)
        let approvals = reviews.filter { $0.review.decision == .approve }.count
        let reviewedByMe = reviews.contains { $0.review.reviewerId == user.id }
        let isReviewer = access.canReview && publish.authorId != user.id && !reviewedByMe
        let isAuthorOrManager = Self.isAuthorOrManager(publish, user: user, access: access)
        let manifest = try publish.decodedManifest()
        var author = "unknown"
        if let authorId = publish.authorId, let name = try await database.user(id: authorId)?.displayName { author = name }
        var index = 0
        // A further language of the package, when asked for: the waypoints' texts in it (the default's where missing).
        let languages = manifest?.languages ?? []
        let chosen = LanguageTag.further(language, of: languages)
        let waypoints: [RequestPage.WaypointItem] = (manifest?.waypoints ?? []).map { waypoint in
            let text = chosen.flatMap { waypoint.localized?[$0] }
            return RequestPage.WaypointItem(
                order: waypoint.order,
                name: text?.name.nonEmpty ?? waypoint.name,
                description: text?.description.nonEmpty ?? waypoint.description,
                coordinates:
                    "\(DisplayFormat.coordinate(waypoint.coordinates.latitude)), \(DisplayFormat.coordinate(waypoint.coordinates.longitude))",
                assets: waypoint.assets.map { asset in
                    defer { index += 1 }
                    var item = RequestPage.AssetItem(
                        index: index,
                        path: asset.path,
                        type: asset.type.rawValue,
                        mimeType: asset.mimeType,
                        size: ByteFormat.string(asset.size),
                        isVideo: asset.type == .video,
                        isAudio: asset.type == .audio,
                        isImage: asset.type == .image,
                        isText: asset.type == .text,
                        access: Self.accessSummary(asset),
                        accessMissing: Self.lacksAccessibleText(asset),
                        title: asset.title,
                        altText: asset.altText
                    )
                    item.captionsURL = asset.captions.map { _ in PanelURL.requestCompanion(publish.id, asset: index, role: "captions") }
                    item.transcriptURL = asset.transcript.map { _ in PanelURL.requestCompanion(publish.id, asset: index, role: "transcript") }
                    item.captionsPath = asset.captions?.path
                    item.transcriptPath = asset.transcript?.path
                    item.languageLabel = asset.language.map(LanguageTag.label)
                    return item
                }
            )
        }
        let scanReport = (publish.scanReport ?? [])
            .map { RequestPage.ScanRow(file: $0.file, verdict: $0.verdict) }
        var published: PackageVersion?
        if let package = try await database.package(id: publish.packageId), let current = package.currentVersion {
            published = try await database.packageVersion(packageId: package.id, version: current)
        }
        let previous = try published?.decodedManifest()
        let diff = manifest.map { ManifestDiff.describe(old: previous, new: $0) } ?? []
        let percent = publish.bytesTotal > 0 ? Int(publish.bytesDone * 100 / publish.bytesTotal) : (publish.state == .building ? 0 : 100)
        var page = RequestPage(
            id: publish.id,
            stateLabel: publish.state.label,
            stateBadge: publish.state.badge,
            isBuilding: publish.state == .building,
            isBuilt: manifest != nil,
            isFailed: publish.state == .failed,
            progressPercent: min(100, percent),
            progressText:
                "\(publish.filesDone) of \(publish.filesTotal) files, \(ByteFormat.string(publish.bytesDone)) of \(ByteFormat.string(publish.bytesTotal))",
            failureReason: publish.failureReason,
            denialComment: publish.denialComment,
            tourId: publish.tourId,
            tourName: snapshot.name,
            siteName: site.name,
            author: author,
            version: publish.version,
            packageId: publish.packageId,
            approvals: approvals,
            required: publish.requiredApprovals,
            reviews: reviews.map {
                RequestPage.ReviewRow(
                    reviewer: $0.reviewerName,
                    isApproval: $0.review.decision == .approve,
                    comment: $0.review.comment,
                    time: DisplayFormat.date($0.review.createdAt)
                )
            },
            canApprove: isReviewer && publish.state == .pending,
            canDeny: isReviewer && (publish.state == .pending || publish.state == .ready),
            canWithdraw: isAuthorOrManager && publish.state.isOpen,
            canPush: isAuthorOrManager && publish.state == .ready,
            sha256: publish.zipSha256 ?? "",
            size: publish.zipSize.map(ByteFormat.string) ?? "",
            manifestJSON: publish.manifestJSON.map(Self.pretty) ?? "",
            mapJSON: manifest.map {
                Self.mapJSON($0, tileURL: PanelURL.requestTiles(publish.id), basemapURL: PanelURL.requestBasemap(publish.id))
            } ?? "{}",
            waypoints: waypoints,
            scanReport: scanReport,
            diff: diff,
            hasDiff: !diff.isEmpty,
            isFirstVersion: previous == nil
        )
        if let manifest, let size = publish.zipSize {
            page.updateCosts = try await UpdateCost.lines(to: manifest, fullSize: size, from: database.packageVersions(packageId: publish.packageId))
            page.hasUpdateCosts = !page.updateCosts.isEmpty
        }
        page.hasLanguageTabs = languages.count > 1
        page.languageTabs = LanguageTab.tabs(languages: languages, base: PanelURL.request(publish.id), active: chosen)
        page.languageLabel = LanguageTag.label(chosen ?? languages.first ?? "en")
        let shipped = manifest.map(VisitorMap.shipped)
        page.visitorMap = shipped?.summary
        page.visitorMapKind = shipped?.kind.rawValue ?? ""
        return page
    }

    /// What the package carries, per file, for visitors who cannot see or hear it: the reviewer checks it is there.
    static func accessSummary(_ asset: Manifest.Asset) -> String? {
        switch asset.type {
        case .image: asset.altText.map { "Alt text: \($0)" } ?? "No alt text"
        case .video:
            [asset.captions == nil ? "No captions" : "Captions", asset.transcript == nil ? nil : "transcript"].compactMap { $0 }.joined(
                separator: " and "
            )
        case .audio:
            [asset.transcript == nil ? "No transcript" : "Transcript", asset.captions == nil ? nil : "captions"].compactMap { $0 }.joined(
                separator: " and "
            )
        default: nil
        }
    }

    static func lacksAccessibleText(_ asset: Manifest.Asset) -> Bool {
        switch asset.type {
        case .image: asset.altText == nil
        case .video: asset.captions == nil
        case .audio: asset.transcript == nil
        default: false
        }
    }

    func packagePage(_ package: PackageRecord, site: Site, access: SiteAccess) async throws -> PackagePage {
        let versions = try await database.packageVersions(packageId: package.id)
        let served = versions.first { $0.version == package.currentVersion }
        let costs =
            try served.map { served in
                try UpdateCost.costs(to: served.decodedManifest(), fullSize: served.size, from: versions)
            } ?? [:]
        var page = PackagePage(
            id: package.id,
            name: versions.first?.name ?? "Package",
            siteName: site.name,
            siteSlug: site.slug,
            tourId: package.tourId,
            isVisible: package.isVisible,
            currentVersion: package.currentVersion ?? 0,
            canManage: access.canManage,
            versions: versions.map {
                PackagePage.VersionRow(
                    version: $0.version,
                    size: ByteFormat.string($0.size),
                    sha256: $0.sha256,
                    released: DisplayFormat.date($0.createdAt),
                    verified: $0.verifiedCount,
                    isCurrent: $0.version == package.currentVersion,
                    canServe: access.canManage && $0.version != package.currentVersion,
                    previewURL: PanelURL.packageVersionPreview(package.id, version: $0.version)
                )
            },
            downloadURL: APIURL.packageDownload(package.id)
        )
        for index in page.versions.indices { page.versions[index].updateCost = costs[page.versions[index].version] }
        if package.currentVersion != nil, package.tourId != nil {
            page.playerURL = VisitController.playerURL(publicURL: publicURL, packageId: package.id)
            page.publicURLWarning = PublicAddress.warning(for: publicURL)
        }
        if let state = pages.distribution {
            let status = try await DistributionStatus.of(packageId: package.id, database: database, paths: paths, state: state)
            page.distribution = status.text
            page.distributionInSync = status.inSync
        }
        return page
    }

    static func pretty(_ json: String) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)),
            let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        else { return json }
        return String(decoding: data, as: UTF8.self)
    }

    /// The review map draws the package's own manifest: the frame and waypoints the visitor will get.
    /// With tiles, the map is drawn from the package's own MBTiles at `tileURL` (a route of `TilesController`).
    static func mapJSON(_ manifest: Manifest, tileURL: String? = nil, basemapURL: String? = nil) -> String {
        var data = TourMapData(
            frame: Frame(north: manifest.bounds.north, south: manifest.bounds.south, east: manifest.bounds.east, west: manifest.bounds.west),
            waypoints: manifest.waypoints.enumerated().map { index, waypoint in
                .init(
                    id: Int64(index + 1),
                    order: waypoint.order,
                    name: waypoint.name,
                    latitude: waypoint.coordinates.latitude,
                    longitude: waypoint.coordinates.longitude,
                    url: "#waypoint-\(waypoint.order)",
                    triggerRadiusMeters: waypoint.triggerRadiusMeters ?? TriggerZone.defaultRadius,
                    overlaps: false
                )
            },
            editable: false,
            tileURL: manifest.tiles == nil ? nil : tileURL,
            moveURLTemplate: "",
            orderURL: "",
            newWaypointURL: ""
        )
        // The route as the package carries it, so the reviewer sees the trail line the visitor will follow.
        data.route = (manifest.route ?? []).map { [$0.longitude, $0.latitude] }
        // The drawn map the package carries, drawn over its tiles as the player draws it.
        if manifest.basemap != nil, let basemapURL {
            data.basemapURL = basemapURL
            data.basemapShips = true
        }
        if let tiles = manifest.tiles, tileURL != nil {
            data.tileMinZoom = tiles.minZoom
            data.tileMaxZoom = tiles.maxZoom
        }
        return (try? String(data: WireCoding.encoder.encode(data), encoding: .utf8)) ?? "{}"
    }
}

/// What changed between the published version and the candidate, in plain sentences.
enum ManifestDiff {
    static func describe(old: Manifest?, new: Manifest) -> [String] {
        guard let old else { return [] }
        var lines: [String] = []
        let before = Dictionary(old.waypoints.map { ($0.name.lowercased(), $0) }, uniquingKeysWith: { a, _ in a })
        let after = Dictionary(new.waypoints.map { ($0.name.lowercased(), $0) }, uniquingKeysWith: { a, _ in a })
        for waypoint in new.waypoints where before[waypoint.name.lowercased()] == nil {
            lines.append("Waypoint added: “\(waypoint.name)” (\(waypoint.assets.count) file(s)).")
        }
        for waypoint in old.waypoints where after[waypoint.name.lowercased()] == nil {
            lines.append("Waypoint removed: “\(waypoint.name)”.")
        }
        for waypoint in new.waypoints {
            guard let previous = before[waypoint.name.lowercased()] else { continue }
            var changes: [String] = []
            if previous.order != waypoint.order { changes.append("order \(previous.order) → \(waypoint.order)") }
            if previous.coordinates != waypoint.coordinates { changes.append("moved") }
            if previous.description != waypoint.description { changes.append("description edited") }
            if !changes.isEmpty { lines.append("Waypoint changed: “\(waypoint.name)”: \(changes.joined(separator: ", ")).") }
            let oldAssets = Dictionary(previous.assets.map { ($0.sha256, $0) }, uniquingKeysWith: { a, _ in a })
            let newAssets = Dictionary(waypoint.assets.map { ($0.sha256, $0) }, uniquingKeysWith: { a, _ in a })
            // New bytes at a path the old version also had: the file was replaced (changed), not added and removed.
            let added = waypoint.assets.filter { oldAssets[$0.sha256] == nil }
            let removed = previous.assets.filter { newAssets[$0.sha256] == nil }
            let removedPaths = Dictionary(removed.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
            let addedPaths = Set(added.map(\.path))
            for asset in added {
                if let replaced = removedPaths[asset.path] {
                    lines.append(
                        "File changed at “\(waypoint.name)”: \(asset.path) (\(ByteFormat.string(replaced.size)) → \(ByteFormat.string(asset.size)))."
                    )
                } else {
                    lines.append("File added at “\(waypoint.name)”: \(asset.path) (\(asset.type.rawValue)).")
                }
            }
            for asset in removed where !addedPaths.contains(asset.path) {
                lines.append("File removed at “\(waypoint.name)”: \(asset.path).")
            }
            for asset in waypoint.assets {
                if let old = oldAssets[asset.sha256], old.path != asset.path {
                    lines.append("File renamed at “\(waypoint.name)”: \(old.path) → \(asset.path).")
                }
            }
        }
        if old.bounds != new.bounds { lines.append("The map frame changed.") }
        if old.packageName != new.packageName { lines.append("Renamed: “\(old.packageName)” → “\(new.packageName)”.") }
        if old.description != new.description { lines.append("The tour description changed.") }
        return lines
    }
}

/// What a delta update costs an app, in words for the release and package pages: "v3 → v5: 4.2 MiB of 611 MiB".
enum UpdateCost {
    /// Version number → the line, for every version but `to` itself.
    static func costs(to manifest: Manifest, fullSize: Int64, from versions: [PackageVersion]) throws -> [Int: String] {
        var lines: [Int: String] = [:]
        for version in versions where version.version != manifest.version {
            let old = try version.decodedManifest()
            let plan = UpdatePlan.make(from: old, to: manifest, fullSize: fullSize, publicURL: "")
            lines[version.version] =
                "v\(version.version) → v\(manifest.version): \(ByteFormat.string(plan.downloadSize)) of \(ByteFormat.string(fullSize))"
        }
        return lines
    }

    /// The lines, newest version first.
    static func lines(to manifest: Manifest, fullSize: Int64, from versions: [PackageVersion]) throws -> [String] {
        let costs = try costs(to: manifest, fullSize: fullSize, from: versions)
        return costs.keys.sorted(by: >).compactMap { costs[$0] }
    }
}
