import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers
import PackageFormat
import TrailAPI

/// The routes the Android and iOS apps use, under `/api/v1`, without sign-in (docs/api.md, "Mobile API"). Their
/// bodies are the `Components.Schemas` types generated from `openapi.json` (module TrailAPI), the same types
/// TrailClient decodes.
struct MobileAPI: Sendable {
    let database: AppDatabase
    let paths: DataPaths
    let signingKey: SigningKey
    let catalog: CatalogSigner
    let publicURL: String
    /// `openapi.json` as loaded at start (nil when missing).
    let openAPIDocument: String?
    let files: ContentStore
    let metrics: AppMetrics
    /// With `--storage` and `--public-download-url`: objects confirmed in the bucket are answered with a redirect there.
    let distribution: DistributionState?
    /// Encoded answers of the read routes, until the data changes.
    /// Who reported a verified download today.
    let verifiedDownloads: VerifiedDownloads
    /// With nginx in front (`--accel-redirect`): package and file bytes are sent by nginx.
    let accel: AccelRedirect?

    /// The route table; each handler is named after its `operationId` in `openapi.json`.
    func addRoutes(to router: some RouterMethods<AppRequestContext>) {
        router.get("/sites", use: listSites)
        router.get("/sites/{slug}/packages", use: listSitePackages)
        router.get("/packages/{id}", use: getPackage)
        for method in [HTTPRequest.Method.get, .head] {
            router.on("/packages/{id}/download", method: method, use: downloadPackage)
            router.on("/packages/{id}/versions/{version}/download", method: method, use: downloadPackageVersion)
        }
        router.get("/packages/{id}/hash", use: getPackageHash)
        router.post("/packages/{id}/verify", use: verifyPackage)
        addUpdateRoutes(to: router)
        router.get("/signing-key", use: getSigningKey)
        router.get("/catalog", use: getCatalog)
        let openAPI = openAPIDocument.map { ByteBuffer(string: $0) }
        router.get("/openapi.json") { request, context in try getOpenAPIDocument(openAPI) }
    }

    /// Sites (parks, districts) and how many packages each publishes.
    func listSites(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let sites = try await database.siteSummaries().map {
            Components.Schemas.Site(slug: $0.site.slug, name: $0.site.name, description: $0.site.description, packageCount: $0.packageCount)
        }
        return try ReadAnswer.json(sites, request: request)
    }

    /// The published packages of one site, latest versions.
    func listSitePackages(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let slug = try context.parameters.require("slug")
        guard let packages = try await database.publishedPackages(ofSite: slug) else { throw NotFound() }
        return try ReadAnswer.json(packages.map(item), request: request)
    }

    /// Full metadata of a published package (latest version), with its manifest and signature.
    func getPackage(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let published = try await publishedPackage(context)
        let manifest = try published.version.decodedManifest()
        let version = published.version
        guard let signature = Data(base64Encoded: version.signature) else {
            throw HTTPError(.internalServerError, message: "The stored signature of this package is not base64.")
        }
        let detail = Components.Schemas.PackageDetail(
            id: published.package.id,
            name: version.name,
            description: version.description,
            size: version.size,
            version: version.version,
            sha256: version.sha256,
            updatedAt: version.createdAt,
            park: published.siteName,
            site: published.siteSlug,
            bounds: manifest.bounds,
            waypointCount: manifest.waypoints.count,
            signature: Base64EncodedData(signature),
            manifest: manifest,
            downloadURL: APIURL.download(publicURL, packageId: published.package.id, version: version.version),
            languages: manifest.languages
        )
        return try ReadAnswer.json(detail, request: request)
    }

    /// The latest version's zip (GET and HEAD).
    func downloadPackage(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let published = try await publishedPackage(context)
        // The latest version moves: clients revalidate (ETag), and If-Range stops a resume from splicing two versions.
        return try await download(published.version, request: request, context: context, cacheControl: "no-cache")
    }

    /// One released version's zip (GET and HEAD): immutable, cacheable for a year.
    func downloadPackageVersion(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let published = try await publishedPackage(context)
        guard let number = context.parameters.get("version", as: Int.self),
            let version = try await database.packageVersion(packageId: published.package.id, version: number)
        else { throw NotFound() }
        return try await download(version, request: request, context: context, cacheControl: "public, max-age=31536000, immutable")
    }

    /// The latest version's SHA-256, number and size.
    func getPackageHash(_ request: Request, _ context: AppRequestContext) async throws -> Components.Schemas.PackageHash {
        let version = try await publishedPackage(context).version
        return Components.Schemas.PackageHash(sha256: version.sha256, version: version.version, size: version.size)
    }

