import Foundation

/// What the shop has delivered, kept in `coin-shop.json` next to the device's state: the coin balance, the
/// remove-ads flag and the transactions already delivered (so a transaction shown again after a crash, before
/// its finish reached the store, is not delivered twice).
///
/// With `--merchant` the merchant keeps the coins and remove-ads; the device keeps only the order of each
/// purchased transaction until the merchant took it (`merchantOrders`, transaction id → order id).
struct ShopLedger: Codable {
    var coins = 0
    var adsRemoved = false
    var deliveredTransactionIds: [String] = []
    var merchantOrders: [String: String]?
    /// This device's id, made at first launch and kept with the state (what `identifierForVendor` is on iOS).
    var deviceId = UUID()

    static func url(in directory: URL) -> URL { directory.appendingPathComponent("coin-shop.json") }

    static func load(from directory: URL) throws -> ShopLedger {
        let url = url(in: directory)
        guard FileManager.default.fileExists(atPath: url.path) else { return ShopLedger() }
        return try JSONDecoder().decode(ShopLedger.self, from: Data(contentsOf: url))
    }

    func save(to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(self).write(to: Self.url(in: directory), options: .atomic)
    }
}
