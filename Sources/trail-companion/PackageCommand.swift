import ArgumentParser
import Foundation
import PackageFormat
import TrailClient
import TrailServer

struct PackageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "package",
        abstract: "Verify, install or update content packages.",
        subcommands: [Verify.self, Install.self, Update.self]
    )

    /// `package verify <zip> [--key BASE64 | --server URL]`: checks an offline package completely.
    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a package zip completely and print a report; exits non-zero on any failure.",
            discussion: """
                Checks the zip's structure (no unsafe paths, links, duplicates or entries that readers see differently), \
                the manifest, the Ed25519 signature of manifest.json, and every listed file's size and SHA-256, and that \
                the zip holds nothing else. With --server the public key is fetched from <URL>/api/v1/signing-key and the \
                zip's SHA-256 is compared with the version the server released. Without --key or --server the signature \
                cannot be checked: the report says so (exit status 0 when nothing else is wrong).
                Exit status: 0 valid, 1 invalid, 2 the server or the key could not be used.
                """
        )

        @Argument(help: "The package zip.") var zip: String
        @Option(help: "The server's Ed25519 public key, base64 (as /api/v1/signing-key publishes it).") var key: String?
        @Option(help: "A Trail Companion server (e.g. http://127.0.0.1:8080): its signing key is fetched and its released copy compared.")
        var server: String?

        func validate() throws {
            if key != nil && server != nil { throw ValidationError("Give --key or --server, not both.") }
        }

        func run() async throws {
            let zipURL = URL(fileURLWithPath: zip)
            var publicKey = key?.trimmingCharacters(in: .whitespacesAndNewlines)
            var keySource = publicKey == nil ? nil : "--key"
            var client: TrailClient?
            if let server {
                guard let url = URL(string: server), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                    print("error: --server \(server) is not an http(s) URL")
                    throw ExitCode(2)
                }
                let trail = TrailClient(baseURL: url)
                client = trail
                do {
                    publicKey = try await trail.signingKey().publicKeyBase64
                    keySource = trail.apiURL("signing-key").absoluteString
                } catch {
                    print("error: cannot fetch the signing key from \(trail.apiURL("signing-key").absoluteString): \(error)")
                    throw ExitCode(2)
                }
            }
            if let publicKey, SignatureCheck.publicKey(fromBase64: publicKey) == nil {
                print("error: the key is not a base64 encoded 32-byte Ed25519 public key")
                throw ExitCode(2)
            }

            let check = TrailClient.verify(zip: zipURL, publicKey: publicKey)
            var report = VerifyReport(check: check, keySource: keySource)

            // With a server: is this the copy it released?
            if let client, let manifest = check.manifest {
                do {
                    let released = try await client.releasedVersion(packageId: manifest.packageId, version: manifest.version)
                    if released.sha256 == check.sha256 {
                        report.serverLine = .pass("the server's version \(manifest.version) of \(manifest.packageId) has this SHA-256")
                    } else {
                        report.serverLine = .fail("the server's version \(manifest.version) has SHA-256 \(released.sha256), this zip \(check.sha256)")
                        report.extraProblems.append("the zip differs from the copy the server released (SHA-256 \(released.sha256))")
                    }
                } catch let error as TrailClientError where error.status == 404 || error.status == 410 {
                    report.serverLine = .note(
                        "the server does not publish version \(manifest.version) of \(manifest.packageId) (HTTP \(error.status ?? 0))"
                    )
                } catch {
                    report.serverLine = .note("could not ask the server about this version: \(error)")
                }
            }
            print(report.text, terminator: "")
            if !report.isValid { throw ExitCode.failure }
        }
    }
}

/// Where an app would be: a server, and the key it pins (given, or fetched once from the server).
struct AppSide: ParsableArguments {
    @Option(help: "The Trail Companion server (e.g. http://127.0.0.1:8080).") var server: String
    @Option(help: "The Ed25519 public key to pin, base64. Without it the server's /api/v1/signing-key is trusted as an app does on first start.")
    var key: String?
    @Option(name: .customLong(Settings.clientState.flag), help: ArgumentHelp(Settings.clientState.help))
    var state: String?

    var catalogVersions: CatalogVersionStore {
        CatalogVersionStore(
            folder: Settings.clientState.value(state, in: ProcessInfo.processInfo.environment).map { URL(fileURLWithPath: $0) }
                ?? CatalogVersionStore.defaultFolder()
        )
    }

    /// The signed catalog, verified with `key` and not older than the newest seen before; then recorded.
    func verifiedCatalog(_ trail: TrailClient, key: String) async throws -> Catalog {
        do {
            return try await trail.catalog(pinnedPublicKey: key, store: catalogVersions).catalog
        } catch let error as CatalogError {
            print("error: the catalog is refused: \(error)")
            throw ExitCode.failure
        }
    }

