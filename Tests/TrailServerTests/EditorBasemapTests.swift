import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import TrailServer

/// The panel maps' basemap: which tiles the page asks the browser to show, and the one outside image host the
/// Content-Security-Policy then allows, for each setting; `serve` refuses an unusable `--editor-tile-url`.
@Suite struct EditorBasemapTests {
    static func imageSources(_ response: TestResponse) -> [String] {
        let csp = response.headers[.contentSecurityPolicy] ?? ""
        let directive = csp.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.first { $0.hasPrefix("img-src ") } ?? ""
        return directive.split(separator: " ").dropFirst().map(String.init)
    }

    /// The map data the tour page hands its script (`data-map`, HTML-escaped JSON).
    static func mapData(_ page: TestResponse) throws -> [String: Any] {
        let text = page.text
        let start = try #require(text.range(of: "data-map=\""))
        let end = try #require(text[start.upperBound...].firstIndex(of: "\""))
        let json = String(text[start.upperBound..<end]).replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&amp;", with: "&")
            .replacingOccurrences(of: "&#39;", with: "'").replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
        return try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    }

    @Test(
        arguments: [
            // (--editor-tile-url, --tile-url, the layer's template, the outside image hosts)
            (nil, nil, EditorBasemap.openStreetMap, ["https://tile.openstreetmap.org"]),
            ("none", nil, nil, []),
            (nil, "https://tiles.park.example/{z}/{x}/{y}.png", "https://tiles.park.example/{z}/{x}/{y}.png", ["https://tiles.park.example"]),
            (
                "https://maps.example.net/{z}/{x}/{y}.png", "https://tiles.park.example/{z}/{x}/{y}.png",
                "https://maps.example.net/{z}/{x}/{y}.png", ["https://tiles.park.example", "https://maps.example.net"]
            ),
        ] as [(String?, String?, String?, [String])]
    )
    func theTourPageAndTheCSPFollowTheSetting(editor: String?, packages: String?, layer: String?, hosts: [String]) async throws {
        let (app, seed) = try await TestApp.seeded {
            $0.editorTileURL = editor
            $0.tileURLTemplate = packages
        }
        try await app.test { client in
            let session = try await client.signIn("author@test.org")
            for path in ["/tours/\(seed.tourId)", "/tours/\(seed.tourId)/waypoints/\(seed.waypointId)"] {
                let page = try await client.get(path, session: session)
                #expect(page.status == .ok, "\(path)")
                #expect(Self.imageSources(page) == ["'self'", "data:", "blob:"] + hosts, "\(path): \(page.headers[.contentSecurityPolicy] ?? "")")
                let data = try Self.mapData(page)
                #expect(data["tileURL"] as? String == layer, "\(path): \(data["tileURL"] ?? "none")")
                if layer == EditorBasemap.openStreetMap {
                    #expect(data["tileAttribution"] as? String == "© OpenStreetMap contributors")
                    #expect(data["tileAttributionURL"] as? String == "https://www.openstreetmap.org/copyright")
                }
            }
            // Every answer carries the same policy, not only the map pages.
            #expect(Self.imageSources(try await client.get("/login", session: nil)) == ["'self'", "data:", "blob:"] + hosts)
        }
    }

    @Test func anAttributionOfOnesOwnReplacesTheCredit() async throws {
        let (app, seed) = try await TestApp.seeded {
            $0.editorTileURL = "https://maps.example.net/{z}/{x}/{y}.png"
            $0.editorTileAttribution = "© Example Maps"
        }
        try await app.test { client in
            let page = try await client.get("/tours/\(seed.tourId)", session: try await client.signIn("author@test.org"))
            let data = try Self.mapData(page)
            #expect(data["tileAttribution"] as? String == "© Example Maps")
            #expect(data["tileAttributionURL"] == nil)
            #expect(data["maxAreaKm2"] as? Double == 2_500)
        }
    }

    @Test func unusableTemplatesAreNamed() {
        #expect(EditorBasemap.problem("none") == nil)
        #expect(EditorBasemap.problem("NONE") == nil)
        #expect(EditorBasemap.problem(EditorBasemap.openStreetMap) == nil)
        #expect(EditorBasemap.problem("https://{s}.tiles.example.org/{z}/{x}/{y}.png") == nil)
        #expect(EditorBasemap.problem("ftp://tiles.example.org/{z}/{x}/{y}.png") != nil)
        #expect(EditorBasemap.problem("https://tiles.example.org/tile.png") != nil)
        #expect(EditorBasemap.problem("off") != nil)
    }
}

/// `serve --editor-tile-url` and `TRAIL_EDITOR_TILE_URL`: a template the panel's maps cannot use stops the start.
@Suite(.enabled(if: CLI.isBuilt, "build it first: swift build --product trail-companion (scripts/test.sh does)"))
struct EditorBasemapCLITests {
    @Test func theFlagAndTheVariableAreReadAndAnUnusableTemplateRefused() async throws {
        let flag = try await CLI.run(["serve", "--port", "0", "--editor-tile-url", "ftp://x/{z}/{x}/{y}"], data: try CLI.dataFolder())
        #expect(flag.status != 0 && flag.errors.contains("--editor-tile-url ftp://x/{z}/{x}/{y}: must be an http(s) URL template"), "\(flag.errors)")
        let variable = try await CLI.run(["serve", "--port", "0"], data: try CLI.dataFolder(), environment: ["TRAIL_EDITOR_TILE_URL": "tiles"])
        #expect(variable.status != 0 && variable.errors.contains("--editor-tile-url tiles: must be an http(s) URL template"), "\(variable.errors)")
        // The flag wins over the variable, as for every setting.
        let flagWins = try await CLI.run(
            ["serve", "--port", "0", "--editor-tile-url", "nope"],
            data: try CLI.dataFolder(),
            environment: ["TRAIL_EDITOR_TILE_URL": "none"]
        )
        #expect(flagWins.errors.contains("--editor-tile-url nope:"), "\(flagWins.errors)")
        let help = try await CLI.run(["serve", "--help"], data: nil, root: nil)
        for name in ["--editor-tile-url", "TRAIL_EDITOR_TILE_URL", "--editor-tile-attribution", "TRAIL_EDITOR_TILE_ATTRIBUTION"] {
            #expect(help.output.contains(name), "serve help mentions \(name)")
        }
    }
}
