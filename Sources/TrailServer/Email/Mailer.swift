import Foundation
import Logging

/// What the rest of the server calls to send email: it writes the messages (plain text) and queues them in the outbox.
/// Without SMTP (`outbox` nil) nothing is queued: invitations show their link instead, and notifications are off.
/// A notification never fails the request that caused it: by then the change is committed, and a lost email must not
/// turn it into an error page.
package struct Mailer: Sendable {
    let database: AppDatabase
    /// The sending service; nil without `--smtp-url`.
    package let outbox: MailOutbox?
    let publicURL: String
    let logger: Logger

    package init(database: AppDatabase, outbox: MailOutbox?, publicURL: String, logger: Logger = Logger(label: "trail.mail")) {
        self.database = database
        self.outbox = outbox
        self.publicURL = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        self.logger = logger
    }

    package var isEnabled: Bool { outbox != nil }

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
                \(inviter) invited you to join \(site.name) on Trail Companion as \(role.rawValue).

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
                \(author.displayName) submitted "\(facts.tourName)" (\(facts.site.name)) for review.

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
                let said = comment.trimmed.isEmpty ? "" : "\nComment:\n\(comment.trimmed)\n"
                let progress =
                    becameReady
                    ? "It has every approval it needs and is ready to release."
                    : "Approvals so far: \(approvals) of \(facts.request.requiredApprovals)."
                return (
                    "Approved: \(facts.tourName)",
                    """
                    \(reviewer.displayName) approved "\(facts.tourName)" (\(facts.site.name)).
                    \(said)
                    \(progress)
                    \(base)\(PanelURL.request(requestId))
                    \(Self.footer(base))
                    """
                )
            }
        case .denied:
            await queue(.denied, requestId: requestId, causedBy: reviewer.id, audience: .author) { facts, _ in
                (
                    "Changes needed: \(facts.tourName)",
                    """
                    \(reviewer.displayName) denied "\(facts.tourName)" (\(facts.site.name)). The tour can be edited again.

                    Comment:
                    \(comment.trimmed)

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
                "Released: \(facts.tourName)",
                """
                \(user.displayName) released "\(facts.tourName)" (\(facts.site.name)) as version \(version). Visitors and the apps \
                can download it now.

                \(base)\(PanelURL.request(requestId))
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
                "\(alert.severity.label) posted for \(facts.site.name): \(alert.title)",
                """
                \(user.displayName) posted this \(alert.severity.label.lowercased()) for \(facts.site.name)\(scope). It went out to \
                phones and the web player at once.

                \(alert.title)

                \(alert.message)
                \(closes)
                From \(AlertsPages.minutes(alert.startsAt)) until \(AlertsPages.minutes(alert.endsAt)) (UTC).

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
