import Foundation
import KioskCore
import KioskSigning
import Testing

@testable import KioskKit

/// Signed transactions are trusted only when they chain to a configured root and were signed for this app and
/// environment; the decoded fields keep exact prices.
@Suite struct TransactionVerificationTests {
    static func payload(bundleId: String = "com.example.shop", environment: String = "Sandbox")
        -> JWSTransactionDecodedPayload
    {
        JWSTransactionDecodedPayload(
            transactionId: "2000000001", originalTransactionId: "2000000000", bundleId: bundleId,
            productId: "com.example.coins", purchaseDate: 1_700_000_000_000, originalPurchaseDate: 1_699_000_000_000,
            quantity: 3, type: "Consumable", appAccountToken: "7C3A7E0E-8A57-4A51-9E48-2E1C4D5B6A70",
            signedDate: Int64(Date().timeIntervalSince1970 * 1000), environment: environment, storefront: "USA",
            storefrontId: "143441", currency: "USD", price: 2970)
    }

    @Test func verification() async throws {
        let identity = try SigningIdentity.generate(environment: .sandbox, now: Date())
        let stranger = try SigningIdentity.generate(environment: .sandbox, now: Date())
        let signer = JWSSigner(identity: identity)
        let directory = Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = Fixtures.offlineConfiguration(stateDirectory: directory)
        configuration.trustedRoots = [identity.root]
        let client = try KioskStoreClient(configuration: configuration)

        let jws = try signer.sign(payload: Self.payload())
        guard case .verified(let transaction) = await client.verifiedTransaction(jws) else {
            Issue.record("a transaction signed by the trusted chain did not verify")
            return await client.close()
        }
        #expect(transaction.id == 2_000_000_001 && transaction.originalID == 2_000_000_000)
        #expect(transaction.productID == "com.example.coins" && transaction.productType == .consumable)
        #expect(transaction.purchasedQuantity == 3)
        #expect(transaction.price == Decimal(string: "2.97") && transaction.currencyCode == "USD")
        #expect(transaction.environment == .sandbox)
        #expect(transaction.appAccountToken == UUID(uuidString: "7C3A7E0E-8A57-4A51-9E48-2E1C4D5B6A70"))
        #expect(transaction.purchaseDate == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(transaction.jwsRepresentation == jws)

        let otherApp = try signer.sign(payload: Self.payload(bundleId: "com.example.other"))
        guard case .unverified(_, .invalidEnvironment) = await client.verifiedTransaction(otherApp) else {
            Issue.record("another app's transaction verified")
            return await client.close()
        }
        let production = try signer.sign(payload: Self.payload(environment: "Production"))
        guard case .unverified(_, .invalidEnvironment) = await client.verifiedTransaction(production) else {
            Issue.record("a production transaction verified in the sandbox")
            return await client.close()
        }
        let forged = try JWSSigner(identity: stranger).sign(payload: Self.payload())
        guard case .unverified(let decoded, .invalidCertificateChain) = await client.verifiedTransaction(forged) else {
            Issue.record("a transaction signed by an untrusted chain verified")
            return await client.close()
        }
        #expect(decoded.productID == "com.example.coins", "an unverified transaction is still readable")
        #expect(await client.verifiedTransaction("not.a.jws") == nil)
        await client.close()
    }

    /// A signed transaction with a date outside 1970–9999 never reaches the certificate check (which trapped on
    /// it) nor a `Date` an app could trip over: a self-made chain's payload with such a `signedDate` is refused
    /// before its chain, and such a payload (even one the trusted chain signed) cannot be decoded at all.
    @Test(arguments: [253_402_300_800_000, -1_000_000_000_000_000, Int64.max, Int64.min])
    func datesOutsideTheRangeCannotBeDecoded(milliseconds: Int64) async throws {
        let identity = try SigningIdentity.generate(environment: .sandbox, now: Date())
        let stranger = try SigningIdentity.generate(environment: .sandbox, now: Date())
        let directory = Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = Fixtures.offlineConfiguration(stateDirectory: directory)
        configuration.trustedRoots = [identity.root]
        let client = try KioskStoreClient(configuration: configuration)

        var hostileSignedDate = Self.payload()
        hostileSignedDate.signedDate = milliseconds
        #expect(
            await client.verifiedTransaction(try JWSSigner(identity: stranger).sign(payload: hostileSignedDate)) == nil)
        var hostilePurchaseDate = Self.payload()
        hostilePurchaseDate.purchaseDate = milliseconds
        #expect(
            await client.verifiedTransaction(try JWSSigner(identity: identity).sign(payload: hostilePurchaseDate))
                == nil)
        #expect(
            await client.verifiedTransaction(try JWSSigner(identity: identity).sign(payload: Self.payload())) != nil)
        await client.close()
    }
}
