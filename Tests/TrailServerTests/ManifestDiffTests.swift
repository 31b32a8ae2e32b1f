import Foundation
import PackageFormat
import Testing

@testable import TrailServer

/// The review page's "what changed since the published version": waypoints and files added, removed and changed.
@Suite struct ManifestDiffTests {
    static func asset(_ path: String, _ sha: String, size: Int64 = 1000) -> Manifest.Asset {
        Manifest.Asset(type: .image, path: path, mimeType: "image/png", size: size, sha256: String(repeating: sha, count: 64))
    }

    static func waypoint(
        _ name: String,
        _ order: Int,
        latitude: Double = 44.4,
        description: String = "",
        _ assets: [Manifest.Asset]
    ) -> Manifest.Waypoint {
        Manifest.Waypoint(
            name: name,
            order: order,
            coordinates: .init(latitude: latitude, longitude: -122.1),
            description: description,
            assets: assets
        )
    }

    static func manifest(_ waypoints: [Manifest.Waypoint], name: String = "Ridge Walk") -> Manifest {
        Manifest(
            packageId: "p",
            version: 1,
            createdAt: "2026-11-22T00:00:00Z",
            packageName: name,
            park: "Alpha",
            mapName: "ridge-walk",
            bounds: .init(north: 44.43, south: 44.36, east: -121.97, west: -122.28),
            description: "",
            waypoints: waypoints
        )
    }

    @Test func addedRemovedChangedAndMovedAreTold() {
        let old = Self.manifest([
            Self.waypoint(
                "Fish Lake",
                1,
                [Self.asset("waypoints/01-fish-lake/01-view.png", "a"), Self.asset("waypoints/01-fish-lake/02-map.png", "b")]
            ),
            Self.waypoint("Summit", 2, [Self.asset("waypoints/02-summit/01-top.png", "c")]),
            Self.waypoint("Old Mill", 3, []),
        ])
        let new = Self.manifest(
            [
                // The view replaced by new bytes (same path), the map removed, a sound added.
                Self.waypoint(
                    "Fish Lake",
                    1,
                    [
                        Self.asset("waypoints/01-fish-lake/01-view.png", "d", size: 2048),
                        Self.asset("waypoints/01-fish-lake/03-sound.png", "e"),
                    ]
                ),
                Self.waypoint("Summit", 2, latitude: 44.41, description: "Now with a bench.", [Self.asset("waypoints/02-summit/01-top.png", "c")]),
                Self.waypoint("Trailhead", 3, []),
            ],
            name: "Ridge Walk Loop"
        )
        let lines = ManifestDiff.describe(old: old, new: new)
        #expect(lines.contains("Waypoint added: “Trailhead” (0 file(s))."), "\(lines)")
        #expect(lines.contains("Waypoint removed: “Old Mill”."))
        #expect(lines.contains("Waypoint changed: “Summit”: moved, description edited."))
        #expect(
            lines.contains("File changed at “Fish Lake”: waypoints/01-fish-lake/01-view.png (1,000 B → 2.0 KiB).")
                || lines.contains { $0.hasPrefix("File changed at “Fish Lake”: waypoints/01-fish-lake/01-view.png (") },
            "\(lines)"
        )
        #expect(lines.contains("File added at “Fish Lake”: waypoints/01-fish-lake/03-sound.png (image)."))
        #expect(lines.contains("File removed at “Fish Lake”: waypoints/01-fish-lake/02-map.png."))
        #expect(
            !lines.contains { $0.contains("01-view.png") && ($0.hasPrefix("File added") || $0.hasPrefix("File removed")) },
            "a replaced file is one change, not an addition and a removal"
        )
        #expect(lines.contains("Renamed: “Ridge Walk” → “Ridge Walk Loop”."))
        #expect(!lines.contains { $0.contains("Summit") && $0.hasPrefix("File") }, "an unchanged file is not mentioned")
        #expect(ManifestDiff.describe(old: nil, new: new).isEmpty, "a first version has nothing to compare with")
        #expect(ManifestDiff.describe(old: old, new: old).isEmpty)
    }
}
