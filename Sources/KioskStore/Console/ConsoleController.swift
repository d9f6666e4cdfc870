import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskProtocol
import KioskSigning
import KioskStorage

/// `/console`: App Store Connect for the store, as server-rendered pages. Every page reads through the same
/// services as the admin API, and every action goes through the same validations and is written to the audit log.
struct ConsoleController {
    let catalog: CatalogService
    let accounts: AccountService
    let team: TeamService
    let money: MoneyService
    let testControls: TestControlsService
    let refunds: RefundService
    let sandboxClock: SandboxClockService
    let subscriptions: SubscriptionTestControls
    let notifications: NotificationService
    let metrics: StoreMetrics
    let database: any KioskDatabase
    let sessions: ConsoleSessions
    let renderer: ConsoleRenderer
    let adminTokenSHA256: String
    /// Counts wrong admin tokens per client address, with the admin API's.
    let tokenThrottle: TokenGuessThrottle
    let signInThrottle = ConsoleSignInThrottle()
    /// Draws a refused form's page again, with the refusal at its top.
    let redraw = ConsoleRedraw()
    let clock: any KioskClock
    /// Apps' retention messaging (`ConsoleController+Retention.swift`).
    var retention: RetentionService?

    func addRoutes(to router: Router<KioskRequestContext>) {
        router.get("/") { _, _ in Response.redirect(to: "/console", type: .normal) }
        addConsoleRoutes(to: router)
        // A refused form's page is drawn again through the console's own routes, without the store's others.
        let consoleOnly = Router(context: KioskRequestContext.self)
        addConsoleRoutes(to: consoleOnly)
        redraw.set(consoleOnly.buildResponder())
    }

    private func addConsoleRoutes(to router: Router<KioskRequestContext>) {
        let console = router.group("console").add(
            middleware: ConsolePageMiddleware(renderer: renderer, secure: sessions.secure)
        )
        .add(middleware: BodyLimitMiddleware(StoreBodyLimits.console)).add(middleware: QueryTextMiddleware())
        console.get("console.css") { _, _ in
            try ConsoleRenderer.asset("console.css", contentType: "text/css; charset=utf-8")
        }
        console.get("sign-in") { request, _ in
            try await signInPage(next: request.uri.queryParameters.get("next"), error: nil)
        }
        console.post("sign-in") { request, context in try await signIn(request, context: context) }
        let pages = console.add(
            middleware: ConsoleAuthMiddleware(sessions: sessions, team: team, renderer: renderer, clock: clock))
        pages.post("sign-out") { request, context in
            _ = try await ConsoleForm.read(request, context: context)
            // Ended in the database too: the cookie, kept or copied, opens nothing on any replica.
            if let session = context.consoleSession {
                try await team.endConsoleSessions("session:\(session.nonce)", keptUntil: session.expiresAt)
                try await audit(session, "sign-out", "console")
            }
            var response = Response.redirect(to: "/console/sign-in", type: .normal)
            response.headers[.setCookie] = sessions.clearingCookie
            return response
        }
        pages.get("") { _, context in try await overview(context) }
        pages.get("audit") { _, context in try await auditLog(context) }
        addCatalogRoutes(to: pages)
        addAgreementRoutes(to: pages)
        addCustomerRoutes(to: pages)
        addNotificationRoutes(to: pages)
        addMoneyRoutes(to: pages)
        addSubscriptionRoutes(to: pages)
        addHealthRoutes(to: pages)
        addSandboxRoutes(to: pages)
        addKeyRoutes(to: pages)
        addCatalogFileRoutes(to: pages)
        addTesterRoutes(to: pages)
        addTeamRoutes(to: pages)
        addOfferRoutes(to: pages)
        addRefundRoutes(to: pages)
        addCheckRoutes(to: pages)
        addRetentionRoutes(to: pages)
    }

    // MARK: Signing in

