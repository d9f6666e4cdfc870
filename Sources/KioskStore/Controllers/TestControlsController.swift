import Foundation
import Hummingbird
import KioskCore
import KioskProtocol

/// `/sandbox/test/v1/apps/{bundleId}/…`: the sandbox test controls (`TestControlPaths`), admin token only.
/// Production has no such routes.
struct TestControlsController {
    let testControls: TestControlsService

    func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.post("apps/:bundleId/purchases") { request, context in
            let body = try await request.decodeJSON(as: TestPurchaseRequest.self, context: context)
            let entry = try await testControls.purchase(bundleId: try context.parameters.require("bundleId"), body)
            return try JSONAnswer.response(entry, status: .created)
        }
        group.get("apps/:bundleId/payments") { request, context in
            let state = try request.uri.queryParameters["state"].map { text in
                guard let state = PaymentState(rawValue: String(text)) else {
                    throw KioskError.invalid(
                        "invalid_state", "'\(text)' is not a payment state.", field: "state",
                        fix: "Use one of: \(PaymentState.allCases.map(\.rawValue).joined(separator: ", ")).")
                }
                return state
            }
            return try JSONAnswer.response(
                try await testControls.payments(
                    bundleId: try context.parameters.require("bundleId"),
                    tester: request.uri.queryParameters["tester"].map(String.init), state: state))
        }
        group.post("apps/:bundleId/payments/:paymentId/:decision") { _, context in
            let decisionText = try context.parameters.require("decision")
            guard let decision = TestControlsService.Decision(rawValue: decisionText) else {
                throw KioskError.notFound(
                    "unknown_decision", "'\(decisionText)' is not something a payment can be.", field: "decision",
                    fix: "Use approve, decline or resolve.")
            }
            return try JSONAnswer.response(
                try await testControls.decide(
                    bundleId: try context.parameters.require("bundleId"),
                    paymentId: try context.parameters.require("paymentId", as: UUID.self), decision))
        }
        group.get("apps/:bundleId/transactions") { request, context in
            try JSONAnswer.response(
                try await testControls.transactions(
                    bundleId: try context.parameters.require("bundleId"), tester: try Self.tester(of: request)))
        }
        group.delete("apps/:bundleId/transactions") { request, context in
            try JSONAnswer.response(
                try await testControls.clearTransactions(
                    bundleId: try context.parameters.require("bundleId"), tester: try Self.tester(of: request)))
        }
        group.delete("apps/:bundleId/transactions/:transactionId") { _, context in
            try JSONAnswer.response(
                try await testControls.deleteTransaction(
                    bundleId: try context.parameters.require("bundleId"),
                    transactionId: try context.parameters.require("transactionId", as: Int64.self)))
        }
        group.get("apps/:bundleId/failures") { _, context in
            try JSONAnswer.response(try await testControls.failures(bundleId: try context.parameters.require("bundleId")))
        }
        group.put("apps/:bundleId/failures") { request, context in
            let body = try await request.decodeJSON(as: TestFailureRequest.self, context: context)
            return try JSONAnswer.response(
                try await testControls.setFailure(bundleId: try context.parameters.require("bundleId"), body))
        }
    }

    static func tester(of request: Request) throws -> String {
        guard let tester = request.uri.queryParameters["tester"], !tester.isEmpty else {
            throw KioskError.invalid(
                "missing_tester", "Name the sandbox tester with ?tester=EMAIL.", field: "tester",
                fix: "Add ?tester=EMAIL to the URL.")
        }
        return String(tester)
    }
}

extension TestPurchaseRequest: StrictlyDecodable {
    package static let knownKeys: Set<String> = ["tester", "productId", "quantity", "promoted"]
}

extension TestFailureRequest: StrictlyDecodable {
    package static let knownKeys: Set<String> = ["api", "count", "error"]
}
