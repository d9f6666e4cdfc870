// coin-shop: a terminal store on KioskKit's StoreKit 1 face (the seeds' built-in model).
//
// Usage (against a Kiosk sandbox with an app, its two products, an agreement and a tester):
//
//   coin-shop products  --server http://127.0.0.1:8080 --bundle-id com.example.shop \
//                       --email tester@example.com --password sandbox-pass --state-dir /tmp/phone-1
//   coin-shop buy coins --quantity 3   [same options]      # 100 coins per unit
//   coin-shop buy remove-ads           [same options]      # non-consumable
//   coin-shop restore   [same options, --state-dir /tmp/phone-2]   # a second device restores remove-ads
//   coin-shop balance   --state-dir /tmp/phone-1
//
// Products default to <bundle-id>.coins and <bundle-id>.remove_ads (--coins-product, --remove-ads-product).
// Each state directory is one device: its session, payment queue and the shop's own ledger (coin-shop.json).
// Transactions are delivered into the ledger and only then finished; one left unfinished by a killed run is
// delivered at the next launch of the same device.

import ArgumentParser
import Foundation
import KioskKit

struct CoinShop: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coin-shop",
        abstract: "A terminal coin shop on KioskKit: buy coins and remove-ads, restore, show the balance.",
        subcommands: [Products.self, Buy.self, Restore.self, Balance.self])
}

/// Options every command shares.
struct ShopOptions: ParsableArguments {
    @Option(help: "The Kiosk store, e.g. http://127.0.0.1:8080.")
    var server = "http://127.0.0.1:8080"
    @Option(help: "The app's bundle id.")
    var bundleId = "com.example.shop"
    @Flag(help: "Use the production environment (customer accounts) instead of the sandbox (testers).")
    var production = false
    @Option(help: "The account's email; needed the first time a device signs in.")
    var email: String?
    @Option(help: "The account's password; needed the first time a device signs in.")
    var password: String?
    @Option(help: "This device's state directory.")
    var stateDir = "coin-shop-device"
    @Option(help: "The coins product id (default: <bundle-id>.coins).")
    var coinsProduct: String?
    @Option(help: "The remove-ads product id (default: <bundle-id>.remove_ads).")
    var removeAdsProduct: String?
    @Option(help: "Seconds to wait for each answer from the store.")
    var timeout = 30

    var directory: URL { URL(fileURLWithPath: stateDir, isDirectory: true) }
    var catalog: Catalog {
        Catalog(coins: coinsProduct ?? "\(bundleId).coins", removeAds: removeAdsProduct ?? "\(bundleId).remove_ads")
    }

    /// Opens the device, signs in if it is not yet, and adds the shop's observer, which delivers anything left
    /// unfinished by an earlier run.
    func open() async throws -> (KioskStoreClient, ShopObserver) {
        guard let serverURL = URL(string: server), serverURL.scheme != nil else {
            throw ValidationError("--server must be a URL such as http://127.0.0.1:8080")
        }
        let ledger = try ShopLedger.load(from: directory)
        try ledger.save(to: directory)
        let client = try KioskKit.configure(
            KioskStoreClient.Configuration(
                serverURL: serverURL, environment: production ? .production : .sandbox, bundleId: bundleId,
                deviceId: ledger.deviceId, stateDirectory: directory, trustedRoots: [],
                requestTimeout: .seconds(max(1, timeout))))
        do {
            if !client.isSignedIn {
                guard let email, let password else {
                    throw ValidationError("This device is not signed in: pass --email and --password.")
                }
                let account = try await client.signIn(email: email, password: password)
                print("Signed in as \(account.email).")
            }
        } catch {
            await client.close()
            throw error
        }
        let observer = ShopObserver(directory: directory, catalog: catalog, ledger: ledger)
        SKPaymentQueue.default().add(observer)
        return (client, observer)
    }
}

