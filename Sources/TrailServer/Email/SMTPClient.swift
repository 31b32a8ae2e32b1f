import CCurl
import Foundation
import NIOPosix

/// Hands one message to the SMTP server through libcurl (STARTTLS or SMTPS, AUTH, certificate checks, dot-stuffing).
/// `curl_easy_perform` blocks for the whole conversation, so it runs on a pool of its own (``MailPool``), never on an
/// event loop or a cooperative thread.
struct SMTPClient: Sendable {
    let settings: MailSettings

    /// Sends `message`; throws ``SMTPFailure`` with libcurl's explanation (never the password) when the server could not
    /// be reached or refused it.
    func send(_ message: MailMessage) async throws {
        let settings = self.settings
        let password = try settings.password()
        try await MailPool.run { try Self.perform(message, settings: settings, password: password) }
    }

    private static let globalInit: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    /// The message's bytes and how far libcurl has read them.
    private final class Upload {
        let bytes: [UInt8]
        var offset = 0
        init(_ data: Data) { bytes = [UInt8](data) }
    }

    private static func perform(_ message: MailMessage, settings: MailSettings, password: String?) throws {
        _ = globalInit
        guard let sender = MailMessage.address(in: message.from) else { throw SMTPFailure("the sender \(message.from) is not an address") }
        guard let recipient = MailMessage.address(in: message.to) else { throw SMTPFailure("the recipient is not an address") }
        guard let handle = curl_easy_init() else { throw SMTPFailure("libcurl could not start") }
        defer { curl_easy_cleanup(handle) }
        var recipients: UnsafeMutablePointer<curl_slist>? = nil
        recipients = curl_slist_append(recipients, "<\(recipient)>")
        defer { curl_slist_free_all(recipients) }
        let upload = Upload(message.rendered())
        let box = Unmanaged.passRetained(upload)
        defer { box.release() }
        var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)

        var code = CURLE_OK
        func check(_ result: CURLcode) { if code == CURLE_OK { code = result } }
        check(trail_curl_set_string(handle, CURLOPT_URL, settings.url.absoluteString))
        check(trail_curl_set_string(handle, CURLOPT_MAIL_FROM, "<\(sender)>"))
        check(trail_curl_set_list(handle, CURLOPT_MAIL_RCPT, recipients))
        check(trail_curl_set_long(handle, CURLOPT_UPLOAD, 1))
        check(
            trail_curl_set_read_function(handle) { buffer, size, count, userdata in
                guard let buffer, let userdata else { return 0 }
                let upload = Unmanaged<Upload>.fromOpaque(userdata).takeUnretainedValue()
                let length = min(size * count, upload.bytes.count - upload.offset)
                guard length > 0 else { return 0 }
                upload.bytes.withUnsafeBufferPointer { source in
                    UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress! + upload.offset, byteCount: length)
                }
                upload.offset += length
                return length
            }
        )
        check(trail_curl_set_pointer(handle, CURLOPT_READDATA, box.toOpaque()))
        // STARTTLS is required, except towards a relay on this machine (the message never crosses a network).
        if !settings.implicitTLS {
            check(trail_curl_set_long(handle, CURLOPT_USE_SSL, Int(settings.isLoopback ? CURLUSESSL_TRY.rawValue : CURLUSESSL_ALL.rawValue)))
        }
        check(trail_curl_set_long(handle, CURLOPT_SSL_VERIFYPEER, 1))
        check(trail_curl_set_long(handle, CURLOPT_SSL_VERIFYHOST, 2))
        if let user = settings.user {
            check(trail_curl_set_string(handle, CURLOPT_USERNAME, user))
            check(trail_curl_set_string(handle, CURLOPT_PASSWORD, password ?? ""))
        }
        // Threads of our own: libcurl must not use signals for its time-outs.
        check(trail_curl_set_long(handle, CURLOPT_NOSIGNAL, 1))
        check(trail_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT, 15))
        check(trail_curl_set_long(handle, CURLOPT_TIMEOUT, Int(settings.timeout)))
        check(trail_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, "smtp,smtps"))
        guard code == CURLE_OK else { throw SMTPFailure("libcurl refused an option: \(String(cString: curl_easy_strerror(code)))") }
        let result = errorBuffer.withUnsafeMutableBufferPointer { buffer -> CURLcode in
            _ = trail_curl_set_pointer(handle, CURLOPT_ERRORBUFFER, buffer.baseAddress)
            return curl_easy_perform(handle)
        }
        guard result == CURLE_OK else {
            // The buffer is a C string: the bytes up to its first NUL.
            let detail = String(decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw SMTPFailure(detail.isEmpty ? String(cString: curl_easy_strerror(result)) : detail)
        }
    }
}

/// Why a message was not accepted; the text comes from libcurl and the server, and holds no password.
struct SMTPFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The threads that wait for SMTP servers: a conversation can take up to its time-out, so it must not hold the
/// shared pool that bcrypt and file checks need (see `BlockingWork`). One message at a time is plenty for a panel's mail.
enum MailPool {
    static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await pool.runIfActive(work)
    }

    private static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        return pool
    }()
}
