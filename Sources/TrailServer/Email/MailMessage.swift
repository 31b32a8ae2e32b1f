import Foundation

/// A plain-text message as it goes over SMTP (RFC 5322): headers, a blank line, the body, CRLF line ends. Text from
/// users (tour names, comments) only ever reaches the body or an encoded Subject, never a header line of its own.
struct MailMessage: Sendable, Equatable {
    let from: String
    let to: String
    let subject: String
    let body: String
    var date = Date()
    var messageId = UUID().uuidString.lowercased()

    /// The bytes handed to the SMTP server.
    func rendered() -> Data {
        let domain = Self.address(in: from).flatMap { $0.split(separator: "@").last.map(String.init) } ?? "localhost"
        var lines = [
            "Date: \(Self.rfc5322Date(date))",
            "From: \(Self.headerValue(from))",
            "To: \(Self.headerValue(to))",
            "Subject: \(Self.encodedWord(subject))",
            "Message-ID: <\(messageId)@\(domain)>",
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8",
        ]
        let text = body.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
        if text.allSatisfy({ $0.isASCII }) && text.split(separator: "\n", omittingEmptySubsequences: false).allSatisfy({ $0.utf8.count <= 998 }) {
            lines.append("Content-Transfer-Encoding: 7bit")
            lines.append("")
            lines.append(contentsOf: text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
        } else {
            // Accented names and long lines survive every relay in base64.
            lines.append("Content-Transfer-Encoding: base64")
            lines.append("")
            let encoded = Data(text.replacingOccurrences(of: "\n", with: "\r\n").utf8).base64EncodedString()
            var index = encoded.startIndex
            while index < encoded.endIndex {
                let end = encoded.index(index, offsetBy: 76, limitedBy: encoded.endIndex) ?? encoded.endIndex
                lines.append(String(encoded[index..<end]))
                index = end
            }
        }
        return Data((lines.joined(separator: "\r\n") + "\r\n").utf8)
    }

    /// The bare address of `Name <address>` or of a bare address; nil when there is none.
    static func address(in text: String) -> String? {
        var candidate = text.trimmingCharacters(in: .whitespaces)
        if let open = candidate.lastIndex(of: "<"), candidate.hasSuffix(">") {
            candidate = String(candidate[candidate.index(after: open)..<candidate.index(before: candidate.endIndex)])
        }
        return isAddress(candidate) ? candidate : nil
    }

    /// One address, safe to put on a header line and in an SMTP command: no spaces, controls, angle brackets or quotes.
    static func isAddress(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard text.utf8.count <= 254, parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 64 else { return false }
        let domain = parts[1]
        guard domain.contains("."), !domain.hasPrefix("."), !domain.hasSuffix("."), !domain.contains("..") else { return false }
        return !text.contains {
            $0.isWhitespace || $0.isNewline || "<>()[],;:\\\"".contains($0) || ($0.asciiValue.map { $0 < 32 || $0 == 127 } ?? false)
        }
    }

    /// A header value with any line break removed: no text can start a header of its own.
    static func headerValue(_ text: String) -> String {
        String(text.map { $0.isNewline ? " " : $0 })
    }

    /// RFC 2047: ASCII as it is, anything else as `=?utf-8?B?…?=` words of at most 75 characters.
    static func encodedWord(_ text: String) -> String {
        let clean = headerValue(text)
        if clean.allSatisfy({ $0.isASCII }) { return clean }
        var words: [String] = []
        var chunk = ""
        for character in clean {
            // 45 bytes of UTF-8 make 60 base64 characters, which with "=?utf-8?B?" and "?=" stay under 75.
            if (chunk + String(character)).utf8.count > 45 {
                words.append(chunk)
                chunk = ""
            }
            chunk.append(character)
        }
        if !chunk.isEmpty { words.append(chunk) }
        return words.map { "=?utf-8?B?\(Data($0.utf8).base64EncodedString())?=" }.joined(separator: "\r\n ")
    }

    static func rfc5322Date(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        return formatter.string(from: date)
    }
}
