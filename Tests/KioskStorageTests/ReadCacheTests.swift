import Foundation
import KioskCore
import Testing

@testable import KioskStorage

/// The read cache in front of apps, products, sessions and settings: copies are used only while the database's
/// version of those rows is the one they were read at, so a change made through any process is seen by the next
/// transaction anywhere. Two databases opened on one URL stand for two replicas (or the server and the CLI).
@Suite("Read cache")
struct ReadCacheTests {
    @Test(arguments: TestEngine.all)
    func aChangeMadeElsewhereIsSeenByTheNextTransaction(engine: TestEngine) async throws {
        try await engine.withDatabase { here, url in
            try await Self.withSecondDatabase(url) { elsewhere in
                let tester = Fixtures.tester()
                let session = Fixtures.session(accountId: tester.id)
                try await here.transaction { tx in
                    try await tx.insertApp(Fixtures.app())
                    try await tx.insertProduct(Fixtures.product())
                    try await tx.insertAccount(tester)
                    try await tx.insertSession(session)
                    try await tx.setSetting("agreement", to: "pending")
                }
                // Read twice here, so the second read is served by the cache.
                for _ in 0..<2 {
                    let seen = try await here.transaction { tx in
                        (
                            try await tx.app(bundleId: "com.example.game")?.name,
                            try await tx.product(appId: 1_400_000_001, productId: "com.example.game.monthly")?
                                .clearedForSale,
                            try await tx.session(tokenHash: session.tokenHash) != nil,
                            try await tx.setting("agreement"),
                            try await tx.taxRules().isEmpty
                        )
                    }
                    #expect(seen.0 == "Game 1400000001" && seen.1 == false && seen.2 && seen.3 == "pending" && seen.4)
                }

                try await elsewhere.transaction { tx in
                    var app = try #require(try await tx.app(id: 1_400_000_001))
                    app.name = "Renamed"
                    try await tx.updateApp(app)
                    var product = Fixtures.product()
                    product.clearedForSale = true
                    try await tx.updateProduct(product)
                    try await tx.deleteSession(tokenHash: session.tokenHash)
                    try await tx.setSetting("agreement", to: "active")
                    try await tx.setTaxRule(
                        TaxRule(
                            storefront: "GBR", effectiveFrom: Fixtures.created, pricesIncludeTax: true,
                            rateBasisPoints: 2_500))
                }

                let after = try await here.transaction { tx in
                    (
                        try await tx.app(bundleId: "com.example.game")?.name,
                        try await tx.app(id: 1_400_000_001)?.name,
                        try await tx.product(appId: 1_400_000_001, productId: "com.example.game.monthly")?
                            .clearedForSale,
                        try await tx.products(appId: 1_400_000_001).map(\.clearedForSale),
                        try await tx.session(tokenHash: session.tokenHash) == nil,
                        try await tx.setting("agreement")
                    )
                }
                #expect(after.0 == "Renamed" && after.1 == "Renamed")
                #expect(after.2 == true && after.3 == [true])
                #expect(after.4 && after.5 == "active")
                #expect(try await here.transaction { try await $0.taxRules() }.map(\.rateBasisPoints) == [2_500])
            }
        }
    }

    @Test(arguments: TestEngine.all)
    func aWriterSeesItsOwnChangeAndAFailedOneLeavesNone(engine: TestEngine) async throws {
        struct Abandoned: Error {}
        try await engine.withDatabase { database, _ in
            try await database.transaction { tx in
                try await tx.insertApp(Fixtures.app())
                try await tx.insertProduct(Fixtures.product())
            }
            _ = try await database.transaction { try await $0.app(id: 1_400_000_001) }

            let renamed = try await database.transaction { tx in
                var product = try #require(
                    try await tx.product(appId: 1_400_000_001, productId: "com.example.game.monthly"))
                product.referenceName = "Monthly, renamed"
                try await tx.updateProduct(product)
                return try await tx.product(appId: 1_400_000_001, productId: "com.example.game.monthly")?
                    .referenceName
            }
            #expect(renamed == "Monthly, renamed")

            await #expect(throws: Abandoned.self) {
                try await database.transaction { tx in
                    var app = try #require(try await tx.app(id: 1_400_000_001))
                    app.name = "Never committed"
                    try await tx.updateApp(app)
                    #expect(try await tx.app(id: 1_400_000_001)?.name == "Never committed")
                    throw Abandoned()
                }
            }
            #expect(try await database.transaction { try await $0.app(id: 1_400_000_001)?.name } == "Game 1400000001")
            #expect(
                try await database.transaction {
                    try await $0.product(appId: 1_400_000_001, productId: "com.example.game.monthly")?.referenceName
                } == "Monthly, renamed")
        }
    }

    @Test(arguments: TestEngine.all)
    func copiesServeUntilTheVersionMoves(engine: TestEngine) async throws {
        // A write that bypasses the storage interface (so bumps no version) is not seen through the cache: proof
        // that reads are served from it. The next write through the interface, of any cached row, makes it seen.
        try await engine.withDatabase { database, url in
            try await Self.withSecondDatabase(url) { elsewhere in
                try await database.transaction { try await $0.insertApp(Fixtures.app()) }
                _ = try await database.transaction { try await $0.app(id: 1_400_000_001) }

                try await database.execute("UPDATE apps SET name = 'Changed behind its back'")
                #expect(
                    try await database.transaction { try await $0.app(id: 1_400_000_001)?.name } == "Game 1400000001")
                #expect(
                    try await elsewhere.transaction { try await $0.app(id: 1_400_000_001)?.name }
                        == "Changed behind its back")

                try await elsewhere.transaction { try await $0.setSetting("unrelated", to: "1") }
                #expect(
                    try await database.transaction { try await $0.app(id: 1_400_000_001)?.name }
                        == "Changed behind its back")
            }
        }
    }

    /// Runs `body` with a second database on `url`, closed afterwards: another replica of the same store.
    private static func withSecondDatabase(_ url: String, _ body: (any KioskDatabase) async throws -> Void)
        async throws
    {
        let second = try await TestEngine.open(url)
        do {
            try await body(second)
        } catch {
            try? await second.close()
            throw error
        }
        try await second.close()
    }
}
