import Foundation
import GRDB
import Hummingbird
import HummingbirdTesting
import TestSupport
import Testing

@testable import TrailServer

/// A real SMTP server on loopback (aiosmtpd, `Scripts/smtp_sink.py`): each message it accepts lands in `folder` as a
/// JSON file, with the headers and body as Python's email parser reads them.
final class SMTPSink: Sendable {
    let process: Process
    let port: Int
    let folder: URL

    /// Starts the server on `port` (0: any free one) and waits until it accepts connections.
    static func start(
        port: Int = 0,
        folder: URL = TestScratch.folder("smtp-sink"),
        auth: String? = nil,
        host: String? = nil
    ) async throws -> SMTPSink {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            ["python3", projectRoot.appendingPathComponent("Tests/TrailServerTests/Scripts/smtp_sink.py").path, "\(port)", folder.path]
            + (auth.map { ["--auth", $0] } ?? []) + (host.map { ["--host", $0] } ?? [])
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        try process.run()
        let line = await firstLine(of: output)
        guard let bound = line.split(separator: "\n").first.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) else {
            process.terminate()
            throw ObjectStore.StartFailure(description: "the SMTP server did not start: \(line)")
        }
        return SMTPSink(process: process, port: bound, folder: folder)
    }

    private init(process: Process, port: Int, folder: URL) {
        self.process = process
        self.port = port
        self.folder = folder
    }

    /// Stops the server and waits until it is gone (its port then refuses connections).
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    var url: URL { URL(string: "smtp://127.0.0.1:\(port)")! }

    /// One received message, as the server's Python parser read it.
    struct Received: Sendable {
        let envelopeFrom: String
        let envelopeTo: [String]
        let to: String
        let subject: String
        let body: String
        let raw: String
        let authenticated: Bool
    }

    /// Every message received so far, in arrival order.
    func messages() -> [Received] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(".json") }.sorted()
        return names.compactMap { name in
            guard let data = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            else { return nil }
            return Received(
                envelopeFrom: object["mail_from"] as? String ?? "",
                envelopeTo: object["rcpt_tos"] as? [String] ?? [],
                to: object["to"] as? String ?? "",
                subject: object["subject"] as? String ?? "",
                // Lines end in CRLF on the wire (RFC 5322); compared here as plain lines.
                body: (object["body"] as? String ?? "").replacingOccurrences(of: "\r\n", with: "\n"),
                raw: object["data"] as? String ?? "",
                authenticated: object["authenticated"] as? Bool ?? false
            )
        }
    }

    /// The messages to `address`.
    func messages(to address: String) -> [Received] { messages().filter { $0.envelopeTo.contains(address) } }
}

extension MailSettings {
    /// Settings for a test server: short retries, a fixed sender.
    static func testing(_ url: URL) -> MailSettings {
        var settings = MailSettings(url: url, from: "Trail Companion <trail@parks.example>")
        settings.retryDelay = 0.05
        settings.maxRetryDelay = 0.2
        settings.timeout = 20
        return settings
    }
}

extension TestApp {
    var outbox: MailOutbox { dependencies.mailer.outbox! }

    /// Drains the outbox until `condition` holds (each round tries every message due, retries included), or fails
    /// after `rounds`.
    func drainMail(until condition: () -> Bool, rounds: Int = 100) async throws {
        for _ in 0..<rounds {
            if condition() { return }
            _ = await outbox.drain(now: { Date().addingTimeInterval(3600) })
        }
        #expect(condition(), "the outbox never got there")
    }
}

/// The outbox against a real SMTP server: what arrives, and what happens while the server is down.
@Suite(.serialized) struct EmailOutboxTests {
    /// A message queued in a transaction reaches the server with its To, Subject and body, in plain text; the envelope
    /// sender is the configured `--mail-from` address.
    @Test func aQueuedMessageArrives() async throws {
        let sink = try await SMTPSink.start()
        defer { sink.stop() }
        let app = try await TestApp.make { $0.mail = .testing(sink.url) }
        try await app.database.write { db in
            try AppDatabase.enqueueMail(
                db,
                to: "ranger@parks.example",
                subject: "Trail day at Fish Lake — über alles",
                body: "Line one.\n.\nA line with a lone dot above, and one that is long: \(String(repeating: "x", count: 1200))",
                kind: .approved
            )
        }
        #expect(await app.outbox.drain() == 1)
        let received = try #require(sink.messages().first)
        #expect(received.envelopeFrom == "trail@parks.example")
        #expect(received.envelopeTo == ["ranger@parks.example"])
        #expect(received.to == "ranger@parks.example")
        #expect(received.subject == "Trail day at Fish Lake — über alles")
        #expect(received.body.hasPrefix("Line one.\n.\nA line with a lone dot above"))
        #expect(received.body.contains(String(repeating: "x", count: 1200)))
        #expect(received.raw.contains("Content-Type: text/plain; charset=utf-8"))
        let row = try #require(try await app.database.outbox(recipient: "ranger@parks.example").first)
        #expect(row.state == .sent && row.attempts == 1 && row.lastError == nil)
        #expect(row.body.isEmpty, "a sent message's body (an invitation link, maybe) is not kept")
        #expect(await app.outbox.drain() == 0, "a sent message is not sent again")
        #expect(sink.messages().count == 1)
    }

