import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import PackageFormat
import TrailAPI

/// What an app on version `from` downloads to reach version `to`: the files of `to` whose SHA-256 `from` does not
/// list. A convenience only: the client trusts the signed manifest at `manifestURL`, never this plan. The type is
/// generated from `openapi.json` (TrailAPI); `downloadSize` counts each hash once (the manifest not included),
/// `fullSize` is the zip of `to`.
typealias UpdatePlan = Components.Schemas.UpdatePlan

extension UpdatePlan {
    static func make(from old: Manifest, to new: Manifest, fullSize: Int64, publicURL: String) -> UpdatePlan {
        let held = Set(old.listedFiles.map(\.sha256))
        let fetch = new.listedFiles.filter { !held.contains($0.sha256) }
        var counted = Set<String>()
        var downloadSize: Int64 = 0
        for file in fetch where counted.insert(file.sha256).inserted { downloadSize += file.size ?? 0 }
        let kept = Set(new.listedFiles.map(\.path))
        return UpdatePlan(
            from: old.version,
            to: new.version,
            manifestURL: APIURL.manifest(publicURL, packageId: new.packageId, version: new.version),
            files: fetch.map {
                Components.Schemas.UpdateFile(path: $0.path, sha256: $0.sha256, size: $0.size ?? 0, url: APIURL.file(publicURL, sha256: $0.sha256))
            },
            removed: old.listedFiles.map(\.path).filter { !kept.contains($0) },
            downloadSize: downloadSize,
            fullSize: fullSize
        )
    }
}

extension MobileAPI {
    static let immutable = "public, max-age=31536000, immutable"

    /// `/files/{sha256}`, `/packages/{id}/versions/{version}/manifest` and `/packages/{id}/updates?from=`; each handler
    /// is named after its `operationId` in `openapi.json`.
    func addUpdateRoutes(to router: some RouterMethods<AppRequestContext>) {
        for method in [HTTPRequest.Method.get, .head] {
            router.on("/files/{sha256}", method: method, use: getFileByHash)
        }
        router.get("/packages/{id}/versions/{version}/manifest", use: getPackageVersionManifest)
        router.get("/packages/{id}/updates", use: getUpdatePlan)
    }

    /// One file of a served version by its SHA-256 (GET and HEAD), or a redirect to it in the bucket.
    func getFileByHash(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let sha256 = try context.parameters.require("sha256")
        guard ContentStore.isHash(sha256) else {
            throw HTTPError(.badRequest, message: "A file is named by its SHA-256: 64 lower-case hex digits.")
        }
        if let url = distribution?.publicURL(for: DistributionPath.file(sha256)),
            try await files.index().entries[sha256] != nil
        {
            return Self.redirect(to: url, cacheControl: Self.immutable)
        }
        guard let file = try await files.file(sha256: sha256) else { throw NotFound() }
        // Served as bytes, whatever they are: the app knows each file's type from the manifest, and a browser
        // shown an uploaded file from this origin must never render it.
        return try await FileResponder.respond(
            fileAt: file,
            contentType: "application/octet-stream",
            etag: "\"\(sha256)\"",
            request: request,
            headers: [.cacheControl: Self.immutable],
            chunkSize: 128 * 1024,
            eventLoop: context.eventLoop,
            counted: CountedDownload(metrics: metrics, route: .file),
            accel: accel
        )
    }

    /// The exact signed bytes of one version's `manifest.json`, its signature in `Manifest-Signature`.
    func getPackageVersionManifest(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let published = try await publishedPackage(context)
        guard let number = context.parameters.get("version", as: Int.self),
            let version = try await database.packageVersion(packageId: published.package.id, version: number)
        else { throw NotFound() }
        // The exact bytes that were signed: never re-encoded.
        let body = ByteBuffer(string: version.manifestJSON)
        let headers: HTTPFields = [
            .contentType: "application/json", .manifestSignature: version.signature, .cacheControl: Self.immutable,
            .packageVersion: "\(version.version)",
        ]
        let response = HTTPCaching.answer(body, etag: HTTPCaching.etag(of: body), headers: headers, request: request)
        if response.status == .ok { metrics.manifestBytesSent.increment(by: Int64(body.readableBytes)) }
        return response
    }

    /// What an app on version `from` fetches to reach the current version.
    func getUpdatePlan(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let published = try await publishedPackage(context)
        guard let text = request.uri.queryParameters["from"] else {
            throw HTTPError(.badRequest, message: "Say which version the app holds: ?from=<version number>.")
        }
        guard let from = Int(text), from >= 1 else {
            throw HTTPError(.badRequest, message: "from must be a version number (1, 2, 3, …).")
        }
        guard let installed = try await database.packageVersion(packageId: published.package.id, version: from) else {
            throw HTTPError(.notFound, message: "Version \(from) of this package was never released; download the package whole.")
        }
        let old = try installed.decodedManifest()
        let new = try published.version.decodedManifest()
        return try cachedJSON(UpdatePlan.make(from: old, to: new, fullSize: published.version.size, publicURL: publicURL), request: request)
    }
}

extension HTTPField.Name {
    static let manifestSignature = Self("Manifest-Signature")!
}
