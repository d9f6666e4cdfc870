extension ReviewState {
    /// The state a product moves to when `event` happens, or the reason it cannot.
    ///
    /// The rules, as App Store Connect applies them:
    /// - Missing Metadata and Ready to Submit follow metadata completeness on every edit.
    /// - `submit` works from Ready to Submit, and from Rejected once the metadata is complete (a resubmission),
    ///   moving to Waiting for Review.
    /// - `approve` and `reject` work only from Waiting for Review. Editing a product waiting for review withdraws
    ///   the submission (back to Ready to Submit or Missing Metadata), since review judges what was submitted.
    /// - Editing an approved product keeps it Approved: Apple keeps selling the reviewed version while the edit
    ///   waits, so availability does not flicker. Editing a rejected product keeps it Rejected until resubmitted,
    ///   unless the edit leaves the metadata incomplete (then Missing Metadata).
    /// - `removeFromSale` works from Approved (→ Developer Removed from Sale), `restoreToSale` goes back to Approved;
    ///   edits while removed keep it removed.
    ///
    /// - Parameters:
    ///   - event: What happened.
    ///   - metadataComplete: Whether the product, after the event, has complete metadata
    ///     (`Product.missingMetadata(storefronts:)` is empty).
    /// - Returns: The next state, or a `conflict` error `invalid_review_transition` naming the current state and
    ///   the events allowed in it.
    public func apply(_ event: ReviewEvent, metadataComplete: Bool) -> Result<ReviewState, KioskError> {
        if let next = nextState(after: event, metadataComplete: metadataComplete) {
            return .success(next)
        }
        let allowed = allowedEvents(metadataComplete: metadataComplete)
        let fix: String
        let couldSubmit = self == .missingMetadata || self == .readyToSubmit || self == .rejected
        if event == .submit, !metadataComplete, couldSubmit {
            fix = "Complete the product's metadata (a localization and a price) before submitting it."
        } else {
            fix = "Use one of the actions a product that is \(displayName) allows."
        }
        return .failure(
            KioskError(
                .invalidReviewTransition,
                "A product that is \(displayName) cannot be \(event.done); it can be "
                    + allowed.map(\.done).sentence("or") + ".",
                field: "reviewState", fix: fix))
    }

    /// The events `apply(_:metadataComplete:)` accepts in this state.
    public func allowedEvents(metadataComplete: Bool) -> [ReviewEvent] {
        ReviewEvent.allCases.filter { nextState(after: $0, metadataComplete: metadataComplete) != nil }
    }

    /// The transition table; nil marks an illegal transition.
    private func nextState(after event: ReviewEvent, metadataComplete: Bool) -> ReviewState? {
        let completeness: ReviewState = metadataComplete ? .readyToSubmit : .missingMetadata
        switch (self, event) {
        case (.missingMetadata, .metadataChanged), (.readyToSubmit, .metadataChanged),
            (.waitingForReview, .metadataChanged):
            return completeness
        case (.readyToSubmit, .submit), (.rejected, .submit):
            return metadataComplete ? .waitingForReview : nil
        case (.waitingForReview, .approve):
            return .approved
        case (.waitingForReview, .reject):
            return .rejected
        case (.approved, .metadataChanged):
            return .approved
        case (.rejected, .metadataChanged):
            return metadataComplete ? .rejected : .missingMetadata
        case (.approved, .removeFromSale):
            return .developerRemovedFromSale
        case (.developerRemovedFromSale, .restoreToSale):
            return .approved
        case (.developerRemovedFromSale, .metadataChanged):
            return .developerRemovedFromSale
        default:
            return nil
        }
    }

    /// The state's name as App Store Connect shows it, e.g. "Ready to Submit".
    public var displayName: String {
        switch self {
        case .missingMetadata: "Missing Metadata"
        case .readyToSubmit: "Ready to Submit"
        case .waitingForReview: "Waiting for Review"
        case .approved: "Approved"
        case .rejected: "Rejected"
        case .developerRemovedFromSale: "Developer Removed from Sale"
        }
    }
}
