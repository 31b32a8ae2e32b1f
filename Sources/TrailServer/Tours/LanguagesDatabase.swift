import Foundation
import GRDB

extension AppDatabase {
    /// Sets a tour's languages (the first is the default). Refused under `languages`, nothing changed:
    /// - removing a language whose texts or files are still there, unless `confirmRemoval` (then its texts go and its
    ///   files become "every language");
    /// - making a language the default while the tour or a waypoint has no name in it (its texts become the tour's
    ///   own, and the old default's move to the further languages).
    @discardableResult
    func setTourLanguages(tourId: Int64, _ choice: LanguageChoice, actor: AuditActor) async throws -> Tour {
        try await write { db in
            var tour = try Self.editableTour(db, id: tourId)
            guard choice.tags != tour.languages else { return tour }
            var waypoints = try Waypoint.inTour(tourId).fetchAll(db)
            let oldDefault = tour.defaultLanguage
            let newDefault = choice.tags[0]
            if newDefault != oldDefault {
                // The new default's texts become the tour's own: each must have a name in it.
                var missing: [String] = []
                if (tour.localized[newDefault]?.name ?? "").isEmpty { missing.append("the tour") }
                missing += waypoints.filter { ($0.localized[newDefault]?.name ?? "").isEmpty }.map { "“\($0.name)”" }
                if !missing.isEmpty {
                    throw ValidationErrors([
                        "languages":
                            "Write \(LanguageTag.english(newDefault)) names for \(missing.prefix(5).joined(separator: ", "))\(missing.count > 5 ? " and \(missing.count - 5) more" : "") before making it the default language."
                    ])
                }
            }
            // What the removed languages still hold.
            let removed = tour.languages.filter { !choice.tags.contains($0) }
            if !removed.isEmpty, !choice.confirmRemoval {
                var uses: [String] = []
                for tag in removed {
                    var holders: [String] = []
                    let texts =
                        tag == oldDefault
                        ? []
                        : ([tour.localized[tag]].compactMap { $0 }.filter { !$0.isEmpty }.map { _ in "the tour" }
                            + waypoints.filter { !($0.localized[tag]?.isEmpty ?? true) }.map { "“\($0.name)”" })
                    if tag == oldDefault { holders.append("the tour's own texts") }
                    if !texts.isEmpty {
                        holders.append("texts of \(texts.prefix(3).joined(separator: ", "))\(texts.count > 3 ? " and \(texts.count - 3) more" : "")")
                    }
                    let files =
                        try Int.fetchOne(
                            db,
                            sql: """
                                SELECT COUNT(*) FROM asset JOIN waypoint ON waypoint.id = asset.waypointId WHERE waypoint.tourId = ? AND asset.language = ?
                                """,
                            arguments: [tourId, tag]
                        ) ?? 0
                    if files > 0 { holders.append("\(files) file(s)") }
                    if !holders.isEmpty { uses.append("\(LanguageTag.english(tag)) still has \(holders.joined(separator: " and "))") }
                }
                if !uses.isEmpty {
                    throw ValidationErrors([
                        "languages": uses.joined(separator: "; ")
                            + ". Confirm the removal to delete those texts (the files then play in every language)."
                    ])
                }
            }
            if newDefault != oldDefault {
                // Swap: the new default's texts become the tour's own; the old default's become a further language's.
                let old = LocalizedText(name: tour.name, description: tour.description)
                let promoted = tour.localized[newDefault] ?? LocalizedText()
                tour.name = promoted.name
                tour.description = promoted.description
                tour.localized[newDefault] = nil
                tour.localized[oldDefault] = old
                for index in waypoints.indices {
                    let own = LocalizedText(name: waypoints[index].name, description: waypoints[index].description)
                    let next = waypoints[index].localized[newDefault] ?? LocalizedText()
                    waypoints[index].name = next.name
                    waypoints[index].description = next.description
                    waypoints[index].localized[newDefault] = nil
                    waypoints[index].localized[oldDefault] = own
                }
            }
            if newDefault != oldDefault {
                // Names are unique per tour (case-insensitively): two stops may not share a name in the new default.
                var seen = Set<String>()
                for waypoint in waypoints where !seen.insert(waypoint.name.lowercased()).inserted {
                    throw ValidationErrors([
                        "languages":
                            "Two waypoints would both be called “\(waypoint.name)” in \(LanguageTag.english(newDefault)); give them different names in it first."
                    ])
                }
                // Out of the unique index's way first, so names that trade places between languages do not collide midway.
                try db.execute(sql: "UPDATE waypoint SET name = char(1) || id WHERE tourId = ?", arguments: [tourId])
            }
            for tag in tour.localized.keys where !choice.tags.contains(tag) { tour.localized[tag] = nil }
            for index in waypoints.indices {
                for tag in waypoints[index].localized.keys where !choice.tags.contains(tag) { waypoints[index].localized[tag] = nil }
                try waypoints[index].update(db)
            }
            if !removed.isEmpty {
                try db.execute(
                    sql: """
                        UPDATE asset SET language = NULL WHERE language IN (SELECT value FROM json_each(?))
                        AND waypointId IN (SELECT id FROM waypoint WHERE tourId = ?)
                        """,
                    arguments: [String(decoding: try JSONEncoder().encode(removed), as: UTF8.self), tourId]
                )
            }
            let before = tour.languages
            tour.languages = choice.tags
            try Self.saveChangedTour(
                db,
                &tour,
                actor: actor,
                action: .tourLanguages,
                detail: "\(before.joined(separator: ", ")) → \(choice.tags.joined(separator: ", "))"
            )
            return tour
        }
    }

