import Foundation

/// An OpenStreetMap file written by the tests: nodes, ways (a ring closes itself) and multipolygons, in OSM XML,
/// turned into `.osm.pbf` by `osmium cat`.
public struct OSMXML: Sendable {
    private var nodes: [String] = []
    private var ways: [String] = []
    private var relations: [String] = []
    private var nextNode = 100_000

    public init(_ build: (inout OSMXML) -> Void) { build(&self) }

    public mutating func node(_ id: Int, _ longitude: Double, _ latitude: Double, _ tags: [String: String]) {
        nodes.append(#" <node id="\#(id)" version="1" lat="\#(latitude)" lon="\#(longitude)">\#(Self.tags(tags))</node>"#)
    }

    public mutating func way(_ id: Int, _ points: [(Double, Double)], _ tags: [String: String], closed: Bool = false) {
        var refs: [Int] = []
        for (longitude, latitude) in points {
            nextNode += 1
            nodes.append(#" <node id="\#(nextNode)" version="1" lat="\#(latitude)" lon="\#(longitude)"/>"#)
            refs.append(nextNode)
        }
        if closed { refs.append(refs[0]) }
        ways.append(#" <way id="\#(id)" version="1">\#(refs.map { #"<nd ref="\#($0)"/>"# }.joined())\#(Self.tags(tags))</way>"#)
    }

    public mutating func ring(_ id: Int, _ points: [(Double, Double)], _ tags: [String: String]) { way(id, points, tags, closed: true) }

    public mutating func multipolygon(_ id: Int, outer: [Int], inner: [Int], _ tags: [String: String]) {
        let members =
            outer.map { #"<member type="way" ref="\#($0)" role="outer"/>"# } + inner.map { #"<member type="way" ref="\#($0)" role="inner"/>"# }
        relations.append(#" <relation id="\#(id)" version="1">\#(members.joined())\#(Self.tags(tags))</relation>"#)
    }

    static func tags(_ tags: [String: String]) -> String {
        tags.sorted { $0.key < $1.key }.map { #"<tag k="\#($0.key)" v="\#($0.value)"/>"# }.joined()
    }

    public var xml: String {
        "<?xml version='1.0' encoding='UTF-8'?>\n<osm version=\"0.6\" generator=\"tests\">\n" + (nodes + ways + relations).joined(separator: "\n")
            + "\n</osm>\n"
    }

    /// The `.osm.pbf` at `target`, written by osmium from the XML (ids sorted as osmium expects).
    @discardableResult
    public func pbf(to target: URL) async throws -> URL {
        let xmlFile = target.deletingLastPathComponent().appendingPathComponent("extract-\(UUID().uuidString.prefix(6)).osm")
        try Data(xml.utf8).write(to: xmlFile)
        defer { try? FileManager.default.removeItem(at: xmlFile) }
        let result = try await ChildProcess.run("osmium", ["sort", "--overwrite", "-o", target.path, xmlFile.path])
        guard result.status == 0 else { throw OSMXMLError(message: "osmium sort: \(result.stderr)") }
        return target
    }
}

public struct OSMXMLError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