    /// With `--smtp-user` and a password file the client logs in (the server refuses mail without it).
    @Test func logsInWithTheConfiguredAccount() async throws {
        let sink = try await SMTPSink.start(auth: "mailer:s3cret-pass")
        defer { sink.stop() }
        let passwordFile = TestScratch.folder("smtp-password")
        try FileManager.default.createDirectory(at: passwordFile, withIntermediateDirectories: true)
        let file = passwordFile.appendingPathComponent("password")
        try "s3cret-pass\n".write(to: file, atomically: true, encoding: .utf8)
        var settings = MailSettings.testing(sink.url)
        settings.user = "mailer"
        settings.passwordFile = file.path
        let app = try await TestApp.make { $0.mail = settings }
        try await app.database.write { db in
            try AppDatabase.enqueueMail(db, to: "a@parks.example", subject: "Hello", body: "Hi.", kind: .released)
        }
        #expect(await app.outbox.drain() == 1)
        #expect(sink.messages().first?.authenticated == true)

        // A wrong password: refused, kept for a retry, and the error the admins see names no password.
        try "wrong-one\n".write(to: file, atomically: true, encoding: .utf8)
        try await app.database.write { db in
            try AppDatabase.enqueueMail(db, to: "b@parks.example", subject: "Hello", body: "Hi.", kind: .released)
        }
        #expect(await app.outbox.drain() == 0)
        let row = try #require(try await app.database.outbox(recipient: "b@parks.example").first)
        #expect(row.state == .queued && row.attempts == 1)
        #expect(row.lastError?.isEmpty == false)
        #expect(row.lastError?.contains("wrong-one") == false && row.lastError?.contains("s3cret") == false)
    }