    func connect() async throws -> (TrailClient, String) {
        guard let url = URL(string: server), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            print("error: --server \(server) is not an http(s) URL")
            throw ExitCode(2)
        }
        let trail = TrailClient(baseURL: url)
        if let key = key?.trimmingCharacters(in: .whitespacesAndNewlines) {
            guard SignatureCheck.publicKey(fromBase64: key) != nil else {
                print("error: the key is not a base64 encoded 32-byte Ed25519 public key")
                throw ExitCode(2)
            }
            return (trail, key)
        }
        do { return (trail, try await trail.signingKey().publicKeyBase64) } catch {
            print("error: cannot fetch the signing key from \(trail.apiURL("signing-key").absoluteString): \(error)")
            throw ExitCode(2)
        }
    }
}

extension PackageCommand {
    /// `package install ID FOLDER --server URL`: what an app does on first download, for scripts and benchmarks.
    struct Install: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Download a published package (resumable), verify it completely and extract it into a new folder.",
            discussion: "Exit status: 0 installed, 1 the package failed verification, 2 the server or the key could not be used."
        )

        @OptionGroup var app: AppSide
        @Argument(help: "The package id.") var packageId: String
        @Argument(help: "The folder to create (it must not exist, or be empty).") var folder: String

        func run() async throws {
            let (trail, key) = try await app.connect()
            let target = URL(fileURLWithPath: folder)
            let zip = target.deletingLastPathComponent().appendingPathComponent(".\(target.lastPathComponent).download.zip")
            let started = Date()
            // Only the version and SHA-256 the verified catalog names: a server (or whoever answers for it) cannot hand
            // over another signed version of the package, such as an older one.
            let catalog = try await app.verifiedCatalog(trail, key: key)
            guard let entry = catalog.packages.first(where: { $0.id == packageId }) else {
                print("error: the catalog does not list package \(packageId)")
                throw ExitCode.failure
            }
            let downloaded = try await trail.download(
                from: trail.apiURL("packages/\(Self.escape(packageId))/versions/\(entry.version)/download"),
                to: zip,
                expectedSize: entry.size,
                expectedSHA256: entry.sha256
            )
            let check = TrailClient.verify(zip: zip, publicKey: key, expectedSHA256: entry.sha256)
            var problems = check.problems
            if let manifest = check.manifest, manifest.packageId != packageId || manifest.version != entry.version {
                problems.append("the zip is \(manifest.packageId) v\(manifest.version), the catalog names \(packageId) v\(entry.version)")
            }
            guard problems.isEmpty else {
                print("error: the package failed verification: \(problems.joined(separator: "; "))")
                throw ExitCode.failure
            }
            try TrailClient.extract(zip: zip, to: target)
            try? FileManager.default.removeItem(at: zip)
            print(
                "installed \(packageId) v\(check.manifest?.version ?? 0): downloaded \(downloaded.size - downloaded.resumedFrom) bytes in "
                    + String(format: "%.2f s", Date().timeIntervalSince(started))
            )
        }

        static func escape(_ component: String) -> String {
            component.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? component
        }
    }

    /// `package update ID FOLDER --server URL`: `TrailClient.update` on an installed (extracted) package.
    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Bring an installed package folder to the catalog's version, fetching only the files that changed.",
            discussion:
                "Follows only a catalog at least as new as the newest seen before (kept in --state), so a replayed older catalog cannot roll the package back. Interrupted, it leaves the folder as it was; run it again to continue. Exit status: 0 up to date, 1 refused, 2 the server or the key could not be used."
        )

        @OptionGroup var app: AppSide
        @Argument(help: "The package id.") var packageId: String
        @Argument(help: "The installed package folder (holding manifest.json).") var folder: String

        func run() async throws {
            let (trail, key) = try await app.connect()
            let started = Date()
            let result: UpdateResult
            do {
                result = try await trail.update(
                    packageId: packageId,
                    installedAt: URL(fileURLWithPath: folder),
                    pinnedPublicKey: key,
                    catalogVersions: app.catalogVersions
                )
            } catch let error as UpdateError {
                print("error: \(error)")
                throw ExitCode.failure
            } catch let error as CatalogError {
                print("error: the catalog is refused: \(error)")
                throw ExitCode.failure
            }
            let seconds = String(format: "%.2f s", Date().timeIntervalSince(started))
            if result.fromVersion == result.toVersion {
                print("up to date at v\(result.toVersion)")
            } else {
                print(
                    "updated v\(result.fromVersion) -> v\(result.toVersion): downloaded \(result.downloadedBytes) of \(result.fullSize) bytes "
                        + "(\(result.fetchedFiles) files fetched, \(result.reusedFiles) reused) in \(seconds)"
                )
            }
        }
    }
}

