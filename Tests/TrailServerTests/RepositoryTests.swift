import Foundation
import Testing

/// The repository stands alone: someone who clones only it must be able to follow every link in its Markdown and every
/// pointer in its code. These checks read the files as they are in the working tree.
struct RepositoryTests {
    @Test func everyRelativeLinkAndAnchorInTheMarkdownResolves() throws {
        let files = try Repository.files(withExtensions: ["md"])
        #expect(files.count >= 7, "README.md, BENCHMARKS.md and the guides in docs/: found \(files.map(\.path))")
        var broken: [String] = []
        var checked = 0
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for link in Markdown.links(in: text) {
                guard let problem = Markdown.problem(with: link, from: file) else {
                    checked += 1
                    continue
                }
                broken.append("\(Repository.relative(file)): \(link): \(problem)")
            }
        }
        #expect(broken.isEmpty, "\(broken.joined(separator: "\n"))")
        #expect(checked > 20, "so few links checked that the parser is probably broken: \(checked)")
    }

    @Test func theLinkCheckerFindsWhatIsBroken() throws {
        let readme = Repository.root.appendingPathComponent("README.md")
        #expect(Markdown.problem(with: "docs/no-such-guide.md", from: readme) != nil)
        #expect(Markdown.problem(with: "#no-such-heading-anywhere", from: readme) != nil)
        #expect(Markdown.problem(with: "docs/security.md#no-such-heading-anywhere", from: readme) != nil)
        #expect(Markdown.problem(with: "https://example.org/#anything", from: readme) == nil, "outside links are not fetched")
        #expect(Markdown.slug("Backup and restore") == "backup-and-restore")
        #expect(Markdown.slug("`trail-companion`: the CLI, step 2!") == "trail-companion-the-cli-step-2")
        #expect(Markdown.links(in: "[a](x.md) ![b](y.png \"t\") `[c](z.md)`\n```\n[d](w.md)\n```") == ["x.md", "y.png"])
    }

    /// Comments, test names and documents point only at what is in the repository: no work-tracker numbers, no design
    /// file that was never here, no sibling folder.
    @Test func nothingPointsOutsideTheRepository() throws {
        let design = "DESIGN" + ".md"
        let patterns = [
            #"#[0-9]+ item"#, #"[Ii]tem [0-9]+ of #[0-9]+"#, #"[Ii]ssue #?[0-9]+"#, #"\.\./shared"#,
            NSRegularExpression.escapedPattern(for: design),
        ].map { try! NSRegularExpression(pattern: $0) }
        let files = try Repository.files(withExtensions: ["swift", "md", "sh", "py", "mustache", "js", "css", "sql", "yaml", "conf", "service"])
        #expect(files.count > 100)
        var found: [String] = []
        for file in files where file.lastPathComponent != "RepositoryTests.swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            let range = NSRange(text.startIndex..., in: text)
            for pattern in patterns {
                for match in pattern.matches(in: text, range: range) {
                    let line = text[..<Range(match.range, in: text)!.lowerBound].filter { $0 == "\n" }.count + 1
                    found.append("\(Repository.relative(file)):\(line): \((text as NSString).substring(with: match.range))")
                }
            }
        }
        #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
    }
}

enum Repository {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Tracked-looking files: everything under the root except build folders, virtual environments and data.
    static func files(withExtensions extensions: Set<String>) throws -> [URL] {
        let skipped: Set<String> = [".git", "data", "node_modules", "__pycache__", ".pytest_cache", "fuzz-artifacts", "corpus"]
        var result: [URL] = []
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isDirectoryKey], options: [])!
        for case let url as URL in enumerator {
            let name = url.lastPathComponent
            if (try url.resourceValues(forKeys: [.isDirectoryKey])).isDirectory == true {
                if skipped.contains(name) || name.hasPrefix(".build") || name.hasPrefix(".venv") || name.hasPrefix(".swiftpm") {
                    enumerator.skipDescendants()
                }
                continue
            }
            if extensions.contains(url.pathExtension) { result.append(url) }
        }
        return result.sorted { $0.path < $1.path }
    }

    static func relative(_ url: URL) -> String {
        String(url.standardizedFileURL.path.dropFirst(root.standardizedFileURL.path.count + 1))
    }
}

/// Just enough Markdown to check links the way GitHub renders them.
enum Markdown {
    /// Link and image targets outside code spans and fenced code blocks.
    static func links(in text: String) -> [String] {
        var result: [String] = []
        var inFence = false
        let link = try! NSRegularExpression(pattern: #"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)"#)
        let html = try! NSRegularExpression(pattern: #"<(?:img|a)\s[^>]*(?:src|href)="([^"]+)""#)
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                inFence.toggle()
                continue
            }
            if inFence { continue }
            let visible = withoutCodeSpans(String(line))
            let range = NSRange(visible.startIndex..., in: visible)
            for pattern in [link, html] {
                for match in pattern.matches(in: visible, range: range) {
                    result.append((visible as NSString).substring(with: match.range(at: 1)))
                }
            }
        }
        return result
    }

    /// What is wrong with a link from `file`, or nil when its file (and anchor) exist. Links with a scheme are not fetched.
    static func problem(with link: String, from file: URL) -> String? {
        if link.contains("://") || link.hasPrefix("mailto:") { return nil }
        let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let path = parts[0].removingPercentEncoding ?? parts[0]
        let target = path.isEmpty ? file : file.deletingLastPathComponent().appendingPathComponent(path).standardizedFileURL
        guard target.path.hasPrefix(Repository.root.standardizedFileURL.path) else { return "points outside the repository" }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: target.path, isDirectory: &isDirectory) else { return "no such file" }
        guard parts.count == 2, !parts[1].isEmpty else { return nil }
        guard target.pathExtension == "md", let text = try? String(contentsOf: target, encoding: .utf8) else {
            return "an anchor into a file that is not Markdown"
        }
        return anchors(in: text).contains(parts[1].lowercased()) ? nil : "no heading or anchor \"\(parts[1])\" in \(target.lastPathComponent)"
    }

    /// GitHub's heading ids (with -1, -2 … for repeats) and explicit `<a id>`/`<a name>` anchors.
    static func anchors(in text: String) -> Set<String> {
        var result: Set<String> = []
        var seen: [String: Int] = [:]
        var inFence = false
        let explicit = try! NSRegularExpression(pattern: #"<a\s+(?:id|name)="([^"]+)""#)
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                inFence.toggle()
                continue
            }
            if inFence { continue }
            let string = String(line)
            for match in explicit.matches(in: string, range: NSRange(string.startIndex..., in: string)) {
                result.insert((string as NSString).substring(with: match.range(at: 1)).lowercased())
            }
            guard string.hasPrefix("#") else { continue }
            let heading = string.drop { $0 == "#" }
            guard heading.first == " " else { continue }
            let base = slug(String(heading))
            let count = seen[base, default: 0]
            seen[base] = count + 1
            result.insert(count == 0 ? base : "\(base)-\(count)")
        }
        return result
    }

    static func slug(_ heading: String) -> String {
        let text = heading.trimmingCharacters(in: .whitespaces).lowercased()
        var slug = ""
        for character in text {
            if character == " " {
                slug.append("-")
            } else if character == "-" || character == "_" || character.isLetter || character.isNumber {
                slug.append(character)
            }
        }
        return slug
    }

    private static func withoutCodeSpans(_ line: String) -> String {
        var result = ""
        var inCode = false
        for character in line {
            if character == "`" {
                inCode.toggle()
                continue
            }
            if !inCode { result.append(character) }
        }
        return result
    }
}
