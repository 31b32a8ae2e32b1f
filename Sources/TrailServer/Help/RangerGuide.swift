import Foundation
import Ink

/// The rangers' guide (`docs/rangers.md`), rendered once into the panel's help page. The guide in the repository is the
/// one text: the panel shows it, so what a ranger reads next to a page is what the repository documents.
struct RangerGuide: Sendable {
    /// The guide as HTML; every heading carries the id GitHub gives it, so `/help#anchor` and `docs/rangers.md#anchor`
    /// name the same section.
    let html: String
    /// The ids of the guide's headings.
    let anchors: Set<String>

    /// nil when the file is missing: the panel then links to no help instead of failing to start.
    static func load(from file: URL) -> RangerGuide? {
        guard let markdown = try? String(contentsOf: file, encoding: .utf8) else { return nil }
        return RangerGuide(markdown: markdown)
    }

    init(markdown: String) {
        var parser = MarkdownParser()
        var seen: [String: Int] = [:]
        var anchors: Set<String> = []
        // Ink writes bare <hN> tags; the id is added here with GitHub's rule (repeats get -1, -2 …).
        parser.addModifier(
            Modifier(target: .headings) { html, markdown in
                let title = markdown.drop { $0 == "#" }
                let base = RangerGuide.slug(String(title))
                let count = seen[base, default: 0]
                seen[base] = count + 1
                let id = count == 0 ? base : "\(base)-\(count)"
                anchors.insert(id)
                guard html.hasPrefix("<h"), let close = html.firstIndex(of: ">") else { return html }
                return String(html[..<close]) + " id=\"\(id)\"" + String(html[close...])
            }
        )
        // The guide's pictures live beside it in docs/screenshots; the help page serves them under /help/.
        parser.addModifier(
            Modifier(target: .images) { html, _ in
                html.replacingOccurrences(of: "src=\"screenshots/", with: "src=\"/help/screenshots/")
            }
        )
        self.html = parser.html(from: markdown)
        self.anchors = anchors
    }

    /// GitHub's heading id: lower case, spaces to hyphens, everything but letters, digits, `-` and `_` dropped.
    static func slug(_ heading: String) -> String {
        var slug = ""
        for character in heading.trimmingCharacters(in: .whitespaces).lowercased() {
            if character == " " {
                slug.append("-")
            } else if character == "-" || character == "_" || character.isLetter || character.isNumber {
                slug.append(character)
            }
        }
        return slug
    }

    /// The guide's section for each panel page, by template name. A page without its own section opens the guide's top.
    static let sections: [String: String] = [
        "login": "signing-in",
        "password": "signing-in",
        "two-step": "two-step-sign-in",
        "two-step-code": "two-step-sign-in",
        "two-step-enrol": "two-step-sign-in",
        "two-step-codes": "two-step-sign-in",
        "tokens": "api-tokens",
        "home": "sites",
        "site": "tours-list",
        "members": "site-members",
        "site-settings": "home-area-and-time-zone",
        "invitations": "inviting-your-team",
        "invitation": "inviting-your-team",
        "alerts": "alerts-and-closures",
        "tour-alerts": "alerts-and-closures",
        "stats": "visitor-statistics",
        "notifications": "email-notifications",
        "admin-email": "for-admins",
        "tour-form": "creating-a-tour",
        "tour": "the-tour-page",
        "tour-status": "the-tour-page",
        "tour-publishing": "the-tour-page",
        "tour-duration": "route-and-duration",
        "trail-facts": "trail-facts",
        "tour-tiles": "offline-map-tiles",
        "waypoint": "waypoints-and-media",
        "import-preview": "importing-and-exporting",
        "reviews": "reviewing-a-tour",
        "request": "reviewing-a-tour",
        "package-preview": "reviewing-a-tour",
        "package": "releasing-and-updating",
        "admin-users": "for-admins",
        "admin-sites": "for-admins",
        "admin-site-edit": "for-admins",
        "admin-tiles": "offline-map-tiles",
        "admin-audit": "for-admins",
    ]

    /// Where the "Help" link of a page goes: its section when the guide has it, else the guide's top.
    func link(forTemplate template: String) -> String {
        guard let section = Self.sections[template], anchors.contains(section) else { return "/help" }
        return "/help#\(section)"
    }
}
