import Foundation
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle

/// Sends the durable outbox (table `outbox`) in the background: each due message goes to the SMTP server; a failure is
/// retried later, each wait twice the last (30 s, 1 min, 2 min, … up to an hour), and given up only after
/// `maxAttempts`. Requests never wait for a send: they queue the message in their own transaction and ``wake()`` this
/// service after the commit. Messages survive a restart (they are rows), and one interrupted mid-send goes again.
final class MailOutbox: Service, Sendable {
    let database: AppDatabase
    let settings: MailSettings
    let client: SMTPClient
    let logger: Logger
    private let worker: JobWorker
    /// The daily ceiling was reached at the last pass: nothing goes out until the oldest send of the window ages out.
    private let atCeiling = NIOLockedValueBox(false)

    init(database: AppDatabase, settings: MailSettings, logger: Logger = Logger(label: "trail.mail")) {
        self.database = database
        self.settings = settings
        self.client = SMTPClient(settings: settings)
        self.logger = logger
        worker = JobWorker(queue: "mail", logger: logger)
    }

    /// New mail was queued.
    func wake() { worker.wake() }

    func run() async throws {
        // Wakes the queue when the next retry is due (checked at most every 30 s, at least every second).
        await worker.run(
            onStop: .finishBatch,
            ticker: { [database, atCeiling] in
                let due = (try? await database.nextMailDue())?.timeIntervalSinceNow ?? 30
                // At the ceiling, what is due stays due: look again in a minute rather than every second.
                let wait = atCeiling.withLockedValue { $0 } ? 60 : min(30, max(1, due))
                try? await Task.sleep(for: .seconds(wait))
            },
            pass: { _ = await self.drain() }
        )
    }

    /// Tries every message that is due once; returns how many the server took. Tests call this directly.
    @discardableResult
    func drain(now: @Sendable () -> Date = { Date() }) async -> Int {
        // Each message once per pass, even when its retry falls due at once (a retry delay of zero in tests).
        var tried = Set<Int64>()
        return await worker.drain(
            batch: {
                let room = settings.dailyLimit - (try await database.mailSent(since: now().addingTimeInterval(-86_400)))
                let wasAtCeiling = atCeiling.withLockedValue { state in
                    defer { state = room <= 0 }
                    return state
                }
                guard room > 0 else {
                    if !wasAtCeiling {
                        logger.error("the daily email ceiling (\(settings.dailyLimit) in 24 hours) is reached: queued mail waits")
                    }
                    return []
                }
                let due = try await database.dueMail(limit: min(10, room), now: now(), excluding: tried)
                tried.formUnion(due.compactMap(\.id))
                return due
            },
            work: { await self.send($0) }
        )
    }

    /// One attempt; true when the server took the message.
    func send(_ message: OutboxMessage) async -> Bool {
        let mail = MailMessage(from: settings.from, to: message.recipient, subject: message.subject, body: message.body)
        do {
            try await client.send(mail)
            try await database.markMailSent(id: message.id)
            // The subject and kind only: the body may hold an invitation link, which is a secret.
            logger.info("sent \(message.kind.rawValue) mail \(message.id)")
            return true
        } catch {
            let attempts = message.attempts + 1
            let giveUp = attempts >= settings.maxAttempts
            let delay = min(settings.maxRetryDelay, settings.retryDelay * pow(2, Double(min(attempts - 1, 30))))
            logger.warning("mail \(message.id) (\(message.kind.rawValue)) not sent, attempt \(attempts)\(giveUp ? ", given up" : ""): \(error)")
            do {
                try await database.markMailAttemptFailed(
                    id: message.id,
                    error: "\(error)",
                    retryAt: Date().addingTimeInterval(delay),
                    giveUp: giveUp
                )
            } catch {
                logger.error("cannot record the failure of mail \(message.id): \(error)")
            }
            return false
        }
    }
}
