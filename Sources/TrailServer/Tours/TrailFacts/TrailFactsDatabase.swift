import Foundation
import GRDB
import PackageFormat

/// A tour's stored facts, as `trailFacts` holds them.
struct StoredTrailFacts: Codable, Sendable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    var tourId: Int64
    var model: String
    var facts: TerrainFacts
    var computedAt: Date

    static let databaseTableName = "trailFacts"
}

extension AppDatabase {
    /// Most tours whose facts one write works out: a write's own changes are a tour or two, and a backlog (a new terrain
    /// model, an upgrade) is worked off by ``workTrailFactsBacklog()`` without making any one write slow.
    static let trailFactsPerWrite = 25

    /// Works out the facts of the tours listed in `trailFactsStale`, in the caller's transaction.
    static func refreshTrailFacts(_ db: Database, terrain: TerrainSource, limit: Int = trailFactsPerWrite) throws {
        let stale = try Int64.fetchAll(db, sql: "SELECT tourId FROM trailFactsStale LIMIT ?", arguments: [limit])
        guard !stale.isEmpty else { return }
        for tourId in stale {
            let tour: Tour?
            do { tour = try Tour.fetchOne(db, id: tourId) } catch {
                // A route damaged outside the app (by hand in SQL) is an error where the tour is read; here it must
                // not make the write that found it fail too.
                let facts = TerrainFacts(lengthMeters: 0, note: "The stored route cannot be read, so the facts cannot be worked out.")
                try StoredTrailFacts(tourId: tourId, model: terrain.fingerprint, facts: facts, computedAt: Date()).save(db)
                try db.execute(sql: "DELETE FROM trailFactsStale WHERE tourId = ?", arguments: [tourId])
                continue
            }
            if let tour {
                let waypoints = try Waypoint.inTour(tourId).fetchAll(db)
                let facts = TerrainFacts.compute(
                    route: tour.route,
                    waypoints: waypoints.map { ($0.id, RoutePoint(longitude: $0.longitude, latitude: $0.latitude)) },
                    terrain: terrain
                )
                try StoredTrailFacts(tourId: tourId, model: terrain.fingerprint, facts: facts, computedAt: Date()).save(db)
            }
            try db.execute(sql: "DELETE FROM trailFactsStale WHERE tourId = ?", arguments: [tourId])
        }
    }

    /// At start: facts worked out from another terrain model (or none) are listed again, then worked off. Returns how
    /// many tours' facts were worked out and how many routes the model does not cover.
    func refreshTrailFactsForTerrain() async throws -> (refreshed: Int, uncovered: Int) {
        let fingerprint = terrain.fingerprint
        // Listed, and the first batch worked out, in one write; the rest a batch per write.
        let listed = try await write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO trailFactsStale (tourId) SELECT tourId FROM trailFacts WHERE model != ?",
                arguments: [fingerprint]
            )
            return try Int.fetchOne(db, sql: "SELECT count(*) FROM trailFactsStale") ?? 0
        }
        try await workTrailFactsBacklog()
        let refreshed = listed
        let uncovered = try await read { db in
            try StoredTrailFacts.fetchAll(db).filter { $0.facts.note?.hasPrefix("The terrain model does not cover") == true }.count
        }
        return (refreshed, uncovered)
    }

    /// Works the stale list off, a batch per write, until it is empty; returns how many tours were done.
    @discardableResult
    func workTrailFactsBacklog() async throws -> Int {
        var done = 0
        while true {
            let left = try await read { try Int.fetchOne($0, sql: "SELECT count(*) FROM trailFactsStale") ?? 0 }
            guard left > 0 else { return done }
            // The write itself works a batch out before it commits (see `write`).
            try await write { _ in }
            done += min(left, Self.trailFactsPerWrite)
        }
    }

    func terrainFacts(tourId: Int64) async throws -> TerrainFacts? {
        try await read { try Self.terrainFacts($0, tourId: tourId) }
    }

    static func terrainFacts(_ db: Database, tourId: Int64) throws -> TerrainFacts? {
        try StoredTrailFacts.fetchOne(db, key: tourId)?.facts
    }

    /// Saves the ranger's accessibility fields, checked (``AccessibilityInput/validated()``), with the audit event.
    func setAccessibility(tourId: Int64, _ input: AccessibilityInput, actor: AuditActor) async throws -> Tour {
        let value = try input.validated()
        return try await write { db in
            var tour = try Self.editableTour(db, id: tourId)
            tour.accessSurface = value.surface
            tour.accessMinWidthCm = value.minWidthCm
            tour.accessStepFree = value.stepFree
            tour.accessNotes = value.notes
            try Self.saveChangedTour(db, &tour, actor: actor, action: .tourAccessibility, detail: value.summary)
            return tour
        }
    }
}

