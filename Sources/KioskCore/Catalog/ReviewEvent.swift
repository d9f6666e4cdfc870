/// Something that happens to a product in App Store review; the input of `ReviewState.apply(_:metadataComplete:)`.
public enum ReviewEvent: String, Codable, Sendable, CaseIterable, Hashable {
    /// The developer edited the product (names, descriptions, price, subscription settings).
    case metadataChanged = "metadata_changed"
    /// The developer submitted the product for review.
    case submit
    /// Review approved the product.
    case approve
    /// Review rejected the product.
    case reject
    /// The developer removed the approved product from sale.
    case removeFromSale = "remove_from_sale"
    /// The developer put a removed product back on sale.
    case restoreToSale = "restore_to_sale"
}

extension ReviewEvent {
    /// What the event does to a product, as a person says it after "can be": "submitted for review".
    public var done: String {
        switch self {
        case .metadataChanged: "edited"
        case .submit: "submitted for review"
        case .approve: "approved"
        case .reject: "rejected"
        case .removeFromSale: "removed from sale"
        case .restoreToSale: "restored to sale"
        }
    }
}
