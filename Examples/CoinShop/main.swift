// coin-shop: a terminal store on KioskKit's StoreKit 1 face (the seeds' built-in model, or with --merchant
// their server model).
//
// Usage (against a Kiosk sandbox with an app, its two products, an agreement and a tester):
//
//   coin-shop products  --server http://127.0.0.1:8080 --bundle-id com.example.shop \
//                       --email tester@example.com --password sandbox-pass --state-dir /tmp/phone-1
//   coin-shop buy coins --quantity 3   [same options]      # 100 coins per unit
//   coin-shop buy remove-ads           [same options]      # non-consumable
//   coin-shop restore   [same options, --state-dir /tmp/phone-2]   # a second device restores remove-ads
//   coin-shop balance   --state-dir /tmp/phone-1       # syncs first, as an app does at launch
//
// The whole life cycle: a purchase left unfinished by a killed run, an Ask to Buy approved later (`buy --ask-to-buy`,
// then `kiosk test approve`), a refund or revocation (remove-ads shows the ads again; refunded coins are taken back)
// and a reversed refund all reach the device at its next launch, before the command does anything else.
//
// Products default to <bundle-id>.coins and <bundle-id>.remove_ads (--coins-product, --remove-ads-product).
// Each state directory is one device: its session, payment queue and the shop's own ledger (coin-shop.json).
// Transactions are delivered into the ledger and only then finished; one left unfinished by a killed run is
// delivered at the next launch of the same device, before the command does anything else.
//
// Server model (figure 1-3): add the app's own server and the user's token there (or $COIN_SHOP_USER_TOKEN):
//
//   coin-shop products  --merchant http://127.0.0.1:9090 [same options]   # product ids from the merchant
//   coin-shop buy coins --quantity 3 --merchant http://127.0.0.1:9090 --user-token TOKEN [same options]
//   coin-shop balance   --merchant http://127.0.0.1:9090 --user-token TOKEN  # what the merchant holds: any device
//   coin-shop restore   --merchant http://127.0.0.1:9090 --user-token TOKEN [same options]
//
// `buy` first creates an order at the merchant and pays with its app account token as applicationUsername; once
// purchased, the device writes transaction id → order id in its ledger, sends the signed transaction to the
// merchant, and finishes the transaction only after the merchant's answer. If the merchant cannot take it, the
// transaction stays unfinished and is sent again at the next launch. The coins and remove-ads live at the
// merchant, for the user, so a new device signed in to the same user sees them.

import ArgumentParser
import Foundation
import KioskKit
import X509

struct CoinShop: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coin-shop",
        abstract: "A terminal coin shop on KioskKit: buy coins and remove-ads, restore, show the balance.",
        subcommands: [Products.self, Buy.self, Restore.self, Balance.self])
}

/// Options every command shares.
struct ShopOptions: ParsableArguments {
    @Option(help: "The Kiosk store (default: $KIOSK_SERVER, else http://127.0.0.1:8080).")
    var server = ProcessInfo.processInfo.environment["KIOSK_SERVER"] ?? "http://127.0.0.1:8080"
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
    @Option(help: "Seconds to wait for each answer from the store (and the merchant).")
    var timeout = 30
    @Option(
        help: """
            The app's own server (merchant), e.g. http://127.0.0.1:9090: product ids come from it and purchases \
            are delivered through it (Apple's server model).
            """)
    var merchant: String?
    @Option(help: "The user's token at the merchant (default: $COIN_SHOP_USER_TOKEN).")
    var userToken: String?
    @Option(
        help: """
            Trust this PEM root for an https store or merchant besides the system's: the Kiosk TLS root from \
            `kiosk certs tls` (default: $KIOSK_TLS_ROOT).
            """)
    var tlsRoot: String?

    /// The roots `--tls-root` or `KIOSK_TLS_ROOT` names.
    func tlsRoots() throws -> [Certificate] {
        guard let path = tlsRoot ?? ProcessInfo.processInfo.environment["KIOSK_TLS_ROOT"] else { return [] }
        guard let pem = try? String(contentsOfFile: path, encoding: .utf8), let root = try? Certificate(pemEncoded: pem)
        else {
            throw ValidationError("--tls-root: \(path) is not a PEM certificate (kiosk-data/tls/kiosk-tls-root.pem).")
        }
        return [root]
    }

    var directory: URL { URL(fileURLWithPath: stateDir, isDirectory: true) }
    var catalog: Catalog {
        Catalog(coins: coinsProduct ?? "\(bundleId).coins", removeAds: removeAdsProduct ?? "\(bundleId).remove_ads")
    }

