import Foundation
import Hummingbird

/// The account page's notification settings, and the administrators' view of the outbox.
struct EmailPagesController: Sendable {
    let database: AppDatabase
    let pages: PageResponder
    let mailer: Mailer

    struct NotificationOption: Sendable {
        let kind: String
        let label: String
        let on: Bool
    }

    struct NotificationsPage: Sendable {
        let options: [NotificationOption]
        let emailEnabled: Bool
    }

    struct ProblemRow: Sendable {
        let id: Int64
        let recipient: String
        let kind: String
        let state: String
        let attempts: Int
        let error: String
        let nextAttempt: String
    }

    struct AdminEmailPage: Sendable {
        let emailEnabled: Bool
        let queued: Int
        let retrying: Int
        let failed: Int
        let sent: Int
        let problems: [ProblemRow]
        let hasProblems: Bool
        /// Sent in the last 24 hours, against the daily ceiling.
        let sentLastDay: Int
        let dailyLimit: Int
        let atCeiling: Bool
    }

    func addRoutes(signedIn: some RouterMethods<SignedInContext>) {
        signedIn.get("/account/notifications", use: showNotifications)
        signedIn.post("/account/notifications", use: saveNotifications)
        signedIn.group("/admin").add(middleware: RequireAdminMiddleware())
            .get("/email", use: showOutbox)
    }

    /// Which notification emails the signed-in user gets.
    func showNotifications(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let off = try await database.notificationOptOuts(userId: context.user.id)
        let page = NotificationsPage(
            options: MailKind.notifications.map { NotificationOption(kind: $0.rawValue, label: $0.settingLabel, on: !off.contains($0)) },
            emailEnabled: mailer.isEnabled
        )
        return await pages.render("notifications", title: "Email notifications", page: page, request: request, context: context)
    }

    /// Saves the switches: a kind not ticked is turned off.
    func saveNotifications(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let form = try await request.decode(as: NotificationsForm.self, context: context)
        let on = Set(form.on)
        let off = Set(MailKind.notifications.filter { !on.contains($0.rawValue) })
        try await database.setNotificationOptOuts(userId: context.user.id, off: off, actor: context.actor)
        return pages.redirect(to: PanelURL.notificationSettings, notice: "Your email notifications are saved.")
    }

    /// The outbox as administrators need it: what waits, what keeps failing and why.
    func showOutbox(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let summary = try await database.outboxSummary()
        let problems = summary.problems.map {
            ProblemRow(
                id: $0.id,
                recipient: $0.recipient,
                kind: $0.kind.rawValue,
                state: $0.state == .failed ? "given up" : "retrying",
                attempts: $0.attempts,
                error: $0.lastError ?? "",
                nextAttempt: $0.state == .failed ? "—" : DisplayFormat.date($0.nextAttemptAt)
            )
        }
        let sentLastDay = try await database.mailSent(since: Date().addingTimeInterval(-86_400))
        let dailyLimit = mailer.outbox?.settings.dailyLimit ?? 0
        let page = AdminEmailPage(
            emailEnabled: mailer.isEnabled,
            queued: summary.queued,
            retrying: summary.retrying,
            failed: summary.failed,
            sent: summary.sent,
            problems: problems,
            hasProblems: !problems.isEmpty,
            sentLastDay: sentLastDay,
            dailyLimit: dailyLimit,
            atCeiling: mailer.isEnabled && sentLastDay >= dailyLimit
        )
        return await pages.render("admin-email", title: "Email", page: page, request: request, context: context)
    }
}

/// The notification switches: the kinds ticked (`on[]`); a kind not sent is off.
struct NotificationsForm: PanelForm {
    var on: [String] = []
}