    /// The sign-in page; its admin-token form is open while the store has no console users yet.
    func signInPage(next: String?, error: String?, status: HTTPResponse.Status = .ok) async throws -> Response {
        renderer.page(
            SignInPage(
                next: Self.safeNext(next), error: error, tokenFirst: try await team.consoleUsers().isEmpty),
            title: "Sign in", section: "", session: nil, status: status)
    }

    /// Starts a session for a console user (email and password) or an operator with the admin token (their name,
    /// for the audit log, and the token).
    func signIn(_ request: Request, context: KioskRequestContext) async throws -> Response {
        let form = try await ConsoleForm.read(request, context: context)
        let next = Self.safeNext(form["next"])
        if form.fields["token"] != nil {
            return try await signInWithAdminToken(
                form, from: TokenGuessThrottle.address(of: context.channel), next: next)
        }
        guard let email = form["email"], email.utf8.count <= CatalogValidator.emailMaxLength,
            let password = form.fields["password"], password.utf8.count <= 4 * CatalogValidator.passwordMaxLength
        else {
            return try await signInPage(next: next, error: "Give your email address and password.", status: .badRequest)
        }
        let key = email.lowercased()
        switch await signInThrottle.begin(email: key, now: clock.now()) {
        case .busy:
            return try await signInPage(
                next: next, error: "The store is checking many sign-ins at this moment; try again in a few seconds.",
                status: .tooManyRequests)
        case .emailBusy:
            return try await signInPage(
                next: next,
                error: "A password for \(key.prefix(64)) is being checked right now; try again in a second.",
                status: .tooManyRequests)
        case .lockedOut(let until):
            return try await signInPage(
                next: next,
                error: "Too many wrong passwords for \(key.prefix(64)). Try again after \(Self.time(until)), or ask an "
                    + "Admin to reset your password.", status: .tooManyRequests)
        case .proceed:
            break
        }
        let user: ConsoleUser?
        do {
            user = try await team.consoleUser(email: key)
        } catch {
            // The store could not read the account (its database is down, say): that is its failure, not a wrong
            // password, and no attempt of the person signing in.
            await signInThrottle.abandon(email: key)
            throw error
        }
        // A decoy hash for unknown emails, so the time taken does not tell which emails have accounts.
        let matches = await PasswordHasher().verifyOffCooperativePool(
            password, against: user?.passwordHash ?? Self.decoyPasswordHash)
        await signInThrottle.end(email: key, succeeded: matches && user != nil, now: clock.now())
        guard matches, let user else {
            return try await signInPage(
                next: next, error: "The email or the password is not right.", status: .unauthorized)
        }
        guard user.disabledAt == nil else {
            return try await signInPage(
                next: next, error: "Your console account is disabled. Ask an Admin to enable it.", status: .forbidden)
        }
        if let expiry = user.temporaryPasswordExpiresAt, clock.now() >= expiry {
            return try await signInPage(
                next: next,
                error: "Your temporary password expired at \(Self.time(expiry)) and no longer signs in. Ask an Admin "
                    + "to reset your password on the Team page: you get a new one, valid for 72 hours.",
                status: .forbidden)
        }
        let (_, cookie) = sessions.issue(actor: user.email, user: user, now: clock.now())
        try await audit(actor: user.email, "sign-in", "console")
        var response = Response.redirect(to: user.passwordIsTemporary ? "/console/account" : next, type: .normal)
        response.headers[.setCookie] = cookie
        return response
    }