    /// The merchant with `--merchant`, else nil. Acting for the user (everything but product lists) needs a token.
    func merchantClient(needsUserToken: Bool = true) throws -> MerchantClient? {
        guard let merchant else { return nil }
        guard let url = URL(string: merchant), url.scheme != nil else {
            throw ValidationError("--merchant must be a URL such as http://127.0.0.1:9090")
        }
        let token = userToken ?? ProcessInfo.processInfo.environment["COIN_SHOP_USER_TOKEN"]
        if needsUserToken && token == nil {
            throw ValidationError("--merchant needs the user's token: pass --user-token or set COIN_SHOP_USER_TOKEN.")
        }
        return try MerchantClient(
            baseURL: url, userToken: token, requestTimeout: .seconds(max(1, timeout)), tlsTrustRoots: tlsRoots())
    }

    /// The product ids to ask the store for: the merchant's list (server model) or the shop's own two.
    func productIdentifiers(from merchant: MerchantClient?) async throws -> [String] {
        guard let merchant else { return [catalog.coins, catalog.removeAds] }
        return try await merchant.productIdentifiers(bundleId: bundleId)
    }

    /// Opens the device, signs in if it is not yet, adds the shop's observer and listens to `Transaction.updates`,
    /// then syncs: what an earlier run left unfinished is delivered, an Ask to Buy approved since is delivered, and
    /// a refund made since is taken back, all before the command does anything else. Without `signInRequired`,
    /// a device that is not signed in (and given no credentials) opens nothing: nil.
    func open(needsUserToken: Bool = true, signInRequired: Bool = true) async throws -> Device? {
        guard let serverURL = URL(string: server), serverURL.scheme != nil else {
            throw ValidationError("--server must be a URL such as http://127.0.0.1:8080")
        }
        let merchant = try merchantClient(needsUserToken: needsUserToken)
        let ledger = try ShopLedger.load(from: directory)
        try ledger.save(to: directory)
        let client = try KioskKit.configure(
            KioskStoreClient.Configuration(
                serverURL: serverURL, environment: production ? .production : .sandbox, bundleId: bundleId,
                deviceId: ledger.deviceId, stateDirectory: directory, trustedRoots: [],
                requestTimeout: .seconds(max(1, timeout)), tlsTrustRoots: tlsRoots()))
        if !client.isSignedIn && !signInRequired && (email == nil || password == nil) {
            await client.close()
            await merchant?.close()
            return nil
        }
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
            await merchant?.close()
            throw error
        }
        let observer = ShopObserver(directory: directory, catalog: catalog, ledger: ledger, merchant: merchant)
        SKPaymentQueue.default().add(observer)
        // Refunds and revocations, each with its transaction; the stream ends when the client closes, after what
        // it already holds.
        let revocations = Task {
            for await update in Transaction.updates(client: client) { observer.take(back: update) }
        }
        let device = Device(client: client, observer: observer, revocations: revocations)
        // Settle what an earlier run left before anything else: a payment it sent without hearing back, a
        // transaction it delivered but could not finish, an approval or a refund since. When sync returns, the
        // observer has been told all of it: it delivers each transaction once (the ledger remembers delivered
        // ids) and finishes it.
        do {
            try await AppStore.sync(client: client)
        } catch {
            await device.close()
            throw error
        }
        return device
    }
}

/// One open device: the store's client, the shop's observer, and with `--merchant` the merchant's client.
struct Device {
    let client: KioskStoreClient
    let observer: ShopObserver
    /// Reads `Transaction.updates` for refunds and revocations until the client closes.
    let revocations: Task<Void, Never>
    var merchant: MerchantClient? { observer.merchant }

    /// Waits for the deliveries to the merchant, then closes (the store's client waits for the finishes to be
    /// acknowledged) and lets the revocations already received be taken back.
    func close() async {
        await observer.settle()
        await client.close()
        await revocations.value
        await merchant?.close()
    }
}

