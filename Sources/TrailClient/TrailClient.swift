import Foundation
import PackageFormat
internal import TrailAPI

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What an Android or iOS app (or a script) uses to talk to a Trail Companion server's mobile API
/// (`/api/v1`, no sign-in): list sites and packages, fetch and check the signed catalog, download
/// a package with resume, verify it, extract it safely, and report the verified download.
///
/// ```swift
/// let client = TrailClient(baseURL: URL(string: "https://tours.example.org")!)
/// let catalog = try await client.catalog(pinnedPublicKey: pinnedKey, lastSeenVersion: stored.catalogVersion)
/// let zip = try await client.downloadPackage(id: entry.id, to: folder.appendingPathComponent("\(entry.id).zip"))
/// let check = TrailClient.verify(zip: zip.file, publicKey: pinnedKey, expectedSHA256: entry.sha256)
/// guard check.isValid else { … }
/// try TrailClient.extract(zip: zip.file, to: tourFolder)
/// _ = try await client.reportVerified(packageId: entry.id, sha256: check.sha256, version: entry.version)
/// ```
public struct TrailClient: Sendable {
    /// The server's address, e.g. `https://tours.example.org` (an `/api/v1` suffix is accepted too).
    public let baseURL: URL
    /// Used for the JSON requests; downloads run on a session made from its configuration (they
    /// need a delegate to stream to disk).
    public let session: URLSession

    public init(baseURL: URL, session: URLSession = .shared) {
        var base = baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        if base.hasSuffix("/api/v1") { base.removeLast("/api/v1".count) }
        self.baseURL = URL(string: base) ?? baseURL
        self.session = session
    }

    /// `<baseURL>/api/v1/<path>`.
    public func apiURL(_ path: String) -> URL {
        URL(string: baseURL.absoluteString + "/api/v1/" + path.drop(while: { $0 == "/" }))!
    }

    static func escape(_ component: String) -> String {
        component.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? component
    }

    // MARK: Listing

    /// `GET /sites`.
    public func sites() async throws -> [SiteSummary] {
        try await getJSON("sites")
    }

    /// `GET /sites/{slug}/packages`: the site's published packages (latest versions).
    public func packages(site slug: String) async throws -> [PackageSummary] {
        try await getJSON("sites/\(Self.escape(slug))/packages")
    }

    /// Like ``packages(site:)``, but answers `.notModified` when `etag` (from an earlier answer) still matches.
    public func packages(site slug: String, ifNoneMatch etag: String?) async throws -> Fetched<[PackageSummary]> {
        try await getConditionalJSON("sites/\(Self.escape(slug))/packages", etag: etag)
    }

    /// `GET /packages/{id}`: full metadata, including the manifest and its signature.
    public func package(id: String) async throws -> PackageDetail {
        try await getJSON("packages/\(Self.escape(id))")
    }

    /// Like ``package(id:)``, but answers `.notModified` when `etag` still matches.
    public func package(id: String, ifNoneMatch etag: String?) async throws -> Fetched<PackageDetail> {
        try await getConditionalJSON("packages/\(Self.escape(id))", etag: etag)
    }

    /// `GET /packages/{id}/hash`: the latest version's SHA-256, number and size.
    public func packageHash(id: String) async throws -> PackageHash {
        try await getJSON("packages/\(Self.escape(id))/hash")
    }

    /// `HEAD /packages/{id}/versions/{n}/download`: the SHA-256 (from the `ETag`) and size of one
    /// released version, to check a copy the app (or an operator) already has.
    public func releasedVersion(packageId: String, version: Int) async throws -> PackageHash {
        var request = URLRequest(url: apiURL("packages/\(Self.escape(packageId))/versions/\(version)/download"))
        request.httpMethod = "HEAD"
        request.cachePolicy = .reloadIgnoringLocalCacheData
        let (_, response) = try await send(request)
        guard let sha256 = Transfer.sha256(fromETag: response.value(forHTTPHeaderField: "ETag")),
            let size = response.value(forHTTPHeaderField: "Content-Length").flatMap({ Int64($0) })
        else {
            throw TrailClientError.invalidResponse("no SHA-256 ETag or Content-Length for version \(version)")
        }
        return PackageHash(sha256: sha256, version: version, size: size)
    }

