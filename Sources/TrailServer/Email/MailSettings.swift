import Foundation

/// Where mail goes (`--smtp-url`, `--smtp-user`, `--smtp-password-file`, `--mail-from`). Nil in `AppConfig.mail`: no
/// email at all; invitations then show their link to pass on, and no notification is queued.
package struct MailSettings: Sendable {
    /// `smtp://host:port` (STARTTLS, required unless the host is loopback) or `smtps://host:port` (TLS from the start).
    var url: URL
    var user: String?
    /// A file holding the password: a password on the command line would show in `ps`.
    var passwordFile: String?
    /// `Trail Companion <trail@DOMAIN>` unless set (see `defaultFrom`).
    var from: String
    /// The first retry waits this long; each further one twice as long, up to `maxRetryDelay`.
    var retryDelay: TimeInterval = 30
    var maxRetryDelay: TimeInterval = 3600
    /// After this many failed attempts (about two days with the defaults) a message is given up and stays `failed`.
    var maxAttempts = 60
    /// At most this many messages go out in any 24 hours; the rest wait in the outbox until the window has room, and
    /// administrators see that on `/admin/email`. A ceiling under what an agency relay allows one sender keeps a loop
    /// (a bug, or a person) from getting the agency's address blocked.
    var dailyLimit = 1000
    /// One SMTP conversation may take this long before it counts as failed.
    var timeout: TimeInterval = 60

    package init(url: URL, user: String? = nil, passwordFile: String? = nil, from: String) {
        self.url = url
        self.user = user
        self.passwordFile = passwordFile
        self.from = from
    }

    /// The default sender, `Trail Companion <trail@DOMAIN>`: DOMAIN is the public URL's host, else the machine's name
    /// (as `hostname` prints it), the first that is a mail domain (a name with a dot; not an IP address, not
    /// `localhost`). Nil when neither is: a sender such as `trail@vm` would be refused by the mail server at every send,
    /// so the operator is asked for `--mail-from` at start instead.
    package static func defaultFrom(hostName: String = ProcessInfo.processInfo.hostName, publicURL: String? = nil) -> String? {
        let candidates = [publicURL.flatMap { URLComponents(string: $0)?.host }, hostName].compactMap { $0?.lowercased() }
        let domain = candidates.first { name in
            let isIPv4 = name.allSatisfy { $0.isNumber || $0 == "." }
            return !isIPv4 && !name.contains(":") && !name.hasPrefix("localhost") && MailMessage.isAddress("trail@\(name)")
        }
        return domain.map { "Trail Companion <trail@\($0)>" }
    }

    /// Parses `--smtp-url`; the message of the thrown error names what is wrong.
    package static func parseURL(_ text: String) throws(MailSettingsProblem) -> URL {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(), let host = components.host,
            !host.isEmpty
        else { throw MailSettingsProblem("\(text) is not smtp://host:port or smtps://host:port") }
        guard scheme == "smtp" || scheme == "smtps" else { throw MailSettingsProblem("\(text): the scheme must be smtp:// or smtps://") }
        guard components.user == nil, components.password == nil else {
            throw MailSettingsProblem("put the user in --smtp-user and the password in --smtp-password-file, not in the URL")
        }
        guard components.path.isEmpty || components.path == "/", components.query == nil else {
            throw MailSettingsProblem("\(text): give only the scheme, host and port")
        }
        guard let url = URL(string: "\(scheme)://\(components.percentEncodedHost ?? host)\(components.port.map { ":\($0)" } ?? "")") else {
            throw MailSettingsProblem("\(text) is not a valid URL")
        }
        return url
    }

    /// Parses `--mail-from`: `Name <address>` or a bare address, one line.
    package static func parseFrom(_ text: String) throws(MailSettingsProblem) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.contains(where: { $0.isNewline }), MailMessage.address(in: trimmed) != nil else {
            throw MailSettingsProblem("--mail-from \(text): give an address, or Name <address>")
        }
        return trimmed
    }

    /// TLS from the first byte.
    var implicitTLS: Bool { url.scheme == "smtps" }

    /// A loopback relay (a local MTA such as Postfix) may speak plain SMTP: the message never leaves the machine.
    var isLoopback: Bool {
        guard let host = url.host?.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased() else { return false }
        return host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// The password, read from its file at each send (so a rotated password is used without a restart).
    func password() throws -> String? {
        guard let passwordFile else { return nil }
        let text = try String(contentsOfFile: passwordFile, encoding: .utf8)
        return text.trimmingCharacters(in: .newlines)
    }
}

package struct MailSettingsProblem: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
