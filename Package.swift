// swift-tools-version:6.2
import Foundation
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "trail-companion",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .executable(name: "trail-companion", targets: ["trail-companion"]),
        .library(name: "PackageFormat", targets: ["PackageFormat"]),
        .library(name: "TrailClient", targets: ["TrailClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", exact: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", exact: "2.5.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", exact: "2.1.1"),
        .package(url: "https://github.com/groue/GRDB.swift.git", exact: "7.10.0"),
        .package(url: "https://github.com/weichsel/ZIPFoundation.git", exact: "0.9.20"),
        .package(url: "https://github.com/apple/swift-crypto.git", exact: "4.5.2"),
        .package(url: "https://github.com/vapor/multipart-kit.git", exact: "4.7.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", exact: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", exact: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio.git", exact: "2.101.3"),
        // NIOHTTPTypes: the request and response parts of the channel Hummingbird's codec feeds, for our own handler in it.
        .package(url: "https://github.com/apple/swift-nio-extras.git", exact: "1.35.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", exact: "2.13.0"),
        // The S3 client (ObjectStorage) of the object-storage mirror: HTTP/1.1 and TLS to any S3-compatible endpoint.
        .package(url: "https://github.com/swift-server/async-http-client.git", exact: "1.37.0"),
        // The runtime of the mobile API's wire types, which are generated from openapi.json (target TrailAPI).
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", exact: "1.13.4"),
        // The panel's help page renders the rangers' guide (docs/rangers.md) from Markdown.
        .package(url: "https://github.com/JohnSundell/Ink.git", exact: "0.6.0"),
        // The tour import's CSV reader: quoting, embedded line breaks and separators are its job, not ours.
        // Base32 of the two-step sign-in's secret, as authenticator apps read it (hummingbird-auth's OTP uses it too).
        .package(url: "https://github.com/swift-extras/swift-extras-base64.git", exact: "1.2.0"),
        // Single sign-on: the signatures of OpenID Connect ID tokens (RS256, ES256) against the provider's JWKS.
        .package(url: "https://github.com/vapor/jwt-kit.git", exact: "5.8.0"),
    ],
    targets: [
        // Manifest types, package layout rules, signing and verification: shared by server and client.
        .target(
            name: "PackageFormat",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ],
            swiftSettings: swiftSettings
        ),
        // The mobile API's request and response types, generated from openapi.json (the one description of the wire
        // contract) by swift-openapi-generator into Generated/: the server encodes them, TrailClient decodes them. The
        // output is committed (scripts/generate-openapi.sh), so a build never compiles the generator.
        .target(
            name: "TrailAPI",
            dependencies: [
                "PackageFormat",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            ],
            exclude: ["openapi.json", "openapi-generator-config.yaml"],
            swiftSettings: swiftSettings
        ),
        .systemLibrary(
            name: "CClamAV",
            pkgConfig: "libclamav",
            providers: [.apt(["libclamav-dev"])]
        ),
        // QR codes of the visitor player's address, for trailhead signs (Debian's libqrencode).
        .systemLibrary(
            name: "CQRencode",
            pkgConfig: "libqrencode",
            providers: [.apt(["libqrencode-dev"])]
        ),
        // Email over SMTP (STARTTLS, SMTPS, AUTH) through Debian's libcurl.
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // Heights of the ground from the agency's terrain model (Debian's GDAL: GeoTIFF, SRTM .hgt, any CRS).
        .systemLibrary(
            name: "CGDAL",
            pkgConfig: "gdal",
            providers: [.apt(["libgdal-dev"])]
        ),
        // Print files (trailhead signs, booklets) as vector PDF: Cairo draws, Pango lays out text with fonts it embeds
        // (Debian's libcairo2-dev and libpango1.0-dev; pangocairo's pkg-config names both).
        .systemLibrary(
            name: "CPangoCairo",
            pkgConfig: "pangocairo",
            providers: [.apt(["libcairo2-dev", "libpango1.0-dev"])]
        ),
        // The terrain model as one question (the height at a place), through GDAL; it knows nothing of tours.
        .target(name: "Terrain", dependencies: ["CGDAL"], swiftSettings: swiftSettings),
        // libosmium (Debian's libosmium2-dev, headers only) reads OpenStreetMap extracts; it is C++, so the one pass
        // that indexes an extract is written in C++ behind a C function.
        .target(
            name: "COSMIndex",
            // Optimised in debug builds too: the tests index extracts, and libosmium at -O0 is several times slower.
            cxxSettings: [.define("NDEBUG"), .unsafeFlags(["-O2"])],
            linkerSettings: [.linkedLibrary("expat"), .linkedLibrary("bz2"), .linkedLibrary("z")]
        ),
        .target(name: "OpenMap", dependencies: ["COSMIndex"], swiftSettings: swiftSettings),
        .target(name: "CFileWriteback"),
        // Locks down connections to uploaded SQLite files (sqlite3_db_config is variadic: Swift cannot call it).
        .target(name: "CSQLiteHardening", linkerSettings: [.linkedLibrary("sqlite3")]),
        .target(
            name: "MalwareScan",
            dependencies: [
                "CClamAV",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // An S3 client and its request signing (SigV4): objects in, objects out, for any S3-compatible store. It knows
        // nothing of tours or of the distribution tree the server mirrors with it.
        .target(
            name: "ObjectStorage",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "_NIOFileSystem", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                // `Data(buffer:)`: an answer's body as Data.
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The tour import's file formats (GeoJSON, GPX, KML, KMZ, CSV), bytes in and an imported tour out: no database,
        // no tour; what only the app decides (a route's check, its languages, a trigger zone's radius) it is handed as
        // rules. KMZ archives are read with PackageFormat's hardened zip reader.
        .target(name: "TourFormats", dependencies: ["PackageFormat"], swiftSettings: swiftSettings),
        .target(
            name: "TrailServer",
            dependencies: [
                "PackageFormat",
                "TrailAPI",
                "MalwareScan",
                "ObjectStorage",
                "TourFormats",
                "Terrain",
                "OpenMap",
                "CFileWriteback",
                "CSQLiteHardening",
                "CQRencode",
                "CCurl",
                "CPangoCairo",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "HummingbirdOTP", package: "hummingbird-auth"),
                .product(name: "ExtrasBase64", package: "swift-extras-base64"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "_NIOFileSystem", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Ink", package: "Ink"),
            ],
            swiftSettings: swiftSettings
        ),
        // What a mobile app (or a script) uses: Foundation, PackageFormat and ZIPFoundation. It decodes with the generated
        // TrailAPI types but imports them `internal`: its public API is its own (Models.swift), checked against the last
        // release by scripts/check-api.sh.
        .target(
            name: "TrailClient",
            dependencies: [
                "PackageFormat",
                "TrailAPI",
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "trail-companion",
            dependencies: [
                "TrailServer",
                "TrailClient",
                "PackageFormat",
                "ObjectStorage",
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The tests' shared helpers (temporary folders, child processes, fixtures, the disk lock, a real S3 server), one
        // copy for every test module (not a test target: the test modules import it).
        .target(
            name: "TestSupport",
            path: "Tests/TestSupport",
            // The Python that starts the S3 servers (SeaweedFS, moto), not sources.
            exclude: ["Scripts"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PackageFormatTests",
            dependencies: ["PackageFormat", "TestSupport", .product(name: "ZIPFoundation", package: "ZIPFoundation")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MalwareScanTests",
            dependencies: ["MalwareScan", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ObjectStorageTests",
            dependencies: [
                "ObjectStorage",
                "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TourFormatsTests",
            dependencies: ["TourFormats", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TrailServerTests",
            dependencies: [
                "TrailServer",
                "TestSupport",
                "TrailClient",
                "MalwareScan",
                "ObjectStorage",
                "TourFormats",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                // InvitationProofTests check which password a stored hash still opens.
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
                // OIDCSignInTests follow the provider's redirects by hand.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            // Python helpers the tests run (tuspy, zipfile, ...), not sources.
            exclude: ["Scripts"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "OpenMapTests",
            dependencies: ["OpenMap", "Terrain", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TrailClientTests",
            dependencies: ["TrailClient", "PackageFormat", "TestSupport"],
            swiftSettings: swiftSettings
        ),
    ],
    cxxLanguageStandard: .cxx17
)

// scripts/fuzz.sh only: with TRAIL_FUZZ=1 a libFuzzer entry point over the parsers that read what strangers send
// (built with -sanitize=fuzzer,address into its own build folder; never part of a normal build or of CI).
if ProcessInfo.processInfo.environment["TRAIL_FUZZ"] == "1" {
    package.targets.append(
        .executableTarget(
            name: "TrailFuzz",
            dependencies: ["TrailServer", "PackageFormat", "TourFormats", .product(name: "MultipartKit", package: "multipart-kit")],
            path: "Fuzz",
            exclude: ["corpus"],
            swiftSettings: swiftSettings + [.unsafeFlags(["-parse-as-library"])]
        )
    )
}
