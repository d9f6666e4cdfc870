import KioskCore
import Testing

@Suite("Review state transitions")
struct ReviewStateTransitionTests {
    /// One row of the transition table: a state, an event, whether metadata is complete after it.
    struct Case: Sendable, CustomTestStringConvertible {
        var state: ReviewState
        var event: ReviewEvent
        var metadataComplete: Bool
        var testDescription: String { "\(state.rawValue) + \(event.rawValue) (complete: \(metadataComplete))" }
    }

    /// The legal transitions; every other state × event × completeness is illegal.
    static let legal: [String: ReviewState] = [
        "missing_metadata+metadata_changed+true": .readyToSubmit,
        "missing_metadata+metadata_changed+false": .missingMetadata,
        "ready_to_submit+metadata_changed+true": .readyToSubmit,
        "ready_to_submit+metadata_changed+false": .missingMetadata,
        "ready_to_submit+submit+true": .waitingForReview,
        "waiting_for_review+metadata_changed+true": .readyToSubmit,
        "waiting_for_review+metadata_changed+false": .missingMetadata,
        "waiting_for_review+approve+true": .approved,
        "waiting_for_review+approve+false": .approved,
        "waiting_for_review+reject+true": .rejected,
        "waiting_for_review+reject+false": .rejected,
        "approved+metadata_changed+true": .approved,
        "approved+metadata_changed+false": .approved,
        "approved+remove_from_sale+true": .developerRemovedFromSale,
        "approved+remove_from_sale+false": .developerRemovedFromSale,
        "rejected+metadata_changed+true": .rejected,
        "rejected+metadata_changed+false": .missingMetadata,
        "rejected+submit+true": .waitingForReview,
        "developer_removed_from_sale+metadata_changed+true": .developerRemovedFromSale,
        "developer_removed_from_sale+metadata_changed+false": .developerRemovedFromSale,
        "developer_removed_from_sale+restore_to_sale+true": .approved,
        "developer_removed_from_sale+restore_to_sale+false": .approved,
    ]

    static let allCases: [Case] = ReviewState.allCases.flatMap { state in
        ReviewEvent.allCases.flatMap { event in
            [true, false].map { Case(state: state, event: event, metadataComplete: $0) }
        }
    }

    // Proves every state × event × completeness either moves to the table's state or fails with a conflict that
    // names the current state and lists the allowed events in words.
    @Test(arguments: allCases)
    func transition(_ row: Case) {
        let key = "\(row.state.rawValue)+\(row.event.rawValue)+\(row.metadataComplete)"
        let result = row.state.apply(row.event, metadataComplete: row.metadataComplete)
        switch (result, Self.legal[key]) {
        case (.success(let next), .some(let expected)):
            #expect(next == expected)
        case (.failure(let error), .none):
            #expect(error.kind == .conflict)
            #expect(error.code == .invalidReviewTransition)
            #expect(error.field == "reviewState")
            #expect(error.message.hasPrefix("A product that is \(row.state.displayName) cannot be \(row.event.done)"))
            let allowed = row.state.allowedEvents(metadataComplete: row.metadataComplete)
            #expect(!allowed.contains(row.event))
            for event in allowed { #expect(error.message.contains(event.done)) }
            #expect(!error.message.contains("_"), "a person reads it: no internal event names")
            #expect(error.fix?.isEmpty == false)
        case (.success(let next), .none):
            Issue.record("\(key) should be illegal but moved to \(next)")
        case (.failure(let error), .some(let expected)):
            Issue.record("\(key) should move to \(expected) but failed: \(error)")
        }
    }

    // Proves the whole life of a product: created incomplete, completed, submitted, rejected, fixed, resubmitted,
    // approved, edited while live, removed and restored.
    @Test func productLifecycle() throws {
        var state = ReviewState.missingMetadata
        let steps: [(ReviewEvent, Bool, ReviewState)] = [
            (.metadataChanged, false, .missingMetadata), (.metadataChanged, true, .readyToSubmit),
            (.submit, true, .waitingForReview), (.reject, true, .rejected), (.metadataChanged, true, .rejected),
            (.submit, true, .waitingForReview), (.approve, true, .approved), (.metadataChanged, true, .approved),
            (.removeFromSale, true, .developerRemovedFromSale), (.restoreToSale, true, .approved),
        ]
        for (event, complete, expected) in steps {
            state = try state.apply(event, metadataComplete: complete).get()
            #expect(state == expected)
        }
    }

    // Proves submitting with incomplete metadata is refused with a fix that says to complete it.
    @Test func submitNeedsCompleteMetadata() {
        guard case .failure(let error) = ReviewState.readyToSubmit.apply(.submit, metadataComplete: false) else {
            Issue.record("submit with incomplete metadata succeeded")
            return
        }
        #expect(error.fix?.contains("metadata") == true)
    }

    // Proves every state has a display name as App Store Connect spells it.
    @Test func displayNames() {
        #expect(
            ReviewState.allCases.map(\.displayName) == [
                "Missing Metadata", "Ready to Submit", "Waiting for Review", "Approved", "Rejected",
                "Developer Removed from Sale",
            ])
    }
}
