import Foundation
import Logging

/// What the rest of the server calls to send email: it writes the messages (plain text) and queues them in the outbox.
/// Without SMTP (`outbox` nil) nothing is queued: invitations show their link instead, and notifications are off.
/// A notification never fails the request that caused it: by then the change is committed, and a lost email must not
/// turn it into an error page.
struct Mailer: Sendable {
    let database: AppDatabase
    /// The sending service; nil without `--smtp-url`.
    let outbox: MailOutbox?
    let publicURL: String
    let logger: Logger

    init(database: AppDatabase, outbox: MailOutbox?, publicURL: String, logger: Logger = Logger(label: "trail.mail")) {
        self.database = database
        self.outbox = outbox
        self.publicURL = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        self.logger = logger
    }

    var isEnabled: Bool { outbox != nil }

    /// The link an invitation's token opens.
    func invitationLink(_ token: String) -> String { "\(publicURL)\(PanelURL.invitation(token))" }

    /// The invitation email, or nil without SMTP.
    func invitationMessage(inviter: String, role: SiteRole) -> (@Sendable (String, Site) -> (subject: String, body: String))? {
        guard isEnabled else { return nil }
        let base = publicURL
        return { token, site in
            (
                "You are invited to \(site.name) on Trail Companion",
                """
                \(Self.oneLine(inviter)) invited you to join \(site.name) on Trail Companion as \(role.rawValue).

                Open this link to accept. It works once, for 7 days:
                \(base)\(PanelURL.invitation(token))

                If you did not expect this invitation, ignore this message: nothing happens without the link.
                """
            )
        }
    }

    /// A tour was submitted: its site's reviewers (and managers) are asked to review it.
    func reviewRequested(requestId: String, by author: AuthenticatedUser) async {
        let base = publicURL
        await queue(.reviewRequested, requestId: requestId, causedBy: author.id, audience: .reviewers) { facts, _ in
            (
                "Review requested: \(facts.tourName)",
                """
                \(Self.oneLine(author.displayName)) submitted "\(Self.oneLine(facts.tourName))" (\(facts.site.name)) for review.

                Its package is being built and checked; review it here once it is ready:
                \(base)\(PanelURL.request(requestId))
                \(Self.footer(base))
                """
            )
        }
    }

    /// A reviewer approved or denied: the author who submitted hears of it (a denial with its comment).
    func reviewed(requestId: String, by reviewer: AuthenticatedUser, outcome: AppDatabase.ReviewOutcome, comment: String) async {
        let base = publicURL
        switch outcome {
        case let .approved(approvals, becameReady):
            await queue(.approved, requestId: requestId, causedBy: reviewer.id, audience: .author) { facts, _ in
                let said = comment.trimmed.isEmpty ? "" : "\n" + Self.quoted(comment, by: reviewer.displayName) + "\n"
                let progress =
                    becameReady
                    ? "It has every approval it needs. Release it from the tour's page, where its visitor link and QR code appear:"
                    : "Approvals so far: \(approvals) of \(facts.request.requiredApprovals)."
                // Ready: the tour page's publishing card, where Release is and where the link and QR code then show.
                let link =
                    becameReady
                    ? facts.request.tourId.map { PanelURL.tour($0, at: .publish) } ?? PanelURL.request(requestId) : PanelURL.request(requestId)
                return (
                    "Approved: \(Self.oneLine(facts.tourName))",
                    """
                    \(Self.oneLine(reviewer.displayName)) approved "\(Self.oneLine(facts.tourName))" (\(facts.site.name)).
                    \(said)
                    \(progress)
                    \(base)\(link)
                    \(Self.footer(base))
                    """
                )
            }
        case .denied:
            await queue(.denied, requestId: requestId, causedBy: reviewer.id, audience: .author) { facts, _ in
                (
                    "Changes needed: \(Self.oneLine(facts.tourName))",
                    """
                    \(Self.oneLine(reviewer.displayName)) denied "\(Self.oneLine(facts.tourName))" (\(facts.site.name)). The tour can be edited again.

                    \(Self.quoted(comment, by: reviewer.displayName))

                    \(base)\(PanelURL.request(requestId))
                    \(Self.footer(base))
                    """
                )
            }
        }
    }

