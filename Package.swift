// swift-tools-version:6.1
import PackageDescription

// Strict checking everywhere: Swift 6 language mode is the package default, and
// warnings are treated as defects by `make test` (see Makefile).
let package = Package(
    name: "Ferry",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "ferry", targets: ["ferry"]),
        .library(name: "FerryPluginAPI", targets: ["FerryPluginAPI"]),
        .library(name: "FerryCore", targets: ["FerryCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        // SHA-256 for `ferry verify --hash`.
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // The daemon's control API: HummingbirdCore on swift-nio (bounded parsing, idle
        // timeouts, no thread per connection), TLS through swift-nio-ssl, and the daemon's
        // own client over its Unix socket on swift-nio. Hummingbird's traits are off: its
        // configuration-file support and full Foundation are not used.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // Property-based tests in Swift Testing, with shrinking and replayable seeds (tests only).
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
    ],
    targets: [
        // C at the edge: system libraries with typed shims for variadic functions.
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl",
                       providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CArchive", path: "Sources/CArchive", pkgConfig: "libarchive",
                       providers: [.apt(["libarchive-dev"])]),

        // What a backend plugin depends on: the protocol, values, errors, registry.
        .target(
            name: "FerryPluginAPI",
            dependencies: [.product(name: "Logging", package: "swift-log")]
        ),

        // Every system call on local files, folders, locks, inotify and terminals, with its
        // own error type (`SystemError`, carrying the errno); writes inside a synced folder
        // go through `AnchoredFolder` (openat, never through a symbolic link).
        .target(name: "CFerrySystem", path: "Sources/CFerrySystem"),
        .target(
            name: "FerrySystem",
            dependencies: ["FerryPluginAPI", "CFerrySystem"]
        ),

        // Built-in backend plugins: ordinary targets with an explicit path.
        .target(
            name: "LocalBackend",
            dependencies: ["FerryPluginAPI", "FerrySystem"],
            path: "Plugins/LocalBackend"
        ),
        .target(
            name: "WebDAVBackend",
            dependencies: ["FerryPluginAPI", "FerrySystem", "CurlTransport"],
            path: "Plugins/WebDAVBackend"
        ),
        .target(
            name: "HTTPBackend",
            dependencies: ["FerryPluginAPI", "FerrySystem", "CurlTransport"],
            path: "Plugins/HTTPBackend"
        ),
        .target(
            name: "S3Backend",
            dependencies: ["FerryPluginAPI", "FerrySystem", "CurlTransport", .product(name: "Crypto", package: "swift-crypto")],
            path: "Plugins/S3Backend"
        ),
        // External plugins: any executable that speaks docs/plugin-protocol.md.
        .target(
            name: "ExecBackend",
            dependencies: ["FerryPluginAPI", "FerrySystem", .product(name: "Logging", package: "swift-log")],
            path: "Plugins/ExecBackend"
        ),
        .target(
            name: "CurlTransport",
            dependencies: ["CCurl", "FerryPluginAPI", "FerrySystem", .product(name: "Logging", package: "swift-log")]
        ),

        // libarchive behind Swift values: the only module that imports CArchive.
        .target(
            name: "ArchiveCodec",
            dependencies: ["CArchive", "FerryPluginAPI", "FerrySystem", .product(name: "Crypto", package: "swift-crypto")]
        ),

        // Encryption that wraps any backend: contents in authenticated segments, names with
        // AES-GCM-SIV (docs/encryption.md). swift-crypto only, no hand-made primitives.
        .target(
            name: "FerryEncryption",
            dependencies: [
                "FerryPluginAPI",
                "FerrySystem",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/FerryEncryption"
        ),

        // The pure decisions: what to do with each file (`Planner`, holds, the queue
        // classifier), what a run's engine does next (`TransferStateMachine`, retry policy),
        // and the tracked file's value with its status transitions (`FileRecord`). No I/O:
        // no GRDB (the journal's row mapping of `FileRecord` is FerryJournal's), no
        // FerrySystem, no system calls; time comes in as a value. Keep it that way: a
        // decision that needs to read something takes what was read as an argument.
        .target(
            name: "FerryPlanning",
            dependencies: ["FerryPluginAPI"]
        ),

        // The journal (`journal.sqlite`: folder pairs, one row per file, bundles, change
        // markers) and the run history (`history.sqlite`), with their schemas and row
        // mappings: the only module that imports GRDB and writes SQL. It knows the planner's
        // values, not the engine: what FerryCore keeps here in its own types (change
        // markers, catalog entries) it turns into texts and numbers first.
        .target(
            name: "FerryJournal",
            dependencies: [
                "FerryPlanning",
                "FerryPluginAPI",
                "FerrySystem",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),

        // config.yml: its reader (Yams, errors with a line and a column) and the validated
        // values it makes (`Config`, folders, queues, schedules, limits). Values only: not the
        // engine (FerryCore), the journal or the daemon; the only module that imports Yams.
        .target(
            name: "FerryConfig",
            dependencies: [
                "FerryPluginAPI",
                "FerryPlanning",
                "FerrySystem",
                "ArchiveCodec",
                "FerryEncryption",
                .product(name: "Yams", package: "Yams"),
            ]
        ),

        // The transfer engine: it runs planned jobs against a backend (`TransferEngine`, the
        // shell of FerryPlanning's state machine, and `TransferExecutor`, one job's requests),
        // books their results through one journal writer, and keeps the write lease, the
        // remote catalog's files and replaced versions' names. With it, what a run is made of
        // and says (`FolderPair`, `RunEvent`, `RunSummary`, `RunError`, `RunProgress`). It
        // does not plan, scan or list a whole tree: that is FerryCore's.
        .target(
            name: "FerryEngine",
            dependencies: [
                "FerryConfig",
                "FerryPluginAPI",
                "FerryPlanning",
                "FerryJournal",
                "FerrySystem",
                "ArchiveCodec",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),

        // Archive bundles: many small files packed into one archive on the remote with a
        // manifest beside it (`BundleStep`: plan, build, upload, restore, retire), for remotes
        // where a request per file costs more than the bytes. Run by FerryCore's `SyncRun`.
        .target(
            name: "FerryBundles",
            dependencies: [
                "FerryEngine",
                "FerryConfig",
                "FerryPluginAPI",
                "FerryPlanning",
                "FerryJournal",
                "FerrySystem",
                "ArchiveCodec",
            ]
        ),

        // One run of one folder pair (`SyncRun`): the scan, the listing, the paged plan, the
        // change markers, archive bundles, the cache, verify and the run history, handing
        // the jobs to FerryEngine. Not GRDB (FerryJournal writes the SQL), not Yams
        // (FerryConfig reads config.yml), not FerryDaemon.
        .target(
            name: "FerryCore",
            dependencies: [
                "FerryEngine",
                "FerryBundles",
                "FerryConfig",
                "FerryPluginAPI",
                "FerryPlanning",
                "FerryJournal",
                "FerrySystem",
                "ArchiveCodec",
                "FerryEncryption",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),

        // The long-running service: `DaemonRuntime`, a `PairRunner` per folder pair, watchers,
        // pollers, schedules, the status board and the control slot. It drives FerryCore's
        // runs; FerryCore never uses it. Not HTTP (FerryControl's) and not GRDB.
        .target(
            name: "FerryDaemon",
            dependencies: [
                "FerryConfig",
                "FerryCore",
                "FerryEngine",
                "FerryJournal",
                "FerryPlanning",
                "FerryPluginAPI",
                "FerrySystem",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        // The daemon's control API: HTTP on a Unix socket (and TCP), the status page, SSE,
        // Prometheus metrics. Only this module knows the HTTP server library and swift-nio.
        .target(
            name: "FerryControl",
            dependencies: [
                "FerryConfig",
                "FerryCore",
                "FerryDaemon",
                "FerryJournal",
                "FerryPlanning",
                "FerryPluginAPI",
                "FerrySystem",
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        .executableTarget(
            name: "ferry",
            dependencies: [
                "FerryConfig",
                "FerryCore",
                "FerryEngine",
                "FerryBundles",
                "FerryDaemon",
                "FerryJournal",
                "FerryPlanning",
                "FerryPluginAPI",
                "FerrySystem",
                "ArchiveCodec",
                "LocalBackend",
                "WebDAVBackend",
                "HTTPBackend",
                "S3Backend",
                "CurlTransport",
                "ExecBackend",
                "FerryConformance",
                "FerryControl",
                "FerryEncryption",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),

        // The parsers of untrusted input as fuzz targets, and the libFuzzer entry point
        // (`make fuzz`; built plainly, it replays saved inputs).
        .target(
            name: "FerryFuzzing",
            dependencies: ["FerryConfig", "FerryCore", "FerryBundles", "FerryJournal", "FerryPluginAPI", "FerrySystem", "LocalBackend", "WebDAVBackend", "HTTPBackend", "ExecBackend", "FerryTestSupport"]
        ),
        .executableTarget(
            name: "ferry-fuzz",
            dependencies: ["FerryFuzzing"],
            path: "Fuzz/ferry-fuzz"
        ),

        // The backend conformance suite: run by every backend's tests and by
        // `ferry plugin-test` against external plugins.
        .target(
            name: "FerryConformance",
            dependencies: ["FerryPluginAPI", "FerrySystem"]
        ),

        // Test support: tree generators, tree comparison, a runner for the ferry binary,
        // an in-memory backend and a clock that does not wait, the `.integration` trait.
        .target(
            name: "FerryTestSupport",
            dependencies: ["FerryPluginAPI", "FerrySystem", "FerryConformance", "FerryCore"]
        ),

        .testTarget(
            name: "FerryCoreTests",
            dependencies: ["FerryConfig", "FerryCore", "FerryEngine", "FerryBundles", "FerryDaemon", "FerryJournal", "FerryPlanning", "FerryPluginAPI", "FerrySystem", "ArchiveCodec", "FerryTestSupport", "LocalBackend",
                           "FerryEncryption", .product(name: "PropertyBased", package: "swift-property-based")]
        ),
        // config.yml's tests: they see FerryConfig and what it is built on, not the engine.
        .testTarget(
            name: "FerryConfigTests",
            dependencies: ["FerryConfig", "FerryPlanning", "FerryPluginAPI", "FerrySystem", "ArchiveCodec", "FerryEncryption",
                           "FerryTestSupport"]
        ),
        // The daemon's tests: its runners, schedules, watchers and status board.
        .testTarget(
            name: "FerryDaemonTests",
            dependencies: ["FerryDaemon", "FerryConfig", "FerryCore", "FerryEngine", "FerryJournal", "FerryPlanning", "FerryPluginAPI", "FerrySystem",
                           "FerryTestSupport", "LocalBackend", .product(name: "Logging", package: "swift-log")]
        ),
        // The bounded fuzz pass over every parser: it needs every plugin's parsers.
        // The journal's own tests: they see FerryJournal and what it is built on, not the engine.
        .testTarget(
            name: "FerryJournalTests",
            dependencies: ["FerryJournal", "FerryPlanning", "FerryPluginAPI", "FerrySystem", "FerryTestSupport",
                           .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .testTarget(
            name: "FerryControlTests",
            dependencies: ["FerryControl", "FerryCore", "FerryTestSupport"]
        ),
        .testTarget(
            name: "FerryFuzzingTests",
            dependencies: ["FerryFuzzing"]
        ),
        .testTarget(
            name: "FerryEncryptionTests",
            dependencies: ["CurlTransport", "FerryEncryption", "FerryPluginAPI", "FerrySystem", "FerryTestSupport", "LocalBackend",
                           "WebDAVBackend"]
        ),
        .testTarget(
            name: "ArchiveCodecTests",
            dependencies: ["ArchiveCodec", "FerryPluginAPI", "FerrySystem", "FerryTestSupport"]
        ),
        .testTarget(
            name: "LocalBackendTests",
            dependencies: ["LocalBackend", "FerryPluginAPI", "FerrySystem", "FerryTestSupport"]
        ),
        .testTarget(
            name: "WebDAVBackendTests",
            dependencies: ["WebDAVBackend", "FerryPluginAPI", "FerrySystem", "FerryTestSupport"]
        ),
        .testTarget(
            name: "HTTPBackendTests",
            dependencies: ["HTTPBackend", "CurlTransport", "FerryPluginAPI", "FerrySystem", "FerryTestSupport"]
        ),
        .testTarget(
            name: "S3BackendTests",
            dependencies: ["S3Backend", "CurlTransport", "FerryPluginAPI", "FerrySystem", "FerryTestSupport"]
        ),
        .testTarget(
            name: "ExecBackendTests",
            dependencies: ["ExecBackend", "FerryPluginAPI", "FerrySystem", "FerryTestSupport", "FerryConformance"]
        ),
        .testTarget(
            name: "FerryIntegrationTests",
            dependencies: ["ferry", "FerryConfig", "FerryJournal", "FerryTestSupport", "FerryPluginAPI", "FerrySystem", "ArchiveCodec"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
