import AsyncHTTPClient
import Foundation
import KioskCore
import KioskProtocol
import KioskTestSupport
import KioskTesting
import NIOCore
import Synchronization

/// A large catalog: `total` products, 10,000 to an app (App Store Connect's limit), each app's imported in one
/// request through the admin API; then every console page and admin list that shows the catalog, timed with all of
/// them in the store. Each line gives the median of a few requests, the size of the answer, and how that compares
/// with `/health` on the same server; the last line gives the process's resident memory.
func benchmarkLargeCatalog(products total: Int) async throws {
    try await withTestStore { store in
        let perApp = 10_000
        let apps = (0..<max(1, (total + perApp - 1) / perApp)).map { "com.example.catalog\($0)" }
        var importMilliseconds: [Double] = []
        var longestWaits: [Double] = []
        let probe = try await store.request(
            .POST, AdminRoutes.apps.path(), json: ["bundleId": "com.example.probe", "name": "Probe"])
        precondition(probe.status == 201, "app creation failed: \(probe.text)")
        for (index, bundleId) in apps.enumerated() {
            let created = try await store.request(
                .POST, AdminRoutes.apps.path(), json: ["bundleId": bundleId, "name": "Catalog \(index)"])
            precondition(created.status == 201, "app creation failed: \(created.text)")
            let count = min(perApp, total - index * perApp)
            let document = CatalogDocument(
                app: CatalogDocument.AppEntry(bundleId: bundleId, name: "Catalog \(index)"), subscriptionGroups: [],
                products: (0..<count).map { number in
                    CatalogDocument.ProductEntry(
                        productId: "\(bundleId).item\(number)", referenceName: "Item \(number)", type: .consumable,
                        pricing: Pricing(tier: 1 + number % 20),
                        localizations: [
                            ProductLocalization(
                                locale: "en_US", displayName: "Item \(number)",
                                description: "A thing for sale, number \(number).")
                        ])
                })
            let body = try JSONEncoder().encode(document)
            let started = ContinuousClock.now
            let (imported, longestWait) = try await whileWriting(store) {
                try await store.request(.POST, AdminRoutes.catalog.path(bundleId), body: body)
            }
            importMilliseconds.append(milliseconds(since: started))
            longestWaits.append(longestWait)
            precondition(imported.status == 200, "import failed: \(imported.text.prefix(500))")
        }
        emit(
            String(
                format: "import %d products in %d app(s) (SQLite, one request per app): median %.0f ms, max %.0f ms",
                total, apps.count, median(importMilliseconds), importMilliseconds.max() ?? 0))
        emit(
            String(
                format: "  a one-row write during an import: longest %.0f ms (median over the imports %.0f ms)",
                longestWaits.max() ?? 0, median(longestWaits)))

        var signIn = HTTPClientRequest(url: store.baseURL + "/console/sign-in")
        signIn.method = .POST
        signIn.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        signIn.body = .bytes(ByteBuffer(string: "name=Bench&token=\(store.adminToken)&next=%2Fconsole"))
        // The session cookie comes with the redirect that answers the sign-in, so the redirect is not followed.
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
        let signedIn = try await client.execute(signIn, timeout: .seconds(30))
        try await client.shutdown()
        guard let cookie = signedIn.headers["Set-Cookie"].first?.split(separator: ";").first.map(String.init) else {
            preconditionFailure("console sign-in answered \(signedIn.status) with no session cookie")
        }
        let health = try await timed(store, "/health", headers: [:])
        let app = apps[0]
        let middle = "\(app).item\(min(total, perApp) / 2)"
        let pages: [(String, String)] = [
            ("console overview", "/console"),
            ("console app page, first 100 products", "/console/apps/\(app)"),
            ("console app page 50", "/console/apps/\(app)?page=50"),
            ("console product page", "/console/apps/\(app)/products/\(middle)"),
            ("console customers", "/console/customers"),
            ("admin apps", AdminRoutes.apps.path()),
            ("admin products, limit 100 offset 5000", AdminRoutes.products.path(app) + "?limit=100&offset=5000"),
            ("admin one product", AdminRoutes.product.path(app, middle)),
            ("admin catalog export, JSON (one whole app)", AdminRoutes.catalog.path(app)),
            ("admin catalog export, .storekit (one whole app)", AdminRoutes.catalog.path(app) + "?format=storekit"),
        ]
        for (name, path) in pages {
            let page = try await timed(store, path, headers: path.hasPrefix("/console") ? ["Cookie": cookie] : [:])
            emit(
                name.padding(toLength: 52, withPad: " ", startingAt: 0)
                    + String(
                        format: "median %7.1f ms  %8.1f KiB  (/health %.2f ms, ×%.0f)", page.milliseconds,
                        Double(page.bytes) / 1024, health.milliseconds, page.milliseconds / health.milliseconds))
        }
        emit("resident memory with \(total) products in the store: \(residentMegabytes()) MB")
    }
}

/// Runs `work` while renaming an app over and over through the admin API (a one-row write each), and returns its
/// result with the longest one of those writes took: how long `work` kept other writers waiting.
private func whileWriting<T: Sendable>(_ store: TestStore, _ work: @escaping @Sendable () async throws -> T)
    async throws -> (T, Double)
{
    let done = Mutex(false)
    async let longest: Double = {
        var longest = 0.0
        var number = 0
        while !done.withLock({ $0 }) {
            number += 1
            let started = ContinuousClock.now
            let renamed = try await store.request(
                .PATCH, AdminRoutes.app.path("com.example.probe"), json: ["name": "Probe \(number)"])
            precondition(renamed.status == 200, "rename failed: \(renamed.text)")
            longest = max(longest, milliseconds(since: started))
        }
        return longest
    }()
    let result: T
    do {
        result = try await work()
    } catch {
        done.withLock { $0 = true }
        _ = try? await longest
        throw error
    }
    done.withLock { $0 = true }
    return (result, try await longest)
}

/// The median time of five `GET path`s, and the size of the answer.
private func timed(_ store: TestStore, _ path: String, headers: [String: String]) async throws -> (
    milliseconds: Double, bytes: Int
) {
    var times: [Double] = []
    var bytes = 0
    for _ in 0..<5 {
        let started = ContinuousClock.now
        let answer = try await store.request(.GET, path, headers: headers)
        times.append(milliseconds(since: started))
        precondition(answer.status == 200, "GET \(path) answered \(answer.status): \(answer.text.prefix(300))")
        bytes = answer.body.count
    }
    return (median(times), bytes)
}

private func milliseconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return elapsed.inSeconds * 1000
}

private func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}

/// This process's resident set size (VmRSS), in MB; 0 where /proc is not there.
func residentMegabytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
        let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
    else { return 0 }
    return kilobytes / 1024
}