    /// A request was released: the author who submitted it hears that visitors can now download it.
    func released(requestId: String, version: Int, by user: AuthenticatedUser) async {
        let base = publicURL
        await queue(.released, requestId: requestId, causedBy: user.id, audience: .author) { facts, _ in
            (
                "Released: \(Self.oneLine(facts.tourName))",
                """
                \(Self.oneLine(user.displayName)) released "\(Self.oneLine(facts.tourName))" (\(facts.site.name)) as version \(version). Visitors and \
                the apps can download it now. Its visitor link and QR code are on the tour's page:

                \(base)\(facts.request.tourId.map { PanelURL.tour($0, at: .publish) } ?? PanelURL.request(requestId))
                \(Self.footer(base))
                """
            )
        }
    }

    /// An alert was posted: the site's other managers are told what it says and how long it lasts, since it reaches
    /// phones at once, without review. Nil without SMTP. The message is written inside the posting transaction.
    func alertMessage(by user: AuthenticatedUser) -> AlertMessage? {
        guard isEnabled else { return nil }
        let base = publicURL
        return { facts in
            let alert = facts.alert
            let scope = facts.tourName.map { " (tour \"\($0)\")" } ?? ""
            let closes = facts.closedStopNames.isEmpty ? "" : "\nIt closes these stops: \(facts.closedStopNames.joined(separator: ", ")).\n"
            return (
                "\(alert.severity.label) posted for \(facts.site.name): \(Self.oneLine(alert.title))",
                """
                \(Self.oneLine(user.displayName)) posted this \(alert.severity.label.lowercased()) for \(facts.site.name)\(scope). It went out to \
                phones and the web player at once.

                \(Self.quoted(alert.title + "\n\n" + alert.message, by: user.displayName))
                \(closes)
                From \(AlertsPages.minutes(alert.startsAt, in: facts.site.zone)) until \(AlertsPages.minutes(alert.endsAt, in: facts.site.zone)).

                See or end it here:
                \(base)\(PanelURL.siteAlerts(facts.site.slug))
                \(Self.footer(base))
                """
            )
        }
    }

    private func queue(
        _ kind: MailKind,
        requestId: String,
        causedBy: Int64,
        audience: NotificationAudience,
        message: @escaping @Sendable (AppDatabase.RequestMailFacts, User) -> (subject: String, body: String)
    ) async {
        guard let outbox else { return }
        do {
            try await database.queueRequestNotification(kind: kind, requestId: requestId, causedBy: causedBy, audience: audience, message: message)
            outbox.wake()
        } catch {
            logger.error("could not queue the \(kind.rawValue) notification of request \(requestId): \(error)")
        }
    }

    /// A name or title inside a sentence or a subject: one line, whatever its owner typed.
    static func oneLine(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { $0.properties.generalCategory == .control || $0.properties.isPatternWhitespace ? " " : $0 }
            )
        )
    }

    /// Text a person wrote, set apart from the server's own words: introduced as theirs and quoted line by line, so a
    /// comment cannot pass for a line of the message (a link that seems to come from the agency, say).
    static func quoted(_ text: String, by author: String) -> String {
        let lines = text.trimmed.split(separator: "\n", omittingEmptySubsequences: false).map { "> " + $0.trimmingCharacters(in: .controlCharacters) }
        return "\(oneLine(author)) wrote (their words, not Trail Companion's):\n" + lines.joined(separator: "\n")
    }

    static func footer(_ base: String) -> String {
        "\n--\nTrail Companion. Choose which emails you get: \(base)\(PanelURL.notificationSettings)"
    }
}

/// What an alert's email tells: the alert, its site, its tour's name and the names of the stops it closes.
struct AlertMailFacts: Sendable {
    let alert: Alert
    let site: Site
    let tourName: String?
    let closedStopNames: [String]
}

/// Writes the email about a posted alert, given its facts.
typealias AlertMessage = @Sendable (AlertMailFacts) -> (subject: String, body: String)