    /// Checks the admin token and starts an Admin's session in the name the operator gave.
    private func signInWithAdminToken(_ form: ConsoleForm, from address: String, next: String) async throws -> Response
    {
        guard let name = form["name"], name.count <= ConsoleSessions.actorMaxLength,
            !name.unicodeScalars.contains(where: \.isControl)
        else {
            return try await signInPage(
                next: next,
                error: "Give your name (1–\(ConsoleSessions.actorMaxLength) characters): the audit log "
                    + "records who did what.", status: .badRequest)
        }
        let token = form["token"] ?? ""
        let right: Bool
        do {
            right = try await tokenThrottle.check(from: address, now: clock.now()) {
                token.utf8.count <= 512
                    && AdminAuthMiddleware.constantTimeEquals(SecretGenerator.sha256Hex(token), adminTokenSHA256)
            }
        } catch let error as KioskError {
            return try await signInPage(next: next, error: error.message, status: .forbidden)
        }
        guard right else {
            return try await signInPage(
                next: next, error: "That is not the admin token. Use the one `kiosk serve` printed at first start.",
                status: .unauthorized)
        }
        guard try await team.consoleUser(email: name.lowercased()) == nil else {
            return try await signInPage(
                next: next,
                error: "\(name) is a console user's email: sign in with their password, or give your own name with the "
                    + "admin token.", status: .badRequest)
        }
        let (session, cookie) = sessions.issue(actor: name, user: nil, now: clock.now())
        try await audit(actor: session.auditActor, "sign-in", "console")
        var response = Response.redirect(to: next, type: .normal)
        response.headers[.setCookie] = cookie
        return response
    }

    /// Checked against when the email has no account: never matches, costs what a real check costs.
    static let decoyPasswordHash = (try? PasswordHasher().hash(SecretGenerator.token())) ?? ""

    /// Only a console path may follow sign-in, so the form cannot send an operator to another site.
    static func safeNext(_ next: String?) -> String {
        guard let next, next.hasPrefix("/console"), next.count < 512,
            !["//", "\\", ".."].contains(where: next.contains), !next.unicodeScalars.contains(where: \.isControl)
        else { return "/console" }
        return next
    }

    // MARK: Overview and audit log

    func overview(_ context: KioskRequestContext) async throws -> Response {
        let counts = try await catalog.liveProductCounts()
        let rows = try await catalog.apps().map { app in
            OverviewPage.App(name: app.name, bundleId: app.bundleId, products: counts[app.bundleId] ?? 0)
        }
        let (agreement, _) = try await catalog.agreement()
        let testers = try await accounts.accountCount(.sandbox)
        return renderer.page(
            OverviewPage(
                apps: rows, hasApps: !rows.isEmpty, testers: testers,
                agreementActive: agreement.status == .active,
                agreementMissing: PaidAppsAgreement.Requirement.sentence(agreement.missing)),
            title: "Overview", section: "Overview", session: context.consoleSession)
    }

    func auditLog(_ context: KioskRequestContext) async throws -> Response {
        let entries = try await team.auditEntries(limit: 200)
        return renderer.page(
            AuditPage(
                entries: entries.map {
                    AuditPage.Entry(at: Self.time($0.at), actor: $0.actor, action: $0.action, target: $0.target)
                }, empty: entries.isEmpty),
            title: "Audit log", section: "Audit log", session: context.consoleSession)
    }

    // MARK: Shared by the pages

    /// Records that the session's operator did `action` to `target`.
    func audit(_ session: ConsoleSession?, _ action: String, _ target: String) async throws {
        try await audit(actor: session?.auditActor ?? "?", action, target)
    }

    /// Records that `actor` did `action` to `target`.
    func audit(actor: String, _ action: String, _ target: String) async throws {
        try await team.recordAudit(AuditEntry(at: clock.now(), actor: actor, action: action, target: target))
    }