    /// The SMTP server is down: the request that queues mail still succeeds at once; the message is retried, survives
    /// a restart of the app (a new app on the same database file), and is sent once the server is back; exactly once.
    @Test func serverDownThenBackAcrossARestart() async throws {
        let port = Int(try freeLocalPort())
        let url = URL(string: "smtp://127.0.0.1:\(port)")!
        let folder = TestScratch.folder("email-restart")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("trail.sqlite").path
        let migrations = projectRoot.appendingPathComponent("migrations")

        let first = try await TestApp.make(database: try AppDatabase.openFile(at: path, migrationsFolder: migrations)) { $0.mail = .testing(url) }
        try await first.seed()
        let token = try await first.database.createAPIToken(
            userId: try #require(try await first.database.user(email: "manager@test.org")).id,
            name: "t",
            actor: .system
        ).token
        try await first.test(.router) { client in
            let response = try await client.api(
                .post,
                "/api/v1/manage/sites/alpha/invitations",
                token: token,
                json: #"{"email":"new.ranger@parks.example","role":"author"}"#
            )
            #expect(response.status == .created, "\(response.text)")
            #expect((response.json as? [String: Any])?["emailed"] as? Bool == true)
            #expect((response.json as? [String: Any])?["link"] == nil, "the link goes by email only")
        }
        // Nobody listens on the port: each attempt fails and is kept, with the error for the admins.
        _ = await first.outbox.drain(now: { Date().addingTimeInterval(3600) })
        let secondAttempt = Date()
        _ = await first.outbox.drain(now: { Date().addingTimeInterval(3600) })
        let waiting = try #require(try await first.database.outbox(recipient: "new.ranger@parks.example").first)
        #expect(waiting.state == .queued)
        #expect(waiting.attempts == 2)
        #expect(waiting.lastError?.isEmpty == false)
        // Later than the failed attempt (the test settings' delays are a tenth of a second, so not compared with now).
        #expect(waiting.nextAttemptAt > secondAttempt, "the next attempt waits")
        try await first.test(.router) { client in
            let admin = try await client.signIn("admin@test.org")
            let page = try await client.get("/admin/email", session: admin)
            #expect(page.status == .ok)
            #expect(page.text.contains("retrying after an error: 1"))
            #expect(page.text.contains("new.ranger@parks.example"))
        }

        // The app stops; a new one opens the same file, its outbox service running, and the server comes back.
        let second = try await TestApp.make(database: try AppDatabase.openFile(at: path, migrationsFolder: migrations)) { $0.mail = .testing(url) }
        let service = Task { try await second.outbox.run() }
        defer { service.cancel() }
        let sink = try await SMTPSink.start(port: port)
        defer { sink.stop() }
        let deadline = ContinuousClock.now + .seconds(60)
        while sink.messages().isEmpty && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        let received = try #require(sink.messages().first, "the retried message never arrived")
        #expect(received.to == "new.ranger@parks.example")
        #expect(received.subject == "You are invited to Alpha District on Trail Companion")
        // The server has the message; the service records that right after (wait for that state, not for a time).
        var sent = try #require(try await second.database.outbox(recipient: "new.ranger@parks.example").first)
        while sent.state != .sent && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            sent = try #require(try await second.database.outbox(recipient: "new.ranger@parks.example").first)
        }
        #expect(sent.state == .sent)
        #expect(await second.outbox.drain(now: { Date().addingTimeInterval(3600) }) == 0)
        #expect(sink.messages().count == 1, "sent exactly once")
    }

    /// `smtp://` to anything but loopback requires STARTTLS: a server on this machine's network address that offers
    /// none gets nothing (the message waits, with the reason), while the same server on loopback takes it.
    @Test func startTLSIsRequiredOffLoopback() async throws {
        let addresses = try await ChildProcess.run("hostname", ["-I"]).stdout.split(separator: " ")
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { $0.contains(".") && !$0.hasPrefix("127.") }
        let address = try #require(addresses.first, "this machine has no IPv4 address besides loopback")
        let sink = try await SMTPSink.start(host: "0.0.0.0")
        defer { sink.stop() }
        let app = try await TestApp.make { $0.mail = .testing(URL(string: "smtp://\(address):\(sink.port)")!) }
        try await app.database.write { db in
            try AppDatabase.enqueueMail(db, to: "d@parks.example", subject: "Over the network", body: "Hi.", kind: .approved)
        }
        #expect(await app.outbox.drain() == 0)
        let row = try #require(try await app.database.outbox(recipient: "d@parks.example").first)
        #expect(row.state == .queued && row.attempts == 1)
        #expect(row.lastError?.isEmpty == false)
        #expect(sink.messages().isEmpty, "nothing went over the network in clear text")

        let local = try await TestApp.make { $0.mail = .testing(URL(string: "smtp://127.0.0.1:\(sink.port)")!) }
        try await local.database.write { db in
            try AppDatabase.enqueueMail(db, to: "e@parks.example", subject: "On loopback", body: "Hi.", kind: .approved)
        }
        #expect(await local.outbox.drain() == 1)
        #expect(sink.messages().map(\.subject) == ["On loopback"])
    }

    /// After `maxAttempts` failures a message is given up (`failed`) and stays visible to administrators.
    @Test func givesUpAfterMaxAttempts() async throws {
        let port = Int(try freeLocalPort())
        var settings = MailSettings.testing(URL(string: "smtp://127.0.0.1:\(port)")!)
        settings.maxAttempts = 3
        let app = try await TestApp.make { $0.mail = settings }
        try await app.database.write { db in
            try AppDatabase.enqueueMail(db, to: "c@parks.example", subject: "Hello", body: "Hi.", kind: .denied)
        }
        for _ in 0..<5 { _ = await app.outbox.drain(now: { Date().addingTimeInterval(3600) }) }
        let row = try #require(try await app.database.outbox(recipient: "c@parks.example").first)
        #expect(row.state == .failed && row.attempts == 3)
        let summary = try await app.database.outboxSummary()
        #expect(summary.failed == 1 && summary.problems.map(\.id) == [row.id])
    }

    /// The settings: STARTTLS is required except on loopback; no credentials in the URL; the sender is one address.
    @Test func settingsAreChecked() throws {
        #expect(try MailSettings.parseURL("smtp://mail.parks.example:587").absoluteString == "smtp://mail.parks.example:587")
        #expect(try MailSettings.parseURL("smtps://mail.parks.example:465").absoluteString == "smtps://mail.parks.example:465")
        #expect(throws: MailSettingsProblem.self) { try MailSettings.parseURL("http://mail.parks.example") }
        #expect(throws: MailSettingsProblem.self) { try MailSettings.parseURL("smtp://user:pw@mail.parks.example") }
        #expect(MailSettings(url: URL(string: "smtp://127.0.0.1:25")!, from: "a@b.org").isLoopback)
        #expect(MailSettings(url: URL(string: "smtp://localhost:25")!, from: "a@b.org").isLoopback)
        #expect(!MailSettings(url: URL(string: "smtp://mail.parks.example:587")!, from: "a@b.org").isLoopback)
        #expect(try MailSettings.parseFrom("Parks <trail@parks.example>") == "Parks <trail@parks.example>")
        #expect(throws: MailSettingsProblem.self) { try MailSettings.parseFrom("Parks <trail@parks.example>\nBcc: x@y.org") }
        // The default sender's domain: the public URL's host, else the machine's name, when either is a mail domain.
        #expect(MailSettings.defaultFrom(hostName: "trails.parks.example") == "Trail Companion <trail@trails.parks.example>")
        #expect(MailSettings.defaultFrom(hostName: "vm", publicURL: "https://tours.parks.example") == "Trail Companion <trail@tours.parks.example>")
        #expect(MailSettings.defaultFrom(hostName: "tc1") == nil, "trail@tc1 is refused by mail servers: --mail-from is asked for")
        #expect(MailSettings.defaultFrom(hostName: "vm", publicURL: "http://127.0.0.1:8080") == nil)
        #expect(MailSettings.defaultFrom(hostName: "localhost.localdomain") == nil)
        // A subject can never start a header of its own.
        let message = MailMessage(from: "a@b.org", to: "c@d.org", subject: "Hi\r\nBcc: evil@x.org", body: "x")
        #expect(!String(decoding: message.rendered(), as: UTF8.self).contains("\r\nBcc:"))
    }

    /// The command line: the four settings are in `serve --help`, and a wrong one stops the server at start with a
    /// sentence naming it (a password file without an SMTP URL, a URL of another scheme, credentials in the URL).
    @Test(.enabled(if: CLI.isBuilt, "build it first: swift build --product trail-companion"))
    func theCommandLineChecksTheSettings() async throws {
        let help = try await CLI.run(["serve", "--help"], data: nil, root: nil)
        for name in ["--smtp-url", "--smtp-user", "--smtp-password-file", "--mail-from", "TRAIL_SMTP_URL", "TRAIL_MAIL_FROM"] {
            #expect(help.output.contains(name), "serve --help names \(name)")
        }
        let data = TestScratch.folder("email-cli")
        for (arguments, message) in [
            (["--smtp-user", "trail"], "need --smtp-url"),
            (["--smtp-url", "http://mail.parks.example"], "smtp:// or smtps://"),
            (["--smtp-url", "smtp://me:pw@mail.parks.example:587"], "not in the URL"),
            (["--smtp-url", "smtp://mail.parks.example:587", "--mail-from", "not an address"], "--mail-from"),
        ] {
            let result = try await CLI.run(["serve"] + arguments, data: data)
            #expect(result.status != 0, "\(arguments) was accepted")
            #expect(result.errors.contains(message), "\(arguments): \(result.errors)")
        }
    }

    /// Each state column of the email tables lists exactly its Swift enum's cases.
    @Test func stateColumnsMatchTheirEnums() async throws {
        let database = try AppDatabase.inMemory(migrationsFolder: MigrationTests.migrationsFolder)
        let sql = try await database.read { db in
            try String.fetchAll(
                db,
                sql: "SELECT sql FROM sqlite_master WHERE tbl_name IN ('outbox', 'invitation', 'notificationOptOut') AND type = 'table'"
            )
            .joined(separator: "\n")
        }
        func values(_ column: String) -> Set<String> {
            let start = sql.range(of: "\(column) TEXT")!
            return Set(StateColumnTests.allowedValues(of: column, in: String(sql[start.lowerBound...])) ?? [])
        }
        #expect(values("state") == Set(OutboxState.allCases.map(\.rawValue)))
        #expect(values("kind") == Set(MailKind.allCases.map(\.rawValue)))
        #expect(values("role") == Set(SiteRole.allCases.map(\.rawValue)))
        let optOutSQL = String(sql[sql.range(of: "CREATE TABLE notificationOptOut")!.lowerBound...])
        let optOutKinds = StateColumnTests.allowedValues(of: "kind", in: String(optOutSQL[optOutSQL.range(of: "kind TEXT")!.lowerBound...])) ?? []
        #expect(Set(optOutKinds) == Set(MailKind.notifications.map(\.rawValue)))
    }
}
