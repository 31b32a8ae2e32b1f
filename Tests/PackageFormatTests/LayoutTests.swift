import Foundation
import PackageFormat
import TestSupport
import Testing

@Suite("PackageLayout")
struct LayoutTests {
    static let hostileNames: [String] = [
        "../../x", "..", ".", "...", "/etc/passwd", "C:\\Windows\\System32\\evil.exe", "a\\..\\..\\b",
        "CON", "con.txt", "NUL", "Com1.mp4", "lpt9", "aux.tar.gz",
        "name\u{0}with-nul.jpg", "tab\there\nnewline.mp3", "\u{202E}gnp.exe", "zero\u{200B}width.png",
        String(repeating: "é", count: 200), String(repeating: "日本語", count: 70) + ".mp4",
        "🦌🌲", "🦌.jpg", "", "   ", ".hidden", "..jpg", "photo.", "archive.tar.gz", "my photo (1).JPG",
        "Straße der Ærø Ølkøbing", "Łódź Þingvellir", "Devil's Punchbowl", "  spaced  out  ",
        String(repeating: "a", count: 300) + "." + String(repeating: "b", count: 50),
    ]

    @Test func slugExamples() {
        #expect(PackageLayout.slug("Fish Lake") == "fish-lake")
        #expect(PackageLayout.slug("Café Ñandú Overlook") == "cafe-nandu-overlook")
        #expect(PackageLayout.slug("Straße der Ærø") == "strasse-der-aero")
        #expect(PackageLayout.slug("Łódź -- Þingvellir!!") == "lodz-thingvellir")
        #expect(PackageLayout.slug("Devil's Punchbowl") == "devils-punchbowl")
        #expect(PackageLayout.slug("../../x") == "x")
        #expect(PackageLayout.slug("  --Upper  CASE--  ") == "upper-case")
        #expect(PackageLayout.slug("Ｆｕｌｌ ｗｉｄｔｈ") == "full-width")
    }

    @Test func slugFallsBackWhenNothingIsLeft() {
        #expect(PackageLayout.slug("") == "waypoint")
        #expect(PackageLayout.slug("🦌🌲") == "waypoint")
        #expect(PackageLayout.slug("../..//\\") == "waypoint")
        #expect(PackageLayout.slug("\u{0}\u{1}\u{7F}") == "waypoint")
    }

    @Test func slugIsTruncatedWithoutTrailingHyphen() {
        let long = PackageLayout.slug(String(repeating: "é", count: 200))
        #expect(long == String(repeating: "e", count: 60))
        // Cut right after a word: no trailing hyphen.
        let words = PackageLayout.slug(String(repeating: "abcd ", count: 30))
        #expect(words.count <= 60)
        #expect(!words.hasSuffix("-"))
        #expect(words.hasPrefix("abcd-abcd-"))
    }

    @Test(arguments: hostileNames)
    func slugInvariants(_ name: String) {
        let slug = PackageLayout.slug(name)
        #expect(!slug.isEmpty && slug.count <= 60)
        #expect(slug.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" })
        #expect(!slug.hasPrefix("-") && !slug.hasSuffix("-") && !slug.contains("--"))
    }

    @Test func waypointFolders() {
        #expect(PackageLayout.waypointFolder(order: 1, name: "Fish Lake") == "waypoints/01-fish-lake")
        #expect(PackageLayout.waypointFolder(order: 12, name: "../../etc") == "waypoints/12-etc")
        #expect(PackageLayout.waypointFolder(order: 123, name: "🦌") == "waypoints/123-waypoint")
        #expect(PackageLayout.waypointFolder(order: 0, name: "Start") == "waypoints/00-start")
        for name in Self.hostileNames {
            let folder = PackageLayout.waypointFolder(order: 3, name: name)
            #expect(PackageLayout.isSafeEntryPath(folder), "\(folder.debugDescription)")
            #expect(folder.split(separator: "/").count == 2)
        }
    }