    /// Performs a posted action: reads the form (checking its CSRF token), runs `body`, writes the audit entry and
    /// redirects to the page it returns, which shows the outcome's notice at its top. A refusal draws the form's own
    /// page again with the refusal at its top (``refused(_:back:_:_:)``).
    func action(
        _ request: Request, _ context: KioskRequestContext, audit action: String,
        _ body: (ConsoleForm) async throws -> ConsoleOutcome
    ) async throws -> Response {
        let form = try await ConsoleForm.read(request, context: context)
        do {
            let outcome = try await body(form)
            try await audit(context.consoleSession, action, outcome.target)
            var response = Response.redirect(to: outcome.redirect, type: .normal)
            response.headers[.setCookie] = ConsoleFlash.cookie(
                ConsoleNotice(outcome.notice, link: outcome.link), secure: sessions.secure)
            return response
        } catch let error as KioskError {
            return await refused(ConsoleRefusal(error), back: form["back"], request, context)
        } catch let refusal as ConsoleRefusal {
            return await refused(refusal, back: form["back"], request, context)
        }
    }

    /// The page a refused form came from (`back`, else the page the browser names as the referrer), drawn again with
    /// the refusal at its top and the refusal's status; when that page cannot be drawn, the refusal on a page of its
    /// own with a link back.
    func refused(
        _ refusal: ConsoleRefusal, back: String?, _ request: Request, _ context: KioskRequestContext
    ) async -> Response {
        let path = Self.safeNext(back ?? Self.referrerPath(request))
        if let page = await redraw.page(path, refusal: refusal, after: request, context: context) { return page }
        return renderer.page(
            ErrorPage(message: refusal.message, fix: refusal.fix, code: refusal.code, back: path), title: "Not done",
            section: "", session: context.consoleSession, status: HTTPResponse.Status(code: refusal.status))
    }

    /// The path and query of the page the browser says the request came from.
    static func referrerPath(_ request: Request) -> String? {
        guard let referrer = request.headers[.referer], let url = URLComponents(string: referrer) else { return nil }
        return url.percentEncodedPath + (url.percentEncodedQuery.map { "?\($0)" } ?? "")
    }

    static func time(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate, .withTime, .withColonSeparatorInTime, .withSpaceBetweenDateAndTime]
        return formatter.string(from: date) + " UTC"
    }

    /// An amount as the console writes it, as the CLI does: "USD 0.99".
    static func amount(_ minorUnits: Int, _ currency: String) -> String {
        Currency.text(minorUnits: minorUnits, code: currency)
    }
}

/// What a console action did: the audit log's target, the page to return to, and the sentence that page shows at
/// its top — what was done, and what was not.
struct ConsoleOutcome {
    var target: String
    var redirect: String
    var notice: String
    /// Where to go next, when the notice says something is left to do.
    var link: ConsoleNotice.Link? = nil
}

/// The sign-in page: a console user's form, and the admin token's (open while the store has no console users yet).
struct SignInPage: ConsoleView {
    static let template = "sign-in"
    /// The console path to return to once signed in.
    var next: String
    var error: String?
    var tokenFirst: Bool
}

/// The overview: the agreement's state, the apps and the sandbox's testers.
struct OverviewPage: ConsoleView {
    static let template = "overview"

    struct App: Decodable {
        var name: String
        var bundleId: String
        /// How many products the app has.
        var products: Int
    }

    var apps: [App]
    var hasApps: Bool
    /// How many sandbox testers there are.
    var testers: Int
    var agreementActive: Bool
    /// What the Paid Apps agreement still needs, as a sentence.
    var agreementMissing: String
}

/// The audit log, newest first.
struct AuditPage: ConsoleView {
    static let template = "audit"

    struct Entry: Decodable {
        var at: String
        var actor: String
        var action: String
        var target: String
    }

    var entries: [Entry]
    var empty: Bool
}

/// A refusal or a failure, with what to do about it and, after a form, the way back to its page.
struct ErrorPage: ConsoleView {
    static let template = "error"
    var message: String
    var fix: String?
    var code: String?
    var back: String?
}

extension ErrorPage {
    /// The page for `error`, with a link `back` when there is one.
    init(_ error: KioskError, back: String? = nil) {
        self.init(message: error.message, fix: error.fix?.nonEmpty, code: error.code.rawValue, back: back)
    }
}
