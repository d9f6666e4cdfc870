import Foundation
import Hummingbird
import KioskCore
import KioskProtocol

/// A sandbox tester's settings and waiting payments, from their page: Ask to Buy, interrupted purchases, the card's
/// outcome, the renewal rate, clearing the purchase history, and approving or declining what waits.
extension ConsoleController {
    func addTesterRoutes(to pages: RouterGroup<KioskRequestContext>) {
        pages.post("testers/:email/settings") { request, context in
            let email = try Self.email(context)
            return try await action(request, context, audit: "tester.settings") { form in
                let outcome = try form["paymentOutcome"].map { text in
                    guard let outcome = PaymentOutcome(rawValue: text) else {
                        throw KioskError(.invalidOutcome, "Choose the card's outcome.", field: "paymentOutcome")
                    }
                    return outcome
                }
                let rate = try form["renewalRate"].map { text in
                    guard let rate = RenewalRate(rawValue: text) else {
                        throw KioskError(.invalidRate, "Choose a renewal rate.", field: "renewalRate")
                    }
                    return rate
                }
                _ = try await accounts.updateAccount(
                    .sandbox, email: email,
                    changes: AccountChanges(
                        paymentOutcome: outcome, interruptPurchases: form["interruptPurchases"] == "on",
                        askToBuy: form["askToBuy"] == "on", renewalRate: rate))
                return ConsoleOutcome(
                    target: email, redirect: Self.customerPath(email),
                    notice: "Saved the settings of \(email); they apply to the next purchase and renewal.")
            }
        }
        pages.post("testers/:email/clear-purchase-history") { request, context in
            let email = try Self.email(context)
            return try await action(request, context, audit: "tester.clear-purchase-history") { _ in
                _ = try await accounts.clearPurchaseHistory(email: email)
                return ConsoleOutcome(
                    target: email, redirect: Self.customerPath(email),
                    notice: "Cleared the purchase history of \(email): the tester can buy everything again.")
            }
        }
        pages.post("testers/:email/payments/:paymentId") { request, context in
            let email = try Self.email(context)
            let paymentId = try context.parameters.require("paymentId", as: UUID.self)
            return try await action(request, context, audit: "test.payment-decision") { form in
                guard let decision = TestControlsService.Decision(rawValue: form["decision"] ?? "") else {
                    throw KioskError(.invalidDecision, "Approve or decline the payment.", field: "decision")
                }
                _ = try await testControls.decide(bundleId: form["bundleId"] ?? "", paymentId: paymentId, decision)
                return ConsoleOutcome(
                    target: "\(decision.rawValue) payment \(paymentId) of \(email)", redirect: Self.customerPath(email),
                    notice: decision == .approve
                        ? "Approved the payment \(paymentId) of \(email): it is charged (simulated; no money moved)."
                        : "Declined the payment \(paymentId) of \(email): nothing was charged.")
            }
        }
    }

    /// The tester's settings as the form shows them.
    static func testerSettings(_ account: Account) -> CustomerPage.TesterSettings {
        let settings = account.sandbox ?? SandboxSettings()
        return CustomerPage.TesterSettings(
            askToBuy: settings.askToBuy, interruptPurchases: settings.interruptPurchases,
            outcomes: PaymentOutcome.allCases.map {
                ConsoleOption(value: $0.rawValue, selected: $0 == account.paymentOutcome)
            },
            rates: RenewalRate.allCases.map { ConsoleOption(value: $0.rawValue, selected: $0 == settings.renewalRate) },
            historyCleared: settings.purchaseHistoryClearedAt.map(time))
    }

    /// The tester's payments waiting for a decision (Ask to Buy, interrupted), in every app.
    func waitingPayments(email: String) async throws -> [CustomerPage.WaitingPayment] {
        var rows: [CustomerPage.WaitingPayment] = []
        for app in try await catalog.apps() {
            for payment in try await testControls.payments(bundleId: app.bundleId, tester: email, state: nil).payments
            where payment.state == PaymentState.deferred.rawValue || payment.state == PaymentState.interrupted.rawValue
            {
                rows.append(
                    CustomerPage.WaitingPayment(
                        id: payment.paymentId.uuidString, bundleId: app.bundleId, productId: payment.productId,
                        state: payment.state,
                        decisions: (payment.state == PaymentState.deferred.rawValue
                            ? ["approve", "decline"] : ["resolve"]).map { ConsoleOption(value: $0) }))
            }
        }
        return rows
    }
}
