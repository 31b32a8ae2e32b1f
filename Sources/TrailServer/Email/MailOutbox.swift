import Foundation
import Logging
import ServiceLifecycle

/// Sends the durable outbox (table `outbox`) in the background: each due message goes to the SMTP server; a failure is
/// retried later, each wait twice the last (30 s, 1 min, 2 min, … up to an hour), and given up only after
/// `maxAttempts`. Requests never wait for a send: they queue the message in their own transaction and ``wake()`` this
/// service after the commit. Messages survive a restart (they are rows), and one interrupted mid-send goes again.
public final class MailOutbox: Service, Sendable {
    let database: AppDatabase
    let settings: MailSettings
    let client: SMTPClient
    let logger: Logger
    private let wakeStream: AsyncStream<Void>
    private let wakeContinuation: AsyncStream<Void>.Continuation

    public init(database: AppDatabase, settings: MailSettings, logger: Logger = Logger(label: "trail.mail")) {
        self.database = database
        self.settings = settings
        self.client = SMTPClient(settings: settings)
        self.logger = logger
        (wakeStream, wakeContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// New mail was queued.
    public func wake() { wakeContinuation.yield() }

    public func run() async throws {
        // Wakes the loop when the next retry is due (checked at most every 30 s, at least every second).
        let ticker = Task {
            while !Task.isCancelled {
                let due = (try? await database.nextMailDue())?.timeIntervalSinceNow ?? 30
                try? await Task.sleep(for: .seconds(min(30, max(1, due))))
                wake()
            }
        }
        defer { ticker.cancel() }
        wake()
        await withGracefulShutdownHandler {
            for await _ in wakeStream {
                _ = await drain()
            }
        } onGracefulShutdown: {
            self.wakeContinuation.finish()
        }
    }

    /// Tries every message that is due once; returns how many the server took. Tests call this directly.
    @discardableResult
    public func drain(now: @Sendable () -> Date = { Date() }) async -> Int {
        var sent = 0
        var tried = Set<Int64>()
        while true {
            let due: [OutboxMessage]
            do { due = try await database.dueMail(limit: 10, now: now(), excluding: tried) } catch {
                logger.error("cannot read the outbox: \(error)")
                return sent
            }
            if due.isEmpty { return sent }
            for message in due {
                tried.insert(message.id!)
                if await send(message) { sent += 1 }
            }
        }
    }

    /// One attempt; true when the server took the message.
    func send(_ message: OutboxMessage) async -> Bool {
        let mail = MailMessage(from: settings.from, to: message.recipient, subject: message.subject, body: message.body)
        do {
            try await client.send(mail)
            try await database.markMailSent(id: message.id!)
            // The subject and kind only: the body may hold an invitation link, which is a secret.
            logger.info("sent \(message.kind.rawValue) mail \(message.id!)")
            return true
        } catch {
            let attempts = message.attempts + 1
            let giveUp = attempts >= settings.maxAttempts
            let delay = min(settings.maxRetryDelay, settings.retryDelay * pow(2, Double(min(attempts - 1, 30))))
            logger.warning("mail \(message.id!) (\(message.kind.rawValue)) not sent, attempt \(attempts)\(giveUp ? ", given up" : ""): \(error)")
            do {
                try await database.markMailAttemptFailed(
                    id: message.id!,
                    error: "\(error)",
                    retryAt: Date().addingTimeInterval(delay),
                    giveUp: giveUp
                )
            } catch {
                logger.error("cannot record the failure of mail \(message.id!): \(error)")
            }
            return false
        }
    }
}
