import Foundation
import Hummingbird
import KioskCore
import KioskProtocol

/// The sandbox: its clock (freeze, resume, advance, set, reset) and, from a tester's page, the subscription test
/// controls (renew now, expire, fail the next renewal, recover, auto-renew off and on).
extension ConsoleController {
    func addSandboxRoutes(to pages: RouterGroup<KioskRequestContext>) {
        pages.get("sandbox") { _, context in
            let clock = sandboxClock.current()
            return renderer.page(
                SandboxPage(
                    now: Self.time(Date(millisecondsSince1970: clock.now)), frozen: clock.frozen,
                    offset: Self.duration(milliseconds: clock.offsetMilliseconds)
                ), title: "Sandbox", section: "Sandbox", session: context.consoleSession)
        }
        pages.post("sandbox/clock") { request, context in
            try await action(request, context, audit: "sandbox.clock") { form in
                let action = form["action"] ?? ""
                let changed = try await sandboxClock.change(
                    TestClockRequest(
                        action: action, by: form["by"].map(TestClockAmount.text),
                        to: form["to"].map(TestClockAmount.text)))
                let now = Self.time(Date(millisecondsSince1970: changed.now))
                return ConsoleOutcome(
                    target: "\(action) → \(now)", redirect: "/console/sandbox",
                    notice: "The sandbox clock now reads \(now); what fell due on the way (renewals, retries, "
                        + "expiries) was processed.")
            }
        }
        pages.post("testers/:email/subscriptions/:originalTransactionId") { request, context in
            let email = try Self.email(context)
            let original = try context.parameters.require("originalTransactionId", as: Int64.self)
            return try await action(request, context, audit: "test.subscription") { form in
                let action = form["action"] ?? ""
                // The page's identifier makes a double submit of one page one cancellation flow.
                _ = try await subscriptions.act(
                    bundleId: form["bundleId"] ?? "", originalTransactionId: original,
                    TestSubscriptionRequest(
                        action: action, requestIdentifier: form["requestIdentifier"].flatMap(UUID.init(uuidString:))))
                return ConsoleOutcome(
                    target: "\(action) subscription \(original) of \(email)", redirect: Self.customerPath(email),
                    notice: "Did \(action.replacingOccurrences(of: "-", with: " ")) on subscription \(original); its "
                        + "state and notifications are below.")
            }
        }
    }

    /// The tester's subscriptions in each app, with the actions the test controls offer.
    func subscriptionRows(email: String, apps: [App]) async throws -> [CustomerPage.Subscription] {
        var rows: [CustomerPage.Subscription] = []
        for app in apps {
            for subscription in try await subscriptions.list(bundleId: app.bundleId, tester: email).subscriptions {
                rows.append(
                    CustomerPage.Subscription(
                        bundleId: app.bundleId, originalId: subscription.originalTransactionId,
                        productId: subscription.productId, state: subscription.state,
                        autoRenew: subscription.autoRenewStatus ? "on" : "off",
                        expires: Self.time(Date(millisecondsSince1970: subscription.expiresDate)),
                        requestIdentifier: UUID().uuidString,
                        actions: [
                            ("renew", "Renew now"), ("expire", "Expire now"), ("fail-renewal", "Fail next renewal"),
                            ("recover", "Recover billing"), ("auto-renew-off", "Turn auto-renew off"),
                            ("auto-renew-on", "Turn auto-renew on"),
                        ].map { CustomerPage.Action(value: $0.0, label: $0.1) }))
            }
        }
        return rows
    }

    /// "3 d 4 h 5 min" for a sandbox offset.
    static func duration(milliseconds: Int64) -> String {
        let minutes = milliseconds / 60_000
        guard minutes != 0 else { return "none" }
        let (days, rest) = minutes.quotientAndRemainder(dividingBy: 1440)
        let (hours, mins) = rest.quotientAndRemainder(dividingBy: 60)
        return [(days, "d"), (hours, "h"), (mins, "min")].filter { $0.0 != 0 }.map { "\($0.0) \($0.1)" }
            .joined(separator: " ")
    }
}

/// The sandbox's clock, with the forms that move it.
struct SandboxPage: ConsoleView {
    static let template = "sandbox"
    /// The sandbox's time now.
    var now: String
    var frozen: Bool
    /// How far ahead of real time the sandbox is: "3 d 4 h 5 min", or "none".
    var offset: String
}
