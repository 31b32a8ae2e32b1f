import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import MalwareScan
import NIOConcurrencyHelpers

/// Free space of the file system that holds a folder.
package enum FreeSpace {
    /// Bytes an unprivileged process may still write there (`statvfs`'s `f_bavail`), nil when it cannot be read.
    static func available(at folder: URL) -> Int64? {
        var stats = statvfs()
        guard statvfs(folder.path, &stats) == 0 else { return nil }
        return Int64(stats.f_bavail) * Int64(stats.f_frsize)
    }

    static func describe(_ bytes: Int64) -> String { ByteFormat.string(bytes) }

    /// "1073741824", "512M", "2G", "1.5GiB": bytes, with an optional binary unit.
    package static func parse(_ text: String) -> Int64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).uppercased()
        let kibi: Double = 1024
        let mebi = kibi * 1024
        let gibi = mebi * 1024
        let tebi = gibi * 1024
        let units: [(String, Double)] = [
            ("TIB", tebi), ("GIB", gibi), ("MIB", mebi), ("KIB", kibi),
            ("TB", tebi), ("GB", gibi), ("MB", mebi), ("KB", kibi),
            ("T", tebi), ("G", gibi), ("M", mebi), ("K", kibi), ("B", 1),
        ]
        for (suffix, factor) in units where trimmed.hasSuffix(suffix) {
            guard let number = Double(trimmed.dropLast(suffix.count).trimmingCharacters(in: .whitespaces)), number >= 0 else { return nil }
            return Int64(number * factor)
        }
        return Int64(trimmed).flatMap { $0 >= 0 ? $0 : nil }
    }
}

/// Refuses uploads with 507 once the data folder's disk is below the free-space floor (`--min-free-space`), before
/// they start filling it: a full disk would fail them half-way anyway, and could fail the database's writes too.
///
/// An upload is any POST, PUT or PATCH whose body is a file: multipart, a tus upload's creation (`Upload-Length`) and
/// chunks (`application/offset+octet-stream`), or a body over 1 MiB. Small forms (saving a waypoint's text, approving) still work, so rangers can keep editing and
/// reviewers keep reviewing while an operator frees space.
struct DiskSpaceMiddleware<Context: RequestContext>: RouterMiddleware {
    let dataFolder: URL
    let floor: Int64

    static func isUpload(_ request: Request) -> Bool {
        guard [.post, .put, .patch].contains(request.method) else { return false }
        let contentType = request.headers[.contentType]?.lowercased() ?? ""
        if contentType.hasPrefix("multipart/") || contentType.hasPrefix("application/offset+octet-stream") { return true }
        if request.headers[HTTPField.Name("Upload-Length")!] != nil { return true }  // a tus upload being created
        return (request.headers[.contentLength].flatMap { Int64($0) } ?? 0) > 1 << 20
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if floor > 0, Self.isUpload(request), let free = FreeSpace.available(at: dataFolder), free < floor {
            throw HTTPError(
                .insufficientStorage507,
                message: "The server's disk is almost full (\(FreeSpace.describe(free)) free, "
                    + "\(FreeSpace.describe(floor)) kept free), so uploads are paused. Nothing was stored; please try again "
                    + "once an administrator has freed space."
            )
        }
        return try await next(request, context)
    }
}

extension HTTPResponse.Status {
    /// RFC 4918's 507, which swift-http-types does not name.
    static let insufficientStorage507 = HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage")
}

/// `GET /readyz`: whether this server can do its work now, for a load balancer or a service monitor (`/healthz` only
/// says the process answers). 200 or 503.
///
/// Anyone may ask, so an anonymous answer must be cheap and tell nothing but the status: the database write check runs
/// at most once per `writeCheckInterval` (a load balancer polling every second, or a stranger polling in a loop, does not
/// cost a write and an fsync each), and the reasons, free bytes and signature count (which name the data folder's path
/// and the disk's state) go only to a signed-in admin or to a caller on this machine (loopback, not through a proxy).
struct ReadinessCheck: Sendable {
    let database: AppDatabase
    let scanner: any MalwareScanner
    let dataFolder: URL
    let floor: Int64
    let writeCheck: CachedWriteCheck

    init(database: AppDatabase, scanner: any MalwareScanner, dataFolder: URL, floor: Int64, writeCheckInterval: Duration = .seconds(5)) {
        self.database = database
        self.scanner = scanner
        self.dataFolder = dataFolder
        self.floor = floor
        self.writeCheck = CachedWriteCheck(database: database, interval: writeCheckInterval)
    }

    struct Answer: Encodable {
        let status: String
        let reasons: [String]
        let freeBytes: Int64?
        let signatures: Int
    }

    /// What an anonymous caller gets.
    struct Summary: Encodable {
        let status: String
    }

    func check() async -> Answer {
        var reasons: [String] = []
        if let problem = await writeCheck.problem() { reasons.append(problem) }
        let signatures = await scanner.signatureCount
        if !(await scanner.hasSignatures) {
            reasons.append("no malware signature database is loaded: uploads stay pending (install clamav-freshclam, or check --clamav-db)")
        }
        let free = FreeSpace.available(at: dataFolder)
        if let free, free < floor {
            reasons.append(
                "the data folder's disk has \(FreeSpace.describe(free)) free, below the floor of \(FreeSpace.describe(floor)) (--min-free-space): uploads are refused"
            )
        } else if free == nil {
            reasons.append("the free space of \(dataFolder.path) cannot be read")
        }
        return Answer(status: reasons.isEmpty ? "ready" : "not ready", reasons: reasons, freeBytes: free, signatures: signatures)
    }

    func respond(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let answer = await check()
        let status: HTTPResponse.Status = answer.reasons.isEmpty ? .ok : .serviceUnavailable
        var response =
            try Self.showsDetails(request, context)
            ? context.answer(answer, status: status, to: request) : context.answer(Summary(status: answer.status), status: status, to: request)
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// A signed-in admin, or a caller on this machine that no proxy forwarded (a request through nginx on the same
    /// machine carries `X-Forwarded-For`, and is a stranger's).
    static func showsDetails(_ request: Request, _ context: AppRequestContext) -> Bool {
        if context.user?.isAdmin == true { return true }
        guard let address = context.remoteAddress, request.headers[.xForwardedFor] == nil, request.headers[HTTPField.Name("Forwarded")!] == nil else {
            return false
        }
        return isLoopback(address)
    }

    static func isLoopback(_ address: String) -> Bool {
        address == "::1" || address.hasPrefix("127.") || address.lowercased().hasPrefix("::ffff:127.")
    }
}

/// The database write check of `/readyz`, done at most once per `interval`; callers in between get its last result.
/// A real write through the same writer the app uses (locks, permissions, a full disk all show here).
final class CachedWriteCheck: Sendable {
    let database: AppDatabase
    let interval: Duration
    private let last = NIOLockedValueBox<(at: ContinuousClock.Instant, problem: String?)?>(nil)
    /// The number of writes done, for tests.
    let writes = NIOLockedValueBox(0)

    init(database: AppDatabase, interval: Duration) {
        self.database = database
        self.interval = interval
    }

    func problem() async -> String? {
        let now = ContinuousClock.now
        if let last = last.withLockedValue({ $0 }), now - last.at < interval { return last.problem }
        var problem: String?
        do {
            try await database.checkWritable()
            writes.withLockedValue { $0 += 1 }
        } catch {
            problem = "the database cannot be written: \(error)"
        }
        last.withLockedValue { $0 = (now, problem) }
        return problem
    }
}
