import Foundation
import GRDB

/// Captions and transcripts: what role a companion file plays for its media file, and the checks its text must pass
/// before it is stored. Both are small text files read whole (at most ``maxSize``), on the thread pool.
enum CompanionRole: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    /// WebVTT cues shown over a video (WCAG 1.2.2); optional for audio.
    case captions
    /// The words of an audio file (WCAG 1.2.1), as plain text or WebVTT.
    case transcript

    /// Which media kinds take this role, and how a ranger reads it.
    func accepts(_ kind: AssetKind) -> Bool {
        switch self {
        case .captions: kind == .video || kind == .audio
        case .transcript: kind == .audio || kind == .video
        }
    }

    var label: String { self == .captions ? "captions" : "transcript" }

    /// What a file of this kind gets instead, for the refusal's message.
    static func refusal(_ role: CompanionRole, for kind: AssetKind) -> String {
        switch kind {
        case .image: "An image gets alt text, not \(role == .captions ? "captions" : "a transcript"): describe it in its alt text field."
        case .text: "A text file needs no \(role.label): its words are already text."
        case .video, .audio: "A \(kind.rawValue) file takes \(role.label)."
        }
    }
}

/// A refused caption or transcript file: the sentence says what is wrong in the ranger's words (with a line number
/// where there is one). 422 on the `file` field.
struct CompanionTextProblem: Error, Equatable {
    let message: String
}

enum CompanionText {
    /// Caption and transcript files are text: 4 MiB holds many hours of cues.
    static let maxSize: Int64 = 4 << 20

    /// The MIME type a valid file is stored and packaged under.
    enum Format: Equatable {
        case webVTT
        case plainText
        var mimeType: String { self == .webVTT ? "text/vtt" : "text/plain" }
        var fileExtension: String { self == .webVTT ? "vtt" : "txt" }
    }

    /// Captions must be WebVTT; a transcript may be WebVTT (checked as such when it says so) or plain UTF-8 text.
    static func check(_ data: Data, role: CompanionRole) throws(CompanionTextProblem) -> Format {
        guard !data.isEmpty else { throw CompanionTextProblem(message: "The file is empty.") }
        guard let text = String(validating: data, as: UTF8.self) else {
            throw CompanionTextProblem(
                message: "The file is not UTF-8 text. Save it as UTF-8 (most editors offer “UTF-8” under “Save as”) and upload it again."
            )
        }
        if looksLikeHTML(text) {
            throw CompanionTextProblem(
                message: "This is an HTML page, not \(role == .captions ? "WebVTT captions" : "a transcript"), whatever its name says."
            )
        }
        if role == .captions || startsWithWebVTTSignature(text) {
            try WebVTT.validate(text)
            return .webVTT
        }
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw CompanionTextProblem(message: "The transcript has no text.")
        }
        if text.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\n" && $0 != "\r" && $0 != "\t" }) {
            throw CompanionTextProblem(message: "The transcript holds control characters, so it is not plain text.")
        }
        return .plainText
    }

    static func startsWithWebVTTSignature(_ text: String) -> Bool {
        (text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text).hasPrefix("WEBVTT")
    }

    static func looksLikeHTML(_ text: String) -> Bool {
        let start = text.prefix(512).drop { $0.isWhitespace || $0 == "\u{FEFF}" }.lowercased()
        return start.hasPrefix("<!doctype html") || start.hasPrefix("<html") || start.hasPrefix("<head") || start.hasPrefix("<body")
            || (start.hasPrefix("<") && start.contains("<script"))
    }
}

/// The parts of the WebVTT spec (W3C, "WebVTT: The Web Video Text Tracks Format") a player depends on: the signature
/// line, blocks separated by blank lines, and cues whose timing lines parse, end after they start and start in order.
enum WebVTT {
    struct Cue: Equatable {
        let start: Double
        let end: Double
        let line: Int
    }