/// The human-readable report of `package verify`.
struct VerifyReport {
    enum Line {
        case pass(String)
        case fail(String)
        case note(String)

        var text: String {
            switch self {
            case let .pass(text): return "  [ok]   \(text)"
            case let .fail(text): return "  [FAIL] \(text)"
            case let .note(text): return "  [--]   \(text)"
            }
        }
    }

    let check: PackageCheck
    let keySource: String?
    var serverLine: Line?
    var extraProblems: [String] = []

    var problems: [String] { check.problems + extraProblems }
    var isValid: Bool { problems.isEmpty }

    enum Area { case structure, manifest, signature, files }

    static func area(_ problem: PackageProblem) -> Area {
        switch problem {
        case .cannotOpen, .readersDisagree, .unsafeEntryPath, .duplicateEntry, .symbolicLink, .directoryEntry, .encryptedEntry,
            .localHeaderMismatch:
            return .structure
        case .missingManifest, .unreadableManifest, .invalidManifest:
            return .manifest
        case .missingSignature, .malformedSignature, .invalidPublicKey, .signatureMismatch:
            return .signature
        case .missingGeoJSON, .missingEntry, .unlistedEntry, .sizeMismatch, .checksumMismatch, .crcMismatch, .unreadableEntry:
            return .files
        }
    }

    var text: String {
        let report = check.report
        var out = "Package \(check.zip.path)\n"
        out += "  size      \(check.size) bytes\n"
        out += "  SHA-256   \(check.sha256.isEmpty ? "(unreadable)" : check.sha256)\n"
        if let manifest = check.manifest {
            out += "  name      \(manifest.packageName) (\(manifest.park)), version \(manifest.version), created \(manifest.createdAt)\n"
            out += "  id        \(manifest.packageId)\n"
            out +=
                "  content   \(manifest.waypoints.count) waypoint(s), \(report.listedFileCount) listed file(s)\(manifest.tiles == nil ? "" : ", map tiles")\n"
        }
        out += "Checks\n"
        func issues(_ area: Area) -> [PackageProblem] { report.issues.filter { Self.area($0) == area } }
        var lines: [Line] = []
        let structure = issues(.structure)
        lines.append(
            structure.isEmpty
                ? .pass(
                    "zip structure: \(report.entryCount) entries\(report.usesZIP64 ? " (ZIP64)" : ""), no unsafe paths, links, folders or duplicates"
                )
                : .fail("zip structure: \(structure.count) problem(s)")
        )
        let manifest = issues(.manifest)
        if !manifest.isEmpty {
            lines.append(.fail("manifest.json: \(manifest.count) problem(s)"))
        } else if check.manifest == nil {
            lines.append(.note("manifest.json not checked: the zip cannot be read"))
        } else {
            lines.append(.pass("manifest.json is a valid format version 1 manifest"))
        }
        let signature = issues(.signature)
        switch (report.signatureValid, signature.isEmpty) {
        case (true?, true):
            lines.append(.pass("manifest.sig is a valid Ed25519 signature of manifest.json (key \(keySource ?? "given"))"))
        case (nil, true) where keySource == nil:
            lines.append(.note("signature NOT checked: no key given (use --key or --server); the package's origin is unproven"))
        case (nil, true):
            lines.append(.note("signature not checked: manifest.json cannot be read"))
        default:
            lines.append(.fail("signature: \(signature.map(\.description).first ?? "not valid")"))
        }
        let files = issues(.files)
        if check.manifest == nil && files.isEmpty {
            lines.append(.note("files not checked: there is no manifest to check them against"))
        } else if files.isEmpty {
            lines.append(
                .pass(
                    "\(report.verifiedFileCount) of \(report.listedFileCount) listed files match their size and SHA-256 (\(report.verifiedBytes) bytes), nothing unlisted"
                )
            )
        } else {
            lines.append(.fail("files: \(report.verifiedFileCount) of \(report.listedFileCount) listed files verified, \(files.count) problem(s)"))
        }
        if let serverLine { lines.append(serverLine) }
        out += lines.map { $0.text + "\n" }.joined()
        if isValid {
            out += report.signatureValid == true ? "Result: VALID\n" : "Result: VALID (integrity only; signature not checked)\n"
        } else {
            out += "Problems (\(problems.count))\n"
            out += problems.map { "  - \($0)\n" }.joined()
            out += "Result: INVALID\n"
        }
        return out
    }
}
