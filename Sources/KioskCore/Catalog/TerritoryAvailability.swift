/// Where a product is offered, as App Store Connect's availability sets it: the territories listed, and whether
/// the product is offered in territories the store adds later. A product without one is offered in every territory
/// where it has a price.
public struct TerritoryAvailability: Codable, Sendable, Hashable {
    /// Alpha-3 codes as the storefront table spells them (`USA`, `FRA`).
    public var territories: Set<String>
    /// Kept as set: Kiosk's storefront table is fixed, so no territory is ever added to a running store.
    public var availableInNewTerritories: Bool

    public init(territories: Set<String>, availableInNewTerritories: Bool) {
        self.territories = Set(territories.map { Storefront.named($0)?.code ?? $0 })
        self.availableInNewTerritories = availableInNewTerritories
    }

    private enum CodingKeys: String, CodingKey { case territories, availableInNewTerritories }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            territories: Set(try container.decode([String].self, forKey: .territories)),
            availableInNewTerritories: try container.decode(Bool.self, forKey: .availableInNewTerritories))
    }

    /// The territories sorted, so a catalog file written twice is the same file.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(territories.sorted(), forKey: .territories)
        try container.encode(availableInNewTerritories, forKey: .availableInNewTerritories)
    }

    /// Whether the product is offered in `storefront`.
    public func includes(_ storefront: Storefront) -> Bool { territories.contains(storefront.code) }
}