    /// An app reports a checked download; valid reports are counted per version, once a day per client address.
    func verifyPackage(_ request: Request, _ context: AppRequestContext) async throws -> Components.Schemas.VerifyResult {
        let published = try await publishedPackage(context)
        let body = try await request.decode(as: Components.Schemas.VerifyRequest.self, context: context)
        // A download of any released version can be verified against that version.
        let target = try await database.packageVersion(packageId: published.package.id, version: body.version) ?? published.version
        let valid = target.version == body.version && target.sha256 == body.sha256.lowercased()
        if valid, verifiedDownloads.isFirst(address: context.remoteAddress, packageId: target.packageId, version: target.version) {
            try await database.recordVerifiedDownload(packageId: target.packageId, version: target.version)
        }
        return Components.Schemas.VerifyResult(valid: valid, expected: .init(sha256: target.sha256, version: target.version, size: target.size))
    }

    /// The server's Ed25519 public key.
    func getSigningKey(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        try ReadAnswer.json(Components.Schemas.SigningKey(signingKey), request: request)
    }

    /// The signed catalog: the body's exact bytes, their signature in `Catalog-Signature`, a 304 while unchanged.
    func getCatalog(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let signed = try await catalog.current()
        return HTTPCaching.json(ByteBuffer(bytes: signed.body), etag: signed.etag, headers: [.catalogSignature: signed.signature], request: request)
    }

    /// This API's OpenAPI document (`openapi.json` as loaded at start, encoded once).
    func getOpenAPIDocument(_ document: ByteBuffer?) throws -> Response {
        guard let document else {
            throw HTTPError(.internalServerError, message: "The API description openapi.json is missing from the root folder.")
        }
        return Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-cache"], body: .init(byteBuffer: document))
    }

    func item(_ published: PublishedPackage) -> Components.Schemas.PackageSummary {
        Components.Schemas.PackageSummary(
            id: published.package.id,
            name: published.version.name,
            description: published.version.description,
            size: published.version.size,
            version: published.version.version,
            sha256: published.version.sha256,
            updatedAt: published.version.createdAt
        )
    }

    /// Unknown → 404; known but unpublished → 410 (the app can tell the visitor it was withdrawn).
    func publishedPackage(_ context: AppRequestContext) async throws -> PublishedPackage {
        guard let id = context.parameters.get("id") else { throw NotFound() }
        switch try await database.publishedPackage(id: id) {
        case .missing: throw NotFound()
        case .unpublished: throw HTTPError(.gone, message: "This package has been unpublished.")
        case .published(let published): return published
        }
    }

    func download(_ version: PackageVersion, request: Request, context: AppRequestContext, cacheControl: String) async throws -> Response {
        if let url = distribution?.publicURL(for: DistributionPath.zip(version.packageId, version.version)) {
            return Self.redirect(to: url, cacheControl: cacheControl, version: version.version)
        }
        let fileName = "\(version.mapName)-v\(version.version).zip"
        return try await FileResponder.respond(
            fileAt: paths.absolute(version.storedPath),
            contentType: "application/zip",
            etag: "\"\(version.sha256)\"",
            request: request,
            headers: [
                .contentDisposition: "attachment; filename=\"\(fileName)\"", .packageVersion: "\(version.version)", .cacheControl: cacheControl,
            ],
            chunkSize: 128 * 1024,
            eventLoop: context.eventLoop,
            counted: CountedDownload(metrics: metrics, route: .package),
            accel: accel
        )
    }

    /// `302` to the same immutable object in the bucket (behind the CDN). The latest-version route's redirect moves with
    /// the next release, so it is `no-cache` like the route itself; a versioned one may be cached.
    static func redirect(to url: String, cacheControl: String, version: Int? = nil) -> Response {
        var headers: HTTPFields = [.location: url, .cacheControl: cacheControl]
        if let version { headers[.packageVersion] = "\(version)" }
        return Response(status: .found, headers: headers)
    }

    /// JSON with a strong ETag over the exact bytes; `If-None-Match` → 304 so apps can poll cheaply.
    func cachedJSON(_ value: some Encodable, request: Request) throws -> Response {
        HTTPCaching.json(ByteBuffer(bytes: try WireCoding.encoder.encode(value)), request: request)
    }

}

extension Components.Schemas.SigningKey {
    /// What `GET /api/v1/signing-key` (and the bucket's copy) publishes: the raw 32-byte Ed25519 public key.
    init(_ key: SigningKey) {
        self.init(algorithm: .ed25519, publicKey: Base64EncodedData(key.privateKey.publicKey.rawRepresentation))
    }
}

extension HTTPField.Name {
    static let packageVersion = Self("Package-Version")!
    static let catalogSignature = Self("Catalog-Signature")!
}
