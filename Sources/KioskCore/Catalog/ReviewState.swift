/// Where a product stands in App Store review, as App Store Connect shows it.
///
/// The transitions are in `ReviewState+Transitions.swift`.
public enum ReviewState: String, Codable, Sendable, CaseIterable, Hashable, NamedValues {
    case missingMetadata = "missing_metadata"
    case readyToSubmit = "ready_to_submit"
    case waitingForReview = "waiting_for_review"
    case approved
    case rejected
    case developerRemovedFromSale = "developer_removed_from_sale"
}
