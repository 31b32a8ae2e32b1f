import Foundation

/// The languages a tour can be published in: BCP 47 tags from a fixed list (what park agencies publish in, in the
/// US first: Spanish, the languages of large visitor groups, and Native languages of the land), each with its English
/// name and its own. A tag outside the list is refused with a message, so a typo (`sp`, `en_US`) never ships.
enum LanguageTag {
    struct Known: Sendable {
        let tag: String
        let english: String
        let native: String
    }

    static let known: [Known] = [
        .init(tag: "en", english: "English", native: "English"),
        .init(tag: "en-GB", english: "English (UK)", native: "English (UK)"),
        .init(tag: "es", english: "Spanish", native: "Español"),
        .init(tag: "es-MX", english: "Spanish (Mexico)", native: "Español (México)"),
        .init(tag: "fr", english: "French", native: "Français"),
        .init(tag: "fr-CA", english: "French (Canada)", native: "Français (Canada)"),
        .init(tag: "de", english: "German", native: "Deutsch"),
        .init(tag: "it", english: "Italian", native: "Italiano"),
        .init(tag: "pt", english: "Portuguese", native: "Português"),
        .init(tag: "pt-BR", english: "Portuguese (Brazil)", native: "Português (Brasil)"),
        .init(tag: "nl", english: "Dutch", native: "Nederlands"),
        .init(tag: "sv", english: "Swedish", native: "Svenska"),
        .init(tag: "da", english: "Danish", native: "Dansk"),
        .init(tag: "nb", english: "Norwegian", native: "Norsk bokmål"),
        .init(tag: "fi", english: "Finnish", native: "Suomi"),
        .init(tag: "pl", english: "Polish", native: "Polski"),
        .init(tag: "cs", english: "Czech", native: "Čeština"),
        .init(tag: "ru", english: "Russian", native: "Русский"),
        .init(tag: "uk", english: "Ukrainian", native: "Українська"),
        .init(tag: "el", english: "Greek", native: "Ελληνικά"),
        .init(tag: "tr", english: "Turkish", native: "Türkçe"),
        .init(tag: "ar", english: "Arabic", native: "العربية"),
        .init(tag: "he", english: "Hebrew", native: "עברית"),
        .init(tag: "fa", english: "Persian", native: "فارسی"),
        .init(tag: "hi", english: "Hindi", native: "हिन्दी"),
        .init(tag: "zh-Hans", english: "Chinese (Simplified)", native: "简体中文"),
        .init(tag: "zh-Hant", english: "Chinese (Traditional)", native: "繁體中文"),
        .init(tag: "ja", english: "Japanese", native: "日本語"),
        .init(tag: "ko", english: "Korean", native: "한국어"),
        .init(tag: "vi", english: "Vietnamese", native: "Tiếng Việt"),
        .init(tag: "tl", english: "Tagalog", native: "Tagalog"),
        .init(tag: "th", english: "Thai", native: "ไทย"),
        .init(tag: "km", english: "Khmer", native: "ខ្មែរ"),
        .init(tag: "hmn", english: "Hmong", native: "Hmoob"),
        .init(tag: "so", english: "Somali", native: "Soomaali"),
        .init(tag: "ht", english: "Haitian Creole", native: "Kreyòl ayisyen"),
        .init(tag: "sm", english: "Samoan", native: "Gagana Sāmoa"),
        .init(tag: "haw", english: "Hawaiian", native: "ʻŌlelo Hawaiʻi"),
        .init(tag: "nv", english: "Navajo", native: "Diné bizaad"),
        .init(tag: "chr", english: "Cherokee", native: "ᏣᎳᎩ"),
        .init(tag: "lkt", english: "Lakota", native: "Lakȟótiyapi"),
        .init(tag: "oj", english: "Ojibwe", native: "Anishinaabemowin"),
    ]

    static let byLowercasedTag: [String: Known] = Dictionary(uniqueKeysWithValues: known.map { ($0.tag.lowercased(), $0) })

    /// The list's spelling of a tag typed in any case (`ES`, `fr-ca`), or nil when it is not on the list.
    static func canonical(_ raw: String) -> String? {
        byLowercasedTag[raw.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "_", with: "-").lowercased()]?.tag
    }

    /// "Spanish (Español)"; the tag itself for one not on the list.
    static func label(_ tag: String) -> String {
        guard let known = byLowercasedTag[tag.lowercased()] else { return tag }
        return known.english == known.native ? known.english : "\(known.english) (\(known.native))"
    }

    /// The further language (not the first of `languages`) a page was asked for (`?lang=`), as the list spells it;
    /// nil for none, the default, or a language the tour or package does not have.
    static func further(_ raw: String?, of languages: [String]) -> String? {
        raw.flatMap(canonical).flatMap { languages.dropFirst().contains($0) ? $0 : nil }
    }

    static func english(_ tag: String) -> String { byLowercasedTag[tag.lowercased()]?.english ?? tag }

    /// Why a tag is refused: malformed (not letters, digits and hyphens) or simply not on the list.
    static func refusal(_ raw: String) -> String {
        let wellFormed =
            !raw.isEmpty && raw.count <= 35 && raw.allSatisfy { ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "-" }
            && !raw.hasPrefix("-") && !raw.hasSuffix("-") && !raw.contains("--")
        return wellFormed
            ? "“\(raw)” is not a language this server offers; choose one from the list (for example en, es, fr-CA)."
            : "“\(raw)” is not a language tag: use a BCP 47 tag such as en, es or fr-CA."
    }
}

/// A name and description in one further language (the default language's are the tour's or waypoint's own).
struct LocalizedText: Codable, Sendable, Equatable {
    var name: String
    var description: String

    init(name: String = "", description: String = "") {
        self.name = name
        self.description = description
    }

    var isEmpty: Bool { name.isEmpty && description.isEmpty }
}

/// A tour's languages as a ranger edits them: the default first, then the others in the order chosen.
struct LanguageChoice: Sendable, Equatable {
    let tags: [String]
    /// Removing a language that still has texts or files deletes those texts (and makes the files "all languages")
    /// only when this is true; otherwise the change is refused naming what uses it.
    var confirmRemoval = false

    /// Checks and normalises raw tags: each on the list, no repeats, at least one. Errors under `languages`.
    static func parse(_ raw: [String], confirmRemoval: Bool) -> (LanguageChoice?, String?) {
        var tags: [String] = []
        for value in raw.map({ $0.trimmingCharacters(in: .whitespaces) }) where !value.isEmpty {
            guard let tag = LanguageTag.canonical(value) else { return (nil, LanguageTag.refusal(value)) }
            if tags.contains(tag) { return (nil, "\(LanguageTag.english(tag)) is listed twice.") }
            tags.append(tag)
        }
        guard !tags.isEmpty else { return (nil, "Choose the tour's language.") }
        guard tags.count <= 10 else { return (nil, "A tour can have at most 10 languages.") }
        return (LanguageChoice(tags: tags, confirmRemoval: confirmRemoval), nil)
    }
}

extension String {
    /// Nil for an empty string: `text.nonEmpty ?? fallback`.
    var nonEmpty: String? { isEmpty ? nil : self }
}