    /// Throws the first problem, naming its line; returns the cues.
    @discardableResult
    static func validate(_ text: String) throws(CompanionTextProblem) -> [Cue] {
        var body = text
        if body.hasPrefix("\u{FEFF}") { body.removeFirst() }
        // Line terminators: CRLF, CR or LF.
        let lines = body.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let first = lines.first, first.hasPrefix("WEBVTT"),
            first.count == 6 || first.dropFirst(6).first == " " || first.dropFirst(6).first == "\t"
        else {
            throw CompanionTextProblem(message: "Line 1 must be “WEBVTT”: this is not a WebVTT caption file.")
        }
        if lines.contains(where: { $0.contains("\u{0}") }) {
            throw CompanionTextProblem(message: "The file holds a NUL character, which WebVTT does not allow.")
        }
        var cues: [Cue] = []
        var index = 1
        // The header runs to the first blank line.
        while index < lines.count, !lines[index].isEmpty {
            if lines[index].contains("-->") {
                throw CompanionTextProblem(message: "Line \(index + 1): leave a blank line between “WEBVTT” and the first cue.")
            }
            index += 1
        }
        while index < lines.count {
            // Skip blank lines between blocks.
            while index < lines.count, lines[index].isEmpty { index += 1 }
            guard index < lines.count else { break }
            let blockStart = index
            var block: [String] = []
            while index < lines.count, !lines[index].isEmpty {
                block.append(lines[index])
                index += 1
            }
            let head = block[0]
            if head == "NOTE" || head.hasPrefix("NOTE ") || head.hasPrefix("NOTE\t") {
                if block.contains(where: { $0.contains("-->") }) {
                    throw CompanionTextProblem(
                        message: "Line \(blockStart + 1): a NOTE may not contain “-->”; leave a blank line before the next cue."
                    )
                }
                continue
            }
            if cues.isEmpty, head == "STYLE" || head == "REGION" { continue }
            // A cue: an optional identifier line, then the timing line.
            var timingOffset = 0
            if !head.contains("-->") {
                guard block.count > 1, block[1].contains("-->") else {
                    throw CompanionTextProblem(
                        message:
                            "Line \(blockStart + 1): “\(Self.excerpt(head))” is neither a cue timing (00:00:01.000 --> 00:00:04.000) nor a cue's name followed by one."
                    )
                }
                timingOffset = 1
            }
            let lineNumber = blockStart + timingOffset + 1
            let (start, end) = try timing(block[timingOffset], line: lineNumber)
            guard end > start else {
                throw CompanionTextProblem(
                    message: "Line \(lineNumber): the cue ends (\(Self.format(end))) before it starts (\(Self.format(start)))."
                )
            }
            if let previous = cues.last, start < previous.start {
                throw CompanionTextProblem(
                    message:
                        "Line \(lineNumber): this cue starts at \(Self.format(start)), before the one on line \(previous.line) (\(Self.format(previous.start))): cue times must not go backwards."
                )
            }
            if block.dropFirst(timingOffset + 1).contains(where: { $0.contains("-->") }) {
                throw CompanionTextProblem(message: "Line \(lineNumber): a cue's text contains “-->”; separate cues with a blank line.")
            }
            cues.append(Cue(start: start, end: end, line: lineNumber))
        }
        guard !cues.isEmpty else { throw CompanionTextProblem(message: "The captions have no cues: nothing would be shown.") }
        return cues
    }

    /// `start --> end [settings]`.
    static func timing(_ line: String, line number: Int) throws(CompanionTextProblem) -> (Double, Double) {
        let parts = line.components(separatedBy: "-->")
        guard parts.count == 2 else { throw CompanionTextProblem(message: "Line \(number): a cue timing has one “-->”.") }
        let startText = parts[0].trimmingCharacters(in: .whitespaces)
        let endText = parts[1].trimmingCharacters(in: .whitespaces).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init) ?? ""
        guard let start = timestamp(startText), let end = timestamp(endText) else {
            throw CompanionTextProblem(
                message: "Line \(number): “\(Self.excerpt(line))” is not a cue timing; write it like 00:00:01.000 --> 00:00:04.000."
            )
        }
        return (start, end)
    }

    /// `[hh:]mm:ss.ttt`: minutes and seconds 00–59, three digits of milliseconds, hours at least two digits (and
    /// at most 6 here: a million hours is no video, and more digits would overflow the arithmetic).
    static func timestamp(_ text: String) -> Double? {
        let main = text.split(separator: ".", omittingEmptySubsequences: false)
        guard main.count == 2, main[1].count == 3, main[1].allSatisfy({ $0.isASCII && $0.isNumber }), let millis = Int(main[1]) else { return nil }
        let fields = main[0].split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == 2 || fields.count == 3, fields.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } && !$0.isEmpty }) else {
            return nil
        }
        let numbers = fields.compactMap { Int($0) }
        guard numbers.count == fields.count else { return nil }
        let (hours, minutes, seconds) = fields.count == 3 ? (numbers[0], numbers[1], numbers[2]) : (0, numbers[0], numbers[1])
        guard fields[fields.count - 1].count == 2, fields[fields.count - 2].count == 2, minutes < 60, seconds < 60,
            fields.count == 2 || (2...6).contains(fields[0].count)
        else { return nil }
        return Double(hours * 3600 + minutes * 60 + seconds) + Double(millis) / 1000
    }

    static func format(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0, seconds < 1e12 else { return "?" }
        let millis = Int((seconds * 1000).rounded())
        return String(format: "%02d:%02d:%02d.%03d", millis / 3_600_000, millis / 60_000 % 60, millis / 1000 % 60, millis % 1000)
    }

    static func excerpt(_ line: String) -> String { line.count > 60 ? String(line.prefix(60)) + "…" : line }
}