struct Products: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the shop's products and prices.")
    @OptionGroup var options: ShopOptions

    func run() async throws {
        guard let device = try await options.open(needsUserToken: false) else { return }
        // With --merchant the balance is the merchant's (`balance --merchant`), not this device's.
        defer { if device.merchant == nil { print(balanceLine(device.observer.balance)) } }
        do {
            let identifiers = try await options.productIdentifiers(from: device.merchant)
            for product in try await fetchProducts(identifiers, observer: device.observer) {
                print("\(product.productIdentifier)  \(product.localizedTitle) — \(product.localizedPrice)")
                print("    \(product.localizedDescription)")
            }
        } catch {
            await device.close()
            throw error
        }
        await device.close()
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
        guard let device = try await options.open() else { return }
        let observer = device.observer
        do {
            let productId = item == .coins ? options.catalog.coins : options.catalog.removeAds
            let identifiers = try await options.productIdentifiers(from: device.merchant)
            guard
                let product = try await fetchProducts(identifiers, observer: observer)
                    .first(where: { $0.productIdentifier == productId })
            else {
                throw ValidationError("\(productId) is not on sale to this account.")
            }
            print("Buying \(product.localizedTitle) × \(quantity) at \(product.localizedPrice) each.")
            let payment = SKMutablePayment(product: product)
            payment.quantity = quantity
            payment.simulatesAskToBuyInSandbox = askToBuy
            if let merchant = device.merchant {
                // Server model: an order for this user first; the payment carries its app account token.
                let order = try await merchant.createOrder(
                    productId: productId, quantity: quantity, bundleId: options.bundleId)
                print("Order \(order.orderId) at the merchant.")
                observer.expect(orderId: order.orderId, appAccountToken: order.appAccountToken)
                payment.applicationUsername = order.appAccountToken.uuidString
            }
            SKPaymentQueue.default().add(payment)
            outcome: for await event in observer.events {
                switch event {
                case .delivered(let id) where id == productId, .deferred(let id) where id == productId:
                    break outcome
                case .failed(let id, let error) where id == productId,
                    .notDelivered(let id, let error) where id == productId:
                    throw error
                default:
                    continue
                }
            }
            // The finish was sent in the observer; closing waits for the store to acknowledge it.
            if let merchant = device.merchant {
                print(try await merchantBalance(merchant))
            }
        } catch {
            await device.close()
            throw error
        }
        await device.close()
        if device.merchant == nil { print(balanceLine(observer.balance)) }
    }
}

struct Restore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Restore remove-ads on this device (coins are consumable and not restored).")
    @OptionGroup var options: ShopOptions

    func run() async throws {
        guard let device = try await options.open() else { return }
        SKPaymentQueue.default().restoreCompletedTransactions()
        // With --merchant, what the user owns is what the merchant holds (restored transactions go to it too).
        var merchantLine: String?
        do {
            restore: for await event in device.observer.events {
                switch event {
                case .restoreFinished: break restore
                case .restoreFailed(let error): throw error
                default: continue
                }
            }
            if let merchant = device.merchant {
                await device.observer.settle()
                merchantLine = try await merchantBalance(merchant)
            }
        } catch {
            await device.close()
            throw error
        }
        await device.close()
        print("Restore finished.")
        print(merchantLine ?? balanceLine(device.observer.balance))
    }
}

struct Balance: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the coins and the ad setting of this device (with --merchant: of the user, at the merchant).",
        discussion: """
            A signed-in device syncs first, as an app does at launch: an Ask to Buy approved since is delivered, \
            a refund since is taken back.
            """)
    @OptionGroup var options: ShopOptions

    func run() async throws {
        guard let merchant = try options.merchantClient() else {
            if let device = try await options.open(signInRequired: false) {
                await device.close()
                print(balanceLine(device.observer.balance))
            } else {
                print(balanceLine(try ShopLedger.load(from: options.directory)) + " (not signed in: not synced)")
            }
            return
        }
        do {
            print(try await merchantBalance(merchant))
        } catch {
            await merchant.close()
            throw error
        }
        await merchant.close()
    }
}

/// Requests the products with an `SKProductsRequest`, as the seeds do, and waits for the answer.
func fetchProducts(_ identifiers: [String], observer: ShopObserver) async throws -> [SKProduct] {
    let request = SKProductsRequest(productIdentifiers: Set(identifiers))
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

/// What the merchant holds for the user (the same on every device): balances and active entitlements.
func merchantBalance(_ merchant: MerchantClient) async throws -> String {
    let owned = try await merchant.entitlements()
    let balances = owned.balances.map { "\($0.amount) \($0.name)" }
    let entitlements = owned.entitlements.filter { $0.active }.map {
        $0.name + ($0.level.map { " (level \($0))" } ?? "")
    }
    let owns = balances.isEmpty ? "nothing" : balances.joined(separator: ", ")
    return "Balance at the merchant for \(owned.userId): \(owns)"
        + "; entitlements: \(entitlements.isEmpty ? "none" : entitlements.joined(separator: ", "))."
}

/// Runs the command tree from an async function, where Swift picks AsyncParsableCommand's async `main()`
/// (top-level code would pick the synchronous one, which cannot run async subcommands).
func runCoinShop() async {
    await CoinShop.main()
}

await runCoinShop()
