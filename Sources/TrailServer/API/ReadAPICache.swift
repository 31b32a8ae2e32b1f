import Crypto
import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore

/// The encoded answers of the mobile API's read routes (`/sites`, `/sites/{slug}/packages`, `/packages/{id}`,
/// `/signing-key`) and the visitors' index (`/visit`, its pages without a search), with their ETags, kept until the
/// data they are made of changes. Every app start and update check asks for these, and between two releases the answer
/// is always the same bytes: encoding or rendering, hashing and the database reads are done once per change instead of
/// once per request, so these routes cost about as much as serving a static file, and a 304 costs less.
///
/// At most ``maxEntries`` answers are kept between two changes; past that an answer is made and not kept, so no run
/// of distinct addresses (a crawler walking page links, `?site=` spelled a thousand ways) grows the memory.
///
/// Invalidation is by a generation counter that moves on with every committed transaction touching the tables the
/// answers are made of (a release, unpublish or rollback moves `catalogState` and `package`; a site edit moves
/// `site`). GRDB reports the commit on the writer's queue before the write returns, so the request that released,
/// unpublished or rolled back has its answer only after the old bodies are gone: no stale answer follows a change.
/// A request takes the generation *before* it reads the database, so a body built from data a later commit changed
/// is stored under the old generation and never served after that commit.
final class ReadAPICache: Sendable {
    struct Entry: Sendable {
        let generation: Int
        let body: ByteBuffer
        let etag: String
        let contentType: String
    }

    static let maxEntries = 1_000

    /// Tables whose changes can change an answer. Not `packageVersion`: its rows are written with `package` at a
    /// release, and its only other write is the verified-download count, which no answer shows (and which every app
    /// sends after each download: it must not empty the cache).
    static let tables = ["catalogState", "site", "package"]

    private let state = NIOLockedValueBox<(generation: Int, entries: [String: Entry])>((0, [:]))
    private let observation = NIOLockedValueBox<AnyDatabaseCancellable?>(nil)
    /// False until `observe` started: a cache that cannot learn of changes keeps nothing.
    private let isObserving = NIOLockedValueBox(false)

    init() {}

    /// Starts following commits of `writer`; kept until the cache goes.
    func observe(_ database: AppDatabase) throws {
        let cancellable = try database.observeChanges(
            to: Self.tables,
            onError: { [weak self] _ in self?.invalidate() },
            onChange: { [weak self] in self?.invalidate() }
        )
        observation.withLockedValue { $0 = cancellable }
        isObserving.withLockedValue { $0 = true }
    }

    var generation: Int { state.withLockedValue { $0.generation } }

    func invalidate() {
        state.withLockedValue {
            $0.generation += 1
            $0.entries.removeAll(keepingCapacity: true)
        }
    }

    /// The answer for `key`: the stored one while nothing changed, else `make()` encoded, hashed and stored. `make`
    /// throws for answers that are not kept (404, 410).
    func response(_ key: String, request: Request, make: () async throws -> some Encodable) async throws -> Response {
        try await response(key, contentType: "application/json", request: request) {
            ByteBuffer(bytes: try JSONResponse.encoder.encode(try await make()))
        }
    }

    /// Any kept answer: the stored bytes while nothing changed, else `make()`'s, hashed and stored. `make` throws for
    /// answers that are not kept.
    func response(_ key: String, contentType: String, request: Request, make: () async throws -> ByteBuffer) async throws -> Response {
        guard isObserving.withLockedValue({ $0 }) else {
            return Self.answer(try await make(), contentType: contentType, request: request)
        }
        let current = generation
        if let entry = state.withLockedValue({ $0.entries[key] }), entry.generation == current {
            return Self.respond(entry, request: request)
        }
        let body = try await make()
        let entry = Entry(generation: current, body: body, etag: HTTPCaching.etag(of: body), contentType: contentType)
        state.withLockedValue { state in
            if state.generation == current, state.entries.count < Self.maxEntries { state.entries[key] = entry }
        }
        return Self.respond(entry, request: request)
    }

    /// An answer made for this request only (not kept), answered the same way as a kept one.
    static func answer(_ body: ByteBuffer, contentType: String, request: Request) -> Response {
        respond(Entry(generation: 0, body: body, etag: HTTPCaching.etag(of: body), contentType: contentType), request: request)
    }

    /// The bytes with a strong ETag over them, `no-cache`: `If-None-Match` → 304 so clients can poll cheaply.
    static func respond(_ entry: Entry, request: Request) -> Response {
        HTTPCaching.answer(entry.body, etag: entry.etag, headers: [.contentType: entry.contentType, .cacheControl: "no-cache"], request: request)
    }

    /// How many answers are kept now (tests).
    var count: Int { state.withLockedValue { $0.entries.count } }
}
