import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskProtocol

/// `/sandbox/test/v1/apps/{bundleId}/…`: the sandbox test controls (`TestControlRoutes`), admin token only.
/// Production has no such routes.
struct TestControlsController {
    let testControls: TestControlsService
    let refunds: RefundService

    func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.post(TestControlRoutes.purchases.routerPath) { request, context in
            let body = try await request.decodeJSON(as: TestPurchaseRequest.self, context: context)
            let entry = try await testControls.purchase(bundleId: try context.parameters.require("bundleId"), body)
            return try JSONAnswer.response(entry, status: .created)
        }
        group.get(TestControlRoutes.payments.routerPath) { request, context in
            let state = try request.uri.queryParameters["state"].map { text in
                guard let state = PaymentState(rawValue: String(text)) else {
                    throw KioskError(
                        .invalidState, "'\(text)' is not a payment state.", field: "state",
                        fix: "Use one of: \(PaymentState.allCases.map(\.rawValue).joined(separator: ", ")).")
                }
                return state
            }
            return try JSONAnswer.response(
                try await testControls.payments(
                    bundleId: try context.parameters.require("bundleId"),
                    tester: request.uri.queryParameters["tester"].map(String.init), state: state))
        }
        group.post(TestControlRoutes.paymentDecision.routerPath) { _, context in
            let decisionText = try context.parameters.require("decision")
            guard let decision = TestControlsService.Decision(rawValue: decisionText) else {
                throw KioskError(
                    .unknownDecision, "'\(decisionText)' is not something a payment can be.", field: "decision",
                    fix: "Use approve, decline or resolve.")
            }
            return try JSONAnswer.response(
                try await testControls.decide(
                    bundleId: try context.parameters.require("bundleId"),
                    paymentId: try context.parameters.require("paymentId", as: UUID.self), decision))
        }
        group.get(TestControlRoutes.transactions.routerPath) { request, context in
            try JSONAnswer.response(
                try await testControls.transactions(
                    bundleId: try context.parameters.require("bundleId"), tester: try Self.tester(of: request)))
        }
        group.delete(TestControlRoutes.transactions.routerPath) { request, context in
            try JSONAnswer.response(
                try await testControls.clearTransactions(
                    bundleId: try context.parameters.require("bundleId"), tester: try Self.tester(of: request)))
        }
        group.delete(TestControlRoutes.transaction.routerPath) { _, context in
            try JSONAnswer.response(
                try await testControls.deleteTransaction(
                    bundleId: try context.parameters.require("bundleId"),
                    transactionId: try context.parameters.require("transactionId", as: Int64.self)))
        }
        group.get(TestControlRoutes.receipt.routerPath) { request, context in
            let deviceId = try request.uri.queryParameters["deviceId"].map { text in
                guard let id = UUID(uuidString: String(text)) else {
                    throw KioskError(
                        .invalidDeviceId, "'\(text)' is not a UUID.", field: "deviceId",
                        fix: "Send the device's identifierForVendor, e.g. 6F9619FF-8B86-D011-B42D-00C04FC964FF.")
                }
                return id
            }
            return try JSONAnswer.response(
                try await testControls.receipt(
                    bundleId: try context.parameters.require("bundleId"), tester: try Self.tester(of: request),
                    deviceId: deviceId))
        }
        group.get(TestControlRoutes.failures.routerPath) { _, context in
            try JSONAnswer.response(
                try await testControls.failures(bundleId: try context.parameters.require("bundleId")))
        }
        group.put(TestControlRoutes.failures.routerPath) { request, context in
            let body = try await request.decodeJSON(as: TestFailureRequest.self, context: context)
            return try JSONAnswer.response(
                try await testControls.setFailure(bundleId: try context.parameters.require("bundleId"), body))
        }
        group.get(TestControlRoutes.consumption.routerPath) { _, context in
            try JSONAnswer.response(
                try await refunds.consumptionReport(
                    bundleId: try context.parameters.require("bundleId"),
                    transactionId: try context.parameters.require("transactionId", as: Int64.self)))
        }
        addRefundRoutes(to: group)
        addNotificationRoutes(to: group)
    }

    /// Refunds and revocations of a transaction (`RefundTestPaths`): one route whose last segment names the action,
    /// as the contract describes it.
    func addRefundRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.post(TestControlRoutes.transactionAction.routerPath) { request, context in
            let bundleId = try context.parameters.require("bundleId")
            let transactionId = try context.parameters.require("transactionId", as: Int64.self)
            switch context.parameters.get("action") ?? "" {
            case "refund":
                let body = try await request.decodeJSON(as: RefundRequest.self, context: context)
                return try JSONAnswer.response(
                    try await refunds.refund(bundleId: bundleId, transactionId: transactionId, body))
            case "request-refund":
                let body = try await request.decodeJSON(as: TestRefundRequestRequest.self, context: context)
                return try JSONAnswer.response(
                    try await refunds.requestRefund(bundleId: bundleId, transactionId: transactionId, body))
            case "decline-refund":
                return try JSONAnswer.response(
                    try await refunds.declineRefund(bundleId: bundleId, transactionId: transactionId))
            case "reverse-refund":
                return try JSONAnswer.response(
                    try await refunds.reverseRefund(bundleId: bundleId, transactionId: transactionId))
            case "revoke":
                return try JSONAnswer.response(
                    try await refunds.revoke(bundleId: bundleId, transactionId: transactionId))
            case let action:
                throw KioskError(
                    .unknownAction, "'\(action)' is not something a sandbox transaction can be made to do.",
                    field: "action", fix: "Use refund, decline-refund, reverse-refund, revoke or request-refund.")
            }
        }
    }

    /// An app's notifications, in either environment, and their replay.
    func addNotificationRoutes(to group: RouterGroup<KioskRequestContext>) {
        let notifications = testControls.context.notifications
        group.get(TestControlRoutes.notifications.routerPath) { request, context in
            let environment = try request.uri.queryParameters["environment"].map { text in
                guard let environment = StoreEnvironment(rawValue: String(text)) else {
                    throw KioskError(
                        .invalidEnvironment, "'\(text)' is not an environment.", field: "environment",
                        fix: "Use sandbox or production.")
                }
                return environment
            }
            return try JSONAnswer.response(
                try await notifications.notifications(
                    bundleId: try context.parameters.require("bundleId"), environment: environment ?? .sandbox))
        }
        group.post(TestControlRoutes.resendNotification.routerPath) { _, context in
            try JSONAnswer.response(
                try await notifications.resend(
                    bundleId: try context.parameters.require("bundleId"),
                    uuid: try context.parameters.require("notificationUUID")))
        }
        group.post(TestControlRoutes.rescindConsent.routerPath) { request, context in
            let body = try await request.decodeJSON(as: TestConsentRequest.self, context: context)
            let answer = try await testControls.rescindConsent(
                bundleId: try context.parameters.require("bundleId"), body)
            return try JSONAnswer.response(answer, status: answer.rescinded ? .created : .ok)
        }
    }

    static func tester(of request: Request) throws -> String {
        guard let tester = request.uri.queryParameters["tester"], !tester.isEmpty else {
            throw KioskError(
                .missingTester, "Name the sandbox tester with ?tester=EMAIL.", field: "tester",
                fix: "Add ?tester=EMAIL to the URL.")
        }
        return String(tester)
    }
}