/// What a stop's surface is underfoot (`tour.accessSurface`; the schema's CHECK lists the same cases).
enum TrailSurface: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case paved, boardwalk, compacted, natural, mixed

    var label: String {
        switch self {
        case .paved: "Paved"
        case .boardwalk: "Boardwalk"
        case .compacted: "Compacted gravel or earth"
        case .natural: "Natural ground"
        case .mixed: "Mixed surfaces"
        }
    }
}

/// The accessibility fields as a form or a JSON body sends them: every field may be empty (not known). The width is
/// kept as sent (a number or text), so that "wide" is refused with the field's message rather than as unreadable JSON.
struct AccessibilityInput: Sendable, Decodable {
    var surface: String?
    var minWidthCm: String?
    var stepFree: Bool?
    var notes: String?

    init(surface: String? = nil, minWidthCm: String? = nil, stepFree: Bool? = nil, notes: String? = nil) {
        self.surface = surface
        self.minWidthCm = minWidthCm
        self.stepFree = stepFree
        self.notes = notes
    }

    enum CodingKeys: String, CodingKey { case surface, minWidthCm, stepFree, notes }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        surface = try container.decodeIfPresent(String.self, forKey: .surface)
        if let number = try? container.decodeIfPresent(Double.self, forKey: .minWidthCm) {
            minWidthCm = number == number.rounded() && abs(number) < 1e9 ? String(Int(number)) : String(number)
        } else {
            minWidthCm = try container.decodeIfPresent(String.self, forKey: .minWidthCm)
        }
        stepFree = try container.decodeIfPresent(Bool.self, forKey: .stepFree)
        notes = try container.decodeIfPresent(String.self, forKey: .notes)
    }

    struct Value: Sendable {
        var surface: TrailSurface?
        var minWidthCm: Int?
        var stepFree: Bool?
        var notes: String

        var summary: String {
            [
                surface.map { "surface \($0.rawValue)" }, minWidthCm.map { "narrowest \($0) cm" },
                stepFree.map { $0 ? "step-free" : "steps" },
            ]
            .compactMap { $0 }.joined(separator: ", ").nonEmpty ?? "not set"
        }
    }

    static let widthRange = 10...5000
    static let notesLimit = 2000

    /// The stored form, or every problem at once, each under its field's name.
    func validated() throws -> Value {
        var errors: [String: String] = [:]
        let trimmedSurface = surface?.trimmingCharacters(in: .whitespaces) ?? ""
        let parsedSurface = TrailSurface(rawValue: trimmedSurface)
        if !trimmedSurface.isEmpty, parsedSurface == nil {
            errors["surface"] = "The surface must be one of \(TrailSurface.allCases.map(\.rawValue).joined(separator: ", "))."
        }
        let widthText = (minWidthCm ?? "").trimmingCharacters(in: .whitespaces)
        let width = Int(widthText)
        if !widthText.isEmpty, width.map({ !Self.widthRange.contains($0) }) ?? true {
            errors["minWidthCm"] =
                "The narrowest width must be a whole number of centimetres, from \(Self.widthRange.lowerBound) to \(Self.widthRange.upperBound)."
        }
        let trimmedNotes = (notes ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmedNotes.count > Self.notesLimit {
            errors["notes"] = "The notes are \(trimmedNotes.count) characters; at most \(Self.notesLimit) are allowed."
        }
        guard errors.isEmpty else { throw ValidationErrors(errors) }
        return Value(surface: parsedSurface, minWidthCm: widthText.isEmpty ? nil : width, stepFree: stepFree, notes: trimmedNotes)
    }
}

extension Tour {
    /// The ranger's accessibility fields as the manifest and the API carry them; nil when none is set.
    var accessibility: TrailFacts.Accessibility? {
        guard accessSurface != nil || accessMinWidthCm != nil || accessStepFree != nil || !accessNotes.isEmpty else { return nil }
        return TrailFacts.Accessibility(
            surface: accessSurface?.rawValue,
            minWidthCm: accessMinWidthCm,
            stepFree: accessStepFree,
            notes: accessNotes.isEmpty ? nil : accessNotes
        )
    }
}

extension TrailFacts {
    /// The facts as shown and shipped: the ground's part, the walking time of today's rule, and the ranger's part.
    init(terrain: TerrainFacts, walkingMinutes: Int, accessibility: Accessibility?) {
        self.init(
            lengthMeters: terrain.lengthMeters,
            ascentMeters: terrain.ascentMeters,
            descentMeters: terrain.descentMeters,
            minElevationMeters: terrain.minElevationMeters,
            maxElevationMeters: terrain.maxElevationMeters,
            walkingMinutes: walkingMinutes,
            elevationSource: terrain.elevationSource,
            profile: terrain.profile,
            grades: terrain.grades,
            maxGradePercent: terrain.maxGradePercent,
            accessibility: accessibility
        )
    }
}
