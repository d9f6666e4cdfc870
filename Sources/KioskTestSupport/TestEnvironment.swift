import Foundation

/// What a test needs from outside Swift: a PostgreSQL server, a Python with Apple's app-store-server-library, the
/// `openssl` command, `nginx`, a browser. `.ci/run` installs each and names it in the environment; a developer's `swift test` may lack
/// them, and the tests that need one then skip with the reason. In CI (`CI` set to anything but `false` or `0`)
/// a missing requirement fails those tests instead: a run that silently skipped them would be green for nothing.
///
/// ```swift
/// @Test(.enabled(if: TestEnvironment.runs(.python), "set KIOSK_TEST_PYTHON (.ci/run does)"))
/// func appleVerifierAccepts() async throws {
///     let python = try TestEnvironment.require(.python)
///     …
/// }
/// ```
public enum TestRequirement: String, Sendable, CaseIterable, CustomStringConvertible {
    /// `KIOSK_TEST_POSTGRES_URL`: a PostgreSQL server tests may create schemas in.
    case postgreSQL
    /// `KIOSK_TEST_PYTHON`: a Python with `app-store-server-library` and `openapi-spec-validator`.
    case python
    /// `openssl` on `PATH`.
    case openssl
    /// `nginx` on `PATH` or at `/usr/sbin/nginx` (where Debian puts it, often off a user's `PATH`).
    case nginx
    /// `KIOSK_TEST_CONNECT_PYTHON`: a Python with PyPI's `appstoreconnect`, an App Store Connect API client nobody
    /// here wrote (it pins an old PyJWT, so it has a virtual environment of its own).
    case connectPython
    /// `KIOSK_TEST_BROWSER_PYTHON`: a Python with Selenium, driving Debian's `chromium` through `chromedriver`.
    case browser
    /// `KIOSK_TEST_FUSE_PYTHON`: a Python with fusepy (Debian's `python3-fusepy`), for the power-cut tests'
    /// FUSE layer, `scripts/lazyfs.py` (which also needs root and `/dev/fuse`).
    case fusePython
    /// PostgreSQL's programs (`initdb`, `postgres`): the newest `/usr/lib/postgresql/*/bin`, where Debian puts
    /// them, for a test that runs a server of its own.
    case postgresPrograms
    /// `wrk` on `PATH` (Debian's `wrk`): `kiosk-bench`'s 64-connection section.
    case wrk

    public var description: String {
        switch self {
        case .postgreSQL: "PostgreSQL (KIOSK_TEST_POSTGRES_URL)"
        case .python: "Python with Apple's app-store-server-library (KIOSK_TEST_PYTHON)"
        case .openssl: "openssl on PATH"
        case .nginx: "nginx on PATH or /usr/sbin/nginx"
        case .connectPython: "Python with PyPI's appstoreconnect (KIOSK_TEST_CONNECT_PYTHON)"
        case .browser: "Python with Selenium, and chromium with chromedriver (KIOSK_TEST_BROWSER_PYTHON)"
        case .fusePython: "Python with fusepy (KIOSK_TEST_FUSE_PYTHON)"
        case .postgresPrograms: "PostgreSQL's programs in /usr/lib/postgresql/*/bin"
        case .wrk: "wrk on PATH"
        }
    }
}

/// The requirements this run has, and whether a missing one skips or fails.
public enum TestEnvironment {
    /// Whether this is a CI run, where every requirement must be present.
    public static var isCI: Bool {
        guard let value = ProcessInfo.processInfo.environment["CI"]?.lowercased() else { return false }
        return !["", "0", "false", "no"].contains(value)
    }

    /// What `requirement` resolves to here (a URL or an executable's path), or nil when it is missing.
    public static func value(_ requirement: TestRequirement) -> String? {
        let environment = ProcessInfo.processInfo.environment
        func nonEmpty(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        switch requirement {
        case .postgreSQL: return nonEmpty("KIOSK_TEST_POSTGRES_URL")
        case .python: return nonEmpty("KIOSK_TEST_PYTHON")
        case .connectPython: return nonEmpty("KIOSK_TEST_CONNECT_PYTHON")
        case .browser: return nonEmpty("KIOSK_TEST_BROWSER_PYTHON")
        case .fusePython: return nonEmpty("KIOSK_TEST_FUSE_PYTHON")
        case .postgresPrograms:
            let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
            return versions.compactMap(Int.init).sorted().reversed().map { "/usr/lib/postgresql/\($0)/bin" }
                .first { FileManager.default.isExecutableFile(atPath: "\($0)/initdb") }
        case .openssl:
            return executable("openssl", path: environment["PATH"])
        case .wrk:
            return executable("wrk", path: environment["PATH"])
        case .nginx:
            return executable("nginx", path: environment["PATH"])
                ?? (FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx") ? "/usr/sbin/nginx" : nil)
        }
    }

    /// The first executable `name` in the directories of `path` (`/usr/bin:/bin` when unset).
    private static func executable(_ name: String, path: String?) -> String? {
        (path ?? "/usr/bin:/bin").split(separator: ":").map { "\($0)/\(name)" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Whether tests needing `requirement` run: when it is present, and always in CI (where ``require(_:)`` then
    /// fails them).
    public static func runs(_ requirement: TestRequirement) -> Bool {
        value(requirement) != nil || isCI
    }

    /// What `requirement` resolves to; throws, naming what sets it, when it is missing.
    public static func require(_ requirement: TestRequirement) throws -> String {
        guard let value = value(requirement) else { throw MissingTestRequirement(requirement: requirement) }
        return value
    }
}

/// A requirement a test needs is missing.
public struct MissingTestRequirement: Error, CustomStringConvertible {
    public var requirement: TestRequirement

    public var description: String {
        "\(requirement) is missing\(TestEnvironment.isCI ? ", and CI requires it" : ""): `bash .ci/run` installs "
            + "and names it; see docs/testing.md"
    }
}