    @Test func safeFileNameExamples() {
        #expect(PackageLayout.safeFileName("intro.mp4", fallbackExtension: "bin") == "intro.mp4")
        #expect(PackageLayout.safeFileName("My Photo (1).JPG", fallbackExtension: "jpg") == "my-photo-1.jpg")
        #expect(PackageLayout.safeFileName("../../etc/passwd", fallbackExtension: "txt") == "passwd.txt")
        #expect(PackageLayout.safeFileName("C:\\Windows\\System32\\evil.exe", fallbackExtension: "bin") == "evil.exe")
        #expect(PackageLayout.safeFileName("CON", fallbackExtension: "txt") == "con-file.txt")
        #expect(PackageLayout.safeFileName("nul.mp3", fallbackExtension: "mp3") == "nul-file.mp3")
        #expect(PackageLayout.safeFileName("COM1.jpg", fallbackExtension: "jpg") == "com1-file.jpg")
        #expect(PackageLayout.safeFileName(".htaccess", fallbackExtension: "txt") == "htaccess.txt")
        #expect(PackageLayout.safeFileName("🦌.jpg", fallbackExtension: "jpg") == "file.jpg")
        #expect(PackageLayout.safeFileName("", fallbackExtension: "mp4") == "file.mp4")
        #expect(PackageLayout.safeFileName("name\u{0}.jpg", fallbackExtension: "bin") == "name.jpg")
        #expect(PackageLayout.safeFileName("clip.m$v", fallbackExtension: "MP4") == "clip.mp4")
        #expect(PackageLayout.safeFileName("clip", fallbackExtension: "../x") == "clip.bin")
        #expect(PackageLayout.safeFileName("archive.tar.gz", fallbackExtension: "bin") == "archive-tar.gz")
        #expect(PackageLayout.safeFileName("Café Ñandú.WAV", fallbackExtension: "wav") == "cafe-nandu.wav")
    }

    @Test(arguments: hostileNames)
    func safeFileNameInvariants(_ name: String) {
        let safe = PackageLayout.safeFileName(name, fallbackExtension: "jpg")
        #expect(safe.count <= 100, "\(safe)")
        #expect(PackageLayout.isSafeEntryPath(safe), "\(safe.debugDescription)")
        #expect(!safe.contains("/") && !safe.contains("\\") && !safe.contains(".."))
        #expect(!safe.hasPrefix("."))
        #expect(safe.unicodeScalars.allSatisfy { $0.isASCII && $0.value > 0x20 && $0.value < 0x7F })
        let stem = safe.split(separator: ".").first.map(String.init) ?? ""
        #expect(!["con", "prn", "aux", "nul", "com1", "lpt9"].contains(stem))
        #expect(safe.split(separator: ".").count == 2, "exactly one dot: \(safe)")
    }

    @Test func safeFileNameFuzz() {
        // Random strings over an alphabet of troublemakers keep every invariant.
        let alphabet: [Character] = [
            ".", "/", "\\", ":", "\u{0}", "\n", "\u{7F}", "\u{202E}", " ", "é", "ß", "🦌", "C", "O", "N", "a", "1", "_", "-", "*",
        ]
        var random = SeededBytes(seed: 42)
        for _ in 0..<2000 {
            let length = Int(random.next() % 40)
            let name = String((0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] })
            let safe = PackageLayout.safeFileName(name, fallbackExtension: "bin")
            #expect(
                PackageLayout.isSafeEntryPath(safe) && !safe.hasPrefix(".") && safe.count <= 100,
                "\(name.debugDescription) -> \(safe.debugDescription)"
            )
        }
    }

    @Test(arguments: [
        "manifest.json", "waypoints/01-fish-lake/intro.mp4", "tiles/map.mbtiles", "a/b/c/d.txt",
        "waypoints/02-café/été.jpg", "file..name.txt", "x.y",
    ])
    func safeEntryPaths(_ path: String) {
        #expect(PackageLayout.isSafeEntryPath(path))
    }

    @Test(arguments: [
        "", "/", "/etc/passwd", "../x", "a/../b", "a/..", "..", ".", "./a", "a/./b", "a//b", "a/", "//server/share",
        "a\\b", "..\\x", "C:/x", "C:x", "a\u{0}b", "a\nb", "a\rb", "a\u{1B}b", "a\u{85}b", "a\u{202E}b", "a\u{200B}b",
        "a\u{2028}b", "...", "a/.../b", String(repeating: "a", count: 1025),
    ])
    func unsafeEntryPaths(_ path: String) {
        #expect(!PackageLayout.isSafeEntryPath(path), "\(path.debugDescription)")
    }

    @Test func compressionChoices() {
        for mime in [
            "text/plain", "text/plain; charset=utf-8", "TEXT/HTML", "application/json", "application/geo+json",
            "application/vnd.sqlite3", "application/x-mbtiles", "audio/wav", "audio/x-wav", "image/svg+xml",
            "application/gpx+xml", "image/bmp",
        ] {
            #expect(PackageLayout.shouldDeflate(mimeType: mime), "\(mime)")
        }
        for mime in [
            "video/mp4", "video/quicktime", "audio/mpeg", "audio/aac", "audio/ogg", "audio/flac", "image/jpeg",
            "image/png", "image/webp", "image/gif", "image/heic", "application/octet-stream", "application/pdf",
            "garbage", "",
        ] {
            #expect(!PackageLayout.shouldDeflate(mimeType: mime), "\(mime)")
        }
    }
}
