import Foundation

// The module's own small helpers for the words of its refusals: it shares none with the server.

enum Wording {
    /// "20 MB" for whole mebibytes, else "1234 bytes".
    static func megabytes(_ bytes: Int) -> String {
        bytes % (1024 * 1024) == 0 ? "\(bytes / 1024 / 1024) MB" : "\(bytes) bytes"
    }

    /// "10,000".
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { result.append(",") }
            result.append(character)
        }
        return (value < 0 ? "-" : "") + result
    }
}

extension String {
    var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }

    /// Nil for an empty string: `text.nonEmpty ?? fallback`.
    var nonEmpty: String? { isEmpty ? nil : self }
}