struct Products: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the shop's products and prices.")
    @OptionGroup var options: ShopOptions

    func run() async throws {
        let (client, observer) = try await options.open()
        defer { print(balanceLine(observer.balance)) }
        do {
            for product in try await fetchProducts(options.catalog, observer: observer) {
                print("\(product.productIdentifier)  \(product.localizedTitle) — \(product.localizedPrice)")
                print("    \(product.localizedDescription)")
            }
        } catch {
            await client.close()
            throw error
        }
        await client.close()
    }
}

struct Buy: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Buy coins (by quantity) or remove-ads.")
    @OptionGroup var options: ShopOptions

    enum Item: String, ExpressibleByArgument, CaseIterable {
        case coins
        case removeAds = "remove-ads"
    }

    @Argument(help: "coins or remove-ads.")
    var item: Item
    @Option(help: "How many units of coins (1–10).")
    var quantity = 1
    @Flag(help: "Sandbox: defer the purchase as Ask to Buy does.")
    var askToBuy = false

    func run() async throws {
        let (client, observer) = try await options.open()
        do {
            let productId = item == .coins ? options.catalog.coins : options.catalog.removeAds
            guard
                let product = try await fetchProducts(options.catalog, observer: observer)
                    .first(where: { $0.productIdentifier == productId })
            else {
                throw ValidationError("\(productId) is not on sale to this account.")
            }
            print("Buying \(product.localizedTitle) × \(quantity) at \(product.localizedPrice) each.")
            let payment = SKMutablePayment(product: product)
            payment.quantity = quantity
            payment.simulatesAskToBuyInSandbox = askToBuy
            SKPaymentQueue.default().add(payment)
            outcome: for await event in observer.events {
                switch event {
                case .delivered(let id) where id == productId, .deferred(let id) where id == productId:
                    break outcome
                case .failed(let id, let error) where id == productId:
                    throw error
                default:
                    continue
                }
            }
            // The finish was sent in the observer; closing waits for the store to acknowledge it.
        } catch {
            await client.close()
            throw error
        }
        await client.close()
        print(balanceLine(observer.balance))
    }
}

struct Restore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Restore remove-ads on this device (coins are consumable and not restored).")
    @OptionGroup var options: ShopOptions

    func run() async throws {
        let (client, observer) = try await options.open()
        SKPaymentQueue.default().restoreCompletedTransactions()
        do {
            restore: for await event in observer.events {
                switch event {
                case .restoreFinished: break restore
                case .restoreFailed(let error): throw error
                default: continue
                }
            }
        } catch {
            await client.close()
            throw error
        }
        await client.close()
        print("Restore finished.")
        print(balanceLine(observer.balance))
    }
}

struct Balance: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the coins and the ad setting of this device.")
    @OptionGroup var options: ShopOptions

    func run() throws {
        print(balanceLine(try ShopLedger.load(from: options.directory)))
    }
}

/// Requests the catalog's products with an `SKProductsRequest`, as the seeds do, and waits for the answer.
func fetchProducts(_ catalog: Catalog, observer: ShopObserver) async throws -> [SKProduct] {
    let request = SKProductsRequest(productIdentifiers: [catalog.coins, catalog.removeAds])
    request.delegate = observer
    request.start()
    for await event in observer.events {
        switch event {
        case .products(let response):
            for id in response.invalidProductIdentifiers { print("(not on sale: \(id))") }
            return response.products.sorted { $0.productIdentifier < $1.productIdentifier }
        case .requestFailed(let error):
            throw error
        default:
            continue
        }
    }
    throw CancellationError()
}

func balanceLine(_ ledger: ShopLedger) -> String {
    "Balance: \(ledger.coins) coins, ads \(ledger.adsRemoved ? "removed" : "shown")."
}

/// Runs the command tree from an async function, where Swift picks AsyncParsableCommand's async `main()`
/// (top-level code would pick the synchronous one, which cannot run async subcommands).
func runCoinShop() async {
    await CoinShop.main()
}

await runCoinShop()
