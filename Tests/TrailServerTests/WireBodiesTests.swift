import Foundation
import Testing
import TrailAPI

@testable import TrailServer

/// The API's answers are the types generated from openapi.json; the domain's states reach them by raw value. Every
/// case of every state must be one the document lists, or the answer that carries it would be a 500.
@Suite struct WireBodiesTests {
    func mapsEveryCase<Domain: CaseIterable & RawRepresentable<String>, Wire: RawRepresentable<String>>(
        _ domain: Domain.Type,
        to wire: Wire.Type
    ) throws {
        for state in Domain.allCases {
            let mapped: Wire = try WireEnum.value(state)
            #expect(mapped.rawValue == state.rawValue)
        }
    }

    @Test func everyDomainStateIsInTheDocument() throws {
        try mapsEveryCase(TourState.self, to: Components.Schemas.Tour.StatePayload.self)
        try mapsEveryCase(AssetKind.self, to: Components.Schemas.Asset.KindPayload.self)
        try mapsEveryCase(ScanStatus.self, to: Components.Schemas.Asset.ScanStatusPayload.self)
        try mapsEveryCase(ScanStatus.self, to: Components.Schemas.CompanionFile.ScanStatusPayload.self)
        try mapsEveryCase(ScanStatus.self, to: Components.Schemas.Tileset.ScanStatusPayload.self)
        try mapsEveryCase(CompanionRole.self, to: Components.Schemas.Asset.RolePayload.self)
        try mapsEveryCase(OptimizeState.self, to: Components.Schemas.OptimizedCopy.StatePayload.self)
        try mapsEveryCase(PublishState.self, to: Components.Schemas.PublishRequest.StatePayload.self)
        try mapsEveryCase(ReviewDecision.self, to: Components.Schemas.Review.DecisionPayload.self)
        for format in [CompanionText.Format.webVTT, .plainText] {
            let _: Components.Schemas.CompanionFile.MimeTypePayload = try WireEnum.value(format.mimeType)
        }
        for format in TileFetcher.extensions {
            let _: Components.Schemas.Tileset.FormatPayload = try WireEnum.value(format)
        }
    }

    @Test func aValueTheDocumentLacksIsAnErrorNamingIt() {
        #expect(throws: WireEnum.Missing.self) {
            let _: Components.Schemas.Tileset.FormatPayload = try WireEnum.value("gif")
        }
        #expect("\(WireEnum.Missing(value: "gif", type: "FormatPayload"))".contains("“gif”"))
    }

    /// An asset's answer as the API wrote it by hand before: times in ISO 8601 UTC, the scanner's finding hidden from
    /// a viewer who neither uploaded the file nor is an admin, absent fields left out rather than null.
    @Test func anAssetEncodesAsTheDocumentSays() throws {
        let asset = Asset(
            id: 7,
            waypointId: 3,
            position: 1,
            kind: .image,
            originalName: "falls.jpg",
            mimeType: "image/jpeg",
            size: 1234,
            sha256: String(repeating: "a", count: 64),
            scanStatus: .clean,
            scanDetail: "OK",
            storedPath: "assets/x",
            uploadedBy: 42,
            createdAt: Date(timeIntervalSince1970: 1_714_560_127),
            scannedAt: nil,
            title: "Falls",
            altText: "Water over rock"
        )
        let data = try WireCoding.encoder.encode(try Components.Schemas.Asset(asset, viewer: nil))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(json["createdAt"] as? String == "2024-05-01T10:42:07Z")
        #expect(json["previewURL"] as? String == PanelURL.assetContent(7))
        #expect(json["kind"] as? String == "image" && json["scanStatus"] as? String == "clean")
        #expect(json["scanDetail"] == nil, "the finding is for the uploader and admins")
        #expect(json["companionOf"] == nil && json["role"] == nil && json["captions"] == nil)
        #expect((json["original"] as? [String: Any])?["sha256"] as? String == asset.sha256)
        #expect(json["useOriginal"] as? Bool == false)
        #expect(json["optimized"] == nil, "no copy yet")
    }
}