    /// `GET /signing-key`: the server's Ed25519 public key (base64). Pin it in the app rather than
    /// trusting it from the network at every start.
    public func signingKey() async throws -> SigningKeyInfo {
        let info: SigningKeyInfo = try await getJSON("signing-key")
        guard SignatureCheck.publicKey(fromBase64: info.publicKeyBase64) != nil else {
            throw TrailClientError.invalidResponse("the signing key is not a base64 encoded Ed25519 key")
        }
        return info
    }

    /// `POST /packages/{id}/verify`: tells the server a download of `version` with `sha256` was checked
    /// (the server counts verified downloads) and returns what the server expects.
    public func reportVerified(packageId: String, sha256: String, version: Int) async throws -> VerifyAnswer {
        var request = URLRequest(url: apiURL("packages/\(Self.escape(packageId))/verify"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try WireJSON.encoder().encode(Components.Schemas.VerifyRequest(sha256: sha256.lowercased(), version: version))
        let (data, _) = try await send(request)
        return try decode(VerifyAnswer.self, data)
    }

    /// `POST /events`: reports what visitors did, for the park's statistics. The server keeps only counts per day
    /// and kind; send no identifier of the visitor (there is no field for one), and send nothing when the visitor
    /// asked not to be tracked. At most 200 events a call (``VisitorEvent/maxPerPost``); an app that was offline
    /// sends what it queued, with each event's own day, once it is back online.
    @discardableResult
    public func sendEvents(_ events: [VisitorEvent]) async throws -> EventsAnswer {
        var request = URLRequest(url: apiURL("events"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try WireJSON.encoder().encode(Components.Schemas.VisitEvents(events: events.map(\.wire)))
        let (data, _) = try await send(request)
        return EventsAnswer(try decode(Components.Schemas.EventsAccepted.self, data))
    }

    // MARK: Catalog

    /// `GET /catalog`, checked: the `Catalog-Signature` header must be a valid Ed25519 signature of
    /// the exact body bytes by `pinnedPublicKey`; `catalogVersion` must not be older than
    /// `lastSeenVersion`; `expiresAt` must be after `now`. Throws ``CatalogError`` otherwise.
    public func catalog(pinnedPublicKey: String, lastSeenVersion: Int?, now: Date = Date()) async throws -> VerifiedCatalog {
        var request = URLRequest(url: apiURL("catalog"))
        request.cachePolicy = .reloadIgnoringLocalCacheData
        let (data, response) = try await send(request)
        return try Self.verifyCatalog(
            body: data,
            signature: response.value(forHTTPHeaderField: "Catalog-Signature"),
            pinnedPublicKey: pinnedPublicKey,
            lastSeenVersion: lastSeenVersion,
            now: now
        )
    }

    /// The checks of ``catalog(pinnedPublicKey:lastSeenVersion:now:)`` on bytes the app already has
    /// (for example a catalog stored on the device, checked again at start).
    public static func verifyCatalog(
        body: Data,
        signature: String?,
        pinnedPublicKey: String,
        lastSeenVersion: Int?,
        now: Date = Date()
    ) throws -> VerifiedCatalog {
        guard SignatureCheck.publicKey(fromBase64: pinnedPublicKey) != nil else { throw CatalogError.invalidPinnedKey }
        guard let signature = signature?.trimmingCharacters(in: .whitespaces), !signature.isEmpty else { throw CatalogError.missingSignature }
        guard let raw = Data(base64Encoded: signature),
            SignatureCheck.verify(signature: raw, of: body, publicKeyBase64: pinnedPublicKey)
        else {
            throw CatalogError.invalidSignature
        }
        let catalog: Catalog
        do {
            catalog = try WireJSON.decoder().decode(Catalog.self, from: body)
        } catch {
            throw CatalogError.malformed("\(error)")
        }
        if let lastSeenVersion, catalog.catalogVersion < lastSeenVersion {
            throw CatalogError.olderThanLastSeen(received: catalog.catalogVersion, lastSeen: lastSeenVersion)
        }
        guard catalog.expiresAt > now else {
            throw CatalogError.expired(expiresAt: Manifest.timestamp(catalog.expiresAt), now: Manifest.timestamp(now))
        }
        return VerifiedCatalog(catalog: catalog, body: body, signature: signature)
    }

    // MARK: Verification and extraction

    /// Checks a package zip completely: its SHA-256 (against `expectedSHA256` when given), the
    /// manifest's Ed25519 signature with `publicKey`, and every entry's size and SHA-256 against
    /// the manifest (``PackageVerifier``). Never throws: problems are in the report.
    public static func verify(zip: URL, publicKey: String?, expectedSHA256: String? = nil) -> PackageCheck {
        PackageCheck.run(zip: zip, publicKey: publicKey, expectedSHA256: expectedSHA256)
    }

    /// Extracts a package into `folder` (created; must be empty if it exists) without ever
    /// writing outside it: see ``SafeExtractor``.
    @discardableResult
    public static func extract(zip: URL, to folder: URL) throws -> SafeExtractor.Result {
        try SafeExtractor.extract(zip: zip, to: folder)
    }

    // MARK: HTTP

    func getJSON<T: Decodable>(_ path: String) async throws -> T {
        var request = URLRequest(url: apiURL(path))
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        let (data, _) = try await send(request)
        return try decode(T.self, data)
    }

    func getConditionalJSON<T: Decodable & Sendable>(_ path: String, etag: String?) async throws -> Fetched<T> {
        var request = URLRequest(url: apiURL(path))
        request.cachePolicy = .reloadIgnoringLocalCacheData
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let etag { request.setValue(etag, forHTTPHeaderField: "If-None-Match") }
        let (data, response) = try await send(request, accept: [304])
        if response.statusCode == 304 { return .notModified }
        return .modified(try decode(T.self, data), etag: response.value(forHTTPHeaderField: "ETag"))
    }

    func send(_ request: URLRequest, accept extra: Set<Int> = []) async throws -> (Data, HTTPURLResponse) {
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await Self.data(for: request, session: session)
        } catch {
            throw TrailClientError.transport("\(error.localizedDescription)")
        }
        guard let http = response as? HTTPURLResponse else { throw TrailClientError.invalidResponse("not an HTTP response") }
        guard (200..<300).contains(http.statusCode) || extra.contains(http.statusCode) else {
            let error = Self.apiError(data)
            throw TrailClientError.http(status: http.statusCode, code: error?.code, message: error?.message)
        }
        return (data, http)
    }

    /// A data task through its completion handler. Not `URLSession.data(for:)`: in swift-corelibs-foundation its
    /// cancellation handler calls `URLSessionTask.cancel()`, which waits (`queue.sync`) for the session's queue while
    /// that queue, finishing the same task, waits for the Swift task's status lock the cancellation holds: a
    /// deadlock when a task is cancelled just as its answer arrives. These answers are small JSON,
    /// so letting one finish after a cancel costs nothing; the large downloads have their own delegate (`Transfer`).
    static func data(for request: URLRequest, session: URLSession) async throws -> (Data, URLResponse) {
        try await withCheckedThrowingContinuation { continuation in
            session.dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(throwing: error)
                } else if let response {
                    continuation.resume(returning: (data ?? Data(), response))
                } else {
                    continuation.resume(throwing: URLError(.badServerResponse))
                }
            }.resume()
        }
    }

    func decode<T: Decodable>(_ type: T.Type, _ data: Data) throws -> T {
        do {
            return try WireJSON.decoder().decode(type, from: data)
        } catch {
            throw TrailClientError.invalidResponse("\(T.self): \(error)")
        }
    }

    /// The `{error: {code, message}}` body of an API error.
    static func apiError(_ data: Data) -> (code: String?, message: String?)? {
        guard let body = try? WireJSON.decoder().decode(Components.Schemas.APIError.self, from: data) else { return nil }
        return (body.error.code, body.error.message)
    }
}
