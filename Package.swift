// swift-tools-version:6.2
import PackageDescription

/// One list of Swift settings, applied to every target.
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "kiosk",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "kiosk", targets: ["kiosk"]),
        .library(name: "KioskCore", targets: ["KioskCore"]),
        .library(name: "KioskSigning", targets: ["KioskSigning"]),
        .library(name: "KioskTesting", targets: ["KioskTesting"]),
        .library(name: "KioskProtocol", targets: ["KioskProtocol"]),
        .library(name: "KioskKit", targets: ["KioskKit"]),
        .library(name: "KioskMerchant", targets: ["KioskMerchant"]),
    ],
    dependencies: [
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.10.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.0"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.24.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.29.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.0"),
        .package(url: "https://github.com/swift-extras/swift-extras-base64.git", from: "1.2.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.30.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.1.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/vapor/multipart-kit.git", from: "4.7.0"),
        .package(url: "https://github.com/vapor/postgres-kit.git", from: "2.14.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.25.0"),
        .package(url: "https://github.com/vapor/sql-kit.git", from: "3.33.0"),
    ],
    targets: [
        // Domain types and rules; no I/O.
        .target(name: "KioskCore", swiftSettings: swiftSettings),
        // The contracts every party shares: the client protocol, the console API's answers, the test controls and the
        // merchant API. Foundation and KioskCore only.
        .target(name: "KioskProtocol", dependencies: ["KioskCore"], swiftSettings: swiftSettings),
        // Keys, certificate chains, JWS, verification.
        .target(
            name: "KioskSigning",
            dependencies: [
                "KioskCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "ExtrasBase64", package: "swift-extras-base64"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        // A database on SQLite or PostgreSQL whose schema belongs to its user: engines, sessions, migrations. The
        // store's schema and the merchant's ledger each sit on it.
        .target(
            name: "KioskSQL",
            dependencies: [
                "KioskCore",
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The store's schema on KioskSQL: migrations and one repository interface over both engines.
        .target(
            name: "KioskStorage",
            dependencies: [
                "KioskCore",
                "KioskSQL",
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // What every Kiosk HTTP server shares: KioskError answers, strict JSON bodies, the error middleware.
        .target(
            name: "KioskHTTP",
            dependencies: [
                "KioskCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),
        // The store server: HTTP routes, console API, startup.
        .target(
            name: "KioskStore",
            dependencies: [
                "KioskCore",
                "KioskHTTP",
                "KioskProtocol",
                "KioskSigning",
                "KioskSQL",
                "KioskStorage",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            resources: [
                .copy("Resources/openapi.yaml"), .copy("Resources/app-store-connect-openapi.json"),
                .copy("Resources/console"),
            ],
            swiftSettings: swiftSettings
        ),
        // The merchant toolkit and reference merchant server: orders, validation, the exactly-once grant ledger,
        // entitlements, notification intake, content, reconciliation. Talks to the store over HTTP only.
        .target(
            name: "KioskMerchant",
            dependencies: [
                "KioskCore",
                "KioskHTTPClient",
                "KioskHTTP",
                "KioskProtocol",
                "KioskSigning",
                "KioskSQL",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ExtrasBase64", package: "swift-extras-base64"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            resources: [.copy("Resources/merchant-openapi.yaml")],
            swiftSettings: swiftSettings
        ),
        // The one JSON-over-HTTP client of KioskKit, the CLI and the merchant (bearer token, JSON body, TLS roots).
        .target(
            name: "KioskHTTPClient",
            dependencies: [
                "KioskProtocol",
                "KioskSigning",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: swiftSettings
        ),
        // `kiosk check`: life stories and faults played against a developer's own server, through a running store.
        .target(
            name: "KioskCheck",
            dependencies: [
                "KioskCore",
                "KioskHTTPClient",
                "KioskProtocol",
                "KioskSigning",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The `kiosk` command line, as a library so tests build the exact commands.
        .target(
            name: "KioskCLI",
            dependencies: [
                "KioskCheck",
                "KioskCore",
                "KioskHTTPClient",
                "KioskHTTP",
                "KioskMerchant",
                "KioskProtocol",
                "KioskSigning",
                "KioskSQL",
                "KioskStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(name: "kiosk", dependencies: ["KioskCLI"], swiftSettings: swiftSettings),
        // The client kit: StoreKit's two faces over Kiosk's client protocol. Never depends on the store.
        .target(
            name: "KioskKit",
            dependencies: [
                "KioskCore",
                "KioskHTTPClient",
                "KioskProtocol",
                "KioskSigning",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: swiftSettings
        ),
        // A terminal coin shop: the seeds' built-in model on KioskKit (`swift run coin-shop --help`).
        .executableTarget(
            name: "coin-shop",
            dependencies: [
                "KioskKit",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Examples/CoinShop",
            swiftSettings: swiftSettings
        ),
        // The README's KioskKit code, compiled with every build so the README never shows code that does not build.
        .target(
            name: "ReadmeShop",
            dependencies: ["KioskKit", .product(name: "X509", package: "swift-certificates")],
            path: "Examples/ReadmeShop",
            swiftSettings: swiftSettings
        ),
        // Benchmarks: ratios against baselines measured in the same run (`swift run -c release kiosk-bench`).
        .executableTarget(
            name: "kiosk-bench",
            dependencies: [
                "KioskHTTP", "KioskHTTPClient",
                "KioskCore", "KioskMerchant", "KioskProtocol", "KioskSigning", "KioskSQL", "KioskStorage",
                "KioskTestSupport", "KioskTesting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The kill campaign: the app, the store and the merchant killed at random, trial after trial, and every
        // payment checked to be granted exactly once (`swift run -c release kiosk-chaos --trials 1000`).
        .executableTarget(
            name: "kiosk-chaos",
            dependencies: [
                "KioskHTTPClient",
                "KioskCore", "KioskProtocol", "KioskSQL", "KioskTestSupport", "KioskTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // What tests need from the machine: PostgreSQL, Python and openssl (required in CI), a bounded number of
        // PostgreSQL tests at once, child processes. Foundation only, so tests below the store build early.
        .target(name: "KioskTestSupport", swiftSettings: swiftSettings),
        // Helpers for users' own tests: a store on an ephemeral port, with its admin token, a merchant beside it, a
        // proxy that kills a client process at a named request.
        .target(
            name: "KioskTesting",
            dependencies: [
                "KioskHTTPClient",
                "KioskStore",
                "KioskMerchant",
                "KioskProtocol",
                "KioskCore",
                "KioskSigning",
                "KioskSQL",
                "KioskStorage",
                "KioskTestSupport",
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KioskCoreTests", dependencies: ["KioskCore"], resources: [.copy("Resources")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KioskSigningTests",
            dependencies: [
                "KioskSigning", "KioskCore", "KioskTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "ExtrasBase64", package: "swift-extras-base64"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KioskStorageTests",
            dependencies: [
                "KioskStorage", "KioskSQL", "KioskCore", "KioskTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KioskStoreTests",
            dependencies: [
                "KioskStore", "KioskTesting", "KioskTestSupport", "KioskSigning", "KioskCore", "KioskSQL",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "X509", package: "swift-certificates"),
                "KioskProtocol",
                "KioskStorage",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            resources: [.copy("Resources")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KioskKitTests",
            dependencies: [
                "KioskKit", "KioskMerchant", "KioskProtocol", "KioskTesting", "KioskTestSupport", "KioskSigning",
                "KioskCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KioskMerchantTests",
            dependencies: [
                "KioskMerchant", "KioskKit", "KioskProtocol", "KioskTesting", "KioskTestSupport", "KioskSigning",
                "KioskCore", "KioskSQL",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ExtrasBase64", package: "swift-extras-base64"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KioskCLITests",
            dependencies: [
                "kiosk", "coin-shop", "kiosk-chaos", "KioskCLI", "KioskMerchant", "KioskSQL", "KioskTesting",
                "KioskTestSupport",
                "KioskSigning", .product(name: "SQLKit", package: "sql-kit"),
                "KioskCheck",
                "KioskCore",
                "KioskProtocol",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