    /// The tour's name and description in one of its further languages (the default's are edited as the tour's own).
    /// Empty text is allowed (a translation not written yet, which the checklist names).
    @discardableResult
    func setTourText(tourId: Int64, language: String, _ text: LocalizedText, actor: AuditActor) async throws -> Tour {
        try await write { db in
            var tour = try Self.editableTour(db, id: tourId)
            let tag = try Self.furtherLanguage(language, of: tour)
            let text = try Self.checked(text)
            tour.localized[tag] = text.isEmpty ? nil : text
            try Self.saveChangedTour(db, &tour, actor: actor, action: .tourText, detail: "\(tag): \(text.name)")
            return tour
        }
    }

    /// A waypoint's name and description in one of the tour's further languages.
    @discardableResult
    func setWaypointText(
        tourId: Int64,
        waypointId: Int64,
        language: String,
        _ text: LocalizedText,
        actor: AuditActor
    ) async throws -> Waypoint {
        try await write { db in
            let tour = try Self.editableTour(db, id: tourId)
            guard var waypoint = try Waypoint.fetchOne(db, id: waypointId), waypoint.tourId == tourId else { throw NotFound() }
            let tag = try Self.furtherLanguage(language, of: tour)
            let text = try Self.checked(text)
            waypoint.localized[tag] = text.isEmpty ? nil : text
            waypoint.updatedAt = Date()
            try waypoint.update(db)
            try Self.changedWaypoint(db, tour: tour, waypointId: waypointId, actor: actor, action: .waypointText, detail: "\(tag): \(text.name)")
            return waypoint
        }
    }

    /// A file's language as sent: one of the tour's (as the list spells it), or nil (empty) for every language;
    /// refused under `language` otherwise.
    static func assetLanguage(_ language: String?, tour: Tour) throws -> String? {
        guard let language, !language.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
        guard let canonical = LanguageTag.canonical(language) else { throw ValidationErrors(["language": LanguageTag.refusal(language)]) }
        guard tour.languages.contains(canonical) else {
            throw ValidationErrors([
                "language": "“\(tour.name)” is not published in \(LanguageTag.english(canonical)); add the language to the tour first."
            ])
        }
        return canonical
    }

    /// A tag of one of the tour's further languages, as the list spells it; refused under `language` otherwise.
    static func furtherLanguage(_ raw: String, of tour: Tour) throws -> String {
        guard let tag = LanguageTag.canonical(raw) else { throw ValidationErrors(["language": LanguageTag.refusal(raw)]) }
        if tag == tour.defaultLanguage {
            throw ValidationErrors(["language": "\(LanguageTag.english(tag)) is the tour's default language: edit its texts on the tour's own form."])
        }
        guard tour.languages.contains(tag) else {
            throw ValidationErrors(["language": "“\(tour.name)” is not published in \(LanguageTag.english(tag)); add the language to the tour first."]
            )
        }
        return tag
    }

    static func checked(_ text: LocalizedText) throws -> LocalizedText {
        let checked = LocalizedText(name: text.name.trimmed, description: text.description.trimmed)
        var errors = ValidationErrors()
        if checked.name.count > 120 { errors["name"] = "Enter a name of at most 120 characters." }
        if checked.description.count > 20_000 { errors["description"] = "Keep the description under 20,000 characters." }
        try errors.throwIfAny()
        return checked
    }

    /// What the further languages lack, one line per language and place: a missing name, or a description missing
    /// where the default language has one. Warnings, or refusals when the site requires complete languages.
    static func languageGaps(tour: Tour, waypoints: [Waypoint]) -> [String] {
        tour.furtherLanguages.flatMap { tag -> [String] in
            let language = LanguageTag.english(tag)
            func missing(_ own: (name: String, description: String), _ text: LocalizedText?) -> String? {
                let name = (text?.name ?? "").isEmpty
                let description = !own.description.isEmpty && (text?.description ?? "").isEmpty
                switch (name, description) {
                case (true, true): return "its name and description"
                case (true, false): return "its name"
                case (false, true): return "its description"
                case (false, false): return nil
                }
            }
            var lines: [String] = []
            if let gap = missing((tour.name, tour.description), tour.localized[tag]) { lines.append("\(language): the tour lacks \(gap).") }
            for waypoint in waypoints {
                if let gap = missing((waypoint.name, waypoint.description), waypoint.localized[tag]) {
                    lines.append("\(language): waypoint “\(waypoint.name)” lacks \(gap).")
                }
            }
            return lines
        }
    }
}
