import Foundation
import Hummingbird
import KioskCore

/// The team (Admins add people, change their roles, disable them, reset their passwords) and each person's own
/// account page, where a temporary password is replaced.
extension ConsoleController {
    func addTeamRoutes(to pages: RouterGroup<KioskRequestContext>) {
        pages.get("team") { _, context in try await teamPage(context) }
        pages.post("team") { request, context in
            let form = try await ConsoleForm.read(request, context: context)
            do {
                let created = try await team.createConsoleUser(
                    email: form["email"] ?? "", name: form["name"] ?? "", roles: Self.roles(in: form),
                    password: nil)
                try await audit(context.consoleSession, "console-user.create", Self.describe(created.user))
                return temporaryPasswordPage(created.user, password: created.temporaryPassword ?? "", context)
            } catch let error as KioskError {
                return try await teamPage(context, error: error, form: form)
            }
        }
        pages.post("team/:email") { request, context in
            let email = try Self.email(context)
            return try await action(request, context, audit: "console-user.update") { form in
                let disabled = form["state"].map { $0 == "disabled" }
                if context.consoleSession?.user?.email == email.lowercased(),
                    disabled == true || !Self.roles(in: form).contains(.admin)
                {
                    throw KioskError(
                        .ownAdminAccess, "You cannot disable yourself or take away your own Admin role.",
                        fix: "Ask another Admin, or sign in with the admin token.")
                }
                let user = try await team.updateConsoleUser(
                    email: email, name: nil, roles: Self.roles(in: form), disabled: disabled)
                return ConsoleOutcome(
                    target: Self.describe(user), redirect: "/console/team",
                    notice: "Saved \(user.email): roles \(user.roles.map(\.title).joined(separator: ", "))"
                        + (user.disabledAt != nil ? ", disabled." : ", enabled."))
            }
        }
        pages.post("team/:email/reset-password") { request, context in
            let email = try Self.email(context)
            _ = try await ConsoleForm.read(request, context: context)
            let reset = try await team.resetConsoleUserPassword(email: email)
            try await audit(context.consoleSession, "console-user.reset-password", reset.user.email)
            return temporaryPasswordPage(reset.user, password: reset.temporaryPassword ?? "", context)
        }
        pages.get("account") { _, context in accountPage(context) }
        pages.post("account/sign-out-everywhere") { request, context in
            _ = try await ConsoleForm.read(request, context: context)
            if let session = context.consoleSession {
                try await team.endConsoleSessions(
                    "subject:\(session.subject)", keptUntil: clock.now().addingTimeInterval(ConsoleSessions.lifetime))
                try await audit(session, "sign-out-everywhere", session.auditActor)
            }
            var response = Response.redirect(to: "/console/sign-in", type: .normal)
            response.headers[.setCookie] = sessions.clearingCookie
            return response
        }
        pages.post("account/password") { request, context in
            let form = try await ConsoleForm.read(request, context: context)
            guard let session = context.consoleSession, let user = session.user else {
                return accountPage(context)
            }
            do {
                guard form.fields["newPassword"] == form.fields["confirmPassword"] else {
                    throw KioskError(
                        .passwordsDiffer, "The two new passwords differ.", field: "confirmPassword",
                        fix: "Type the same new password twice.")
                }
                // The current password is a credential check like sign-in's: the same throttle counts it.
                switch await signInThrottle.begin(email: user.email, now: clock.now()) {
                case .proceed: break
                case .lockedOut(let until):
                    throw KioskError(
                        .tooManyAttempts,
                        "Too many wrong passwords for \(user.email). Try again after \(Self.time(until)).",
                        field: "currentPassword")
                case .emailBusy, .busy:
                    throw KioskError(
                        .tooManyAttempts, "A password for \(user.email) is being checked right now; try again.",
                        field: "currentPassword")
                }
                let changed: ConsoleUser
                do {
                    changed = try await team.changeConsolePassword(
                        email: user.email, current: form.fields["currentPassword"] ?? "",
                        new: form.fields["newPassword"] ?? "")
                } catch let error as KioskError {
                    await signInThrottle.end(
                        email: user.email, succeeded: error.code != .wrongPassword, now: clock.now())
                    throw error
                } catch {
                    await signInThrottle.abandon(email: user.email)
                    throw error
                }
                await signInThrottle.end(email: user.email, succeeded: true, now: clock.now())
                try await audit(session, "console-user.change-password", changed.email)
                // The password is part of the session, so this browser gets a new one; others are signed out.
                var response = Response.redirect(to: "/console", type: .normal)
                response.headers[.setCookie] =
                    sessions.issue(actor: changed.email, user: changed, now: clock.now())
                    .setCookie
                return response
            } catch let error as KioskError {
                return accountPage(context, error: error)
            }
        }
    }

    func teamPage(_ context: KioskRequestContext, error: KioskError? = nil, form: ConsoleForm? = nil) async throws
        -> Response
    {
        let users = try await team.consoleUsers()
        let refusal = error.map { [$0.message, $0.fix].compactMap { $0 }.joined(separator: " ") }
        func message(_ field: String) -> String? { (error?.field ?? "form") == field ? refusal : nil }
        return renderer.page(
            TeamPage(
                users: users.map { user in
                    TeamPage.User(
                        email: user.email, name: user.name,
                        status: Self.status(of: user, now: clock.now()),
                        disabled: user.disabledAt != nil,
                        roles: TeamRole.allCases.map { role in
                            TeamPage.Role(value: role.rawValue, title: role.title, checked: user.roles.contains(role))
                        })
                },
                empty: users.isEmpty,
                roles: TeamRole.allCases.map { role in
                    TeamPage.Role(
                        value: role.rawValue, title: role.title,
                        grants: ConsolePermission.granted(to: [role]).map(\.summary).sorted().joined(separator: "; ")
                            .nonEmpty,
                        checked: form?.fields["role_\(role.rawValue)"] != nil)
                },
                email: form?["email"], name: form?["name"], error_form: message("form"), error_email: message("email"),
                error_name: message("name"), error_roles: message("roles")),
            title: "Team", section: "Team", session: context.consoleSession, status: error?.status ?? .ok)
    }

    func accountPage(_ context: KioskRequestContext, error: KioskError? = nil) -> Response {
        let session = context.consoleSession
        let permissions = session?.permissions ?? []
        let refusal = error.map { [$0.message, $0.fix].compactMap { $0 }.joined(separator: " ") }
        func message(_ field: String) -> String? { (error?.field ?? "form") == field ? refusal : nil }
        return renderer.page(
            AccountPage(
                isUser: session?.user != nil, email: session?.user?.email,
                name: session?.user?.name ?? session?.actor ?? "",
                roles: session?.user?.roles.map(\.title).joined(separator: ", ") ?? "Admin (admin token)",
                mustChange: session?.mustChangePassword ?? false,
                permissions: ConsolePermission.allCases.filter(permissions.contains).map {
                    AccountPage.Permission(summary: $0.summary)
                },
                error_form: message("form"), error_currentPassword: message("currentPassword"),
                error_newPassword: message("newPassword"), error_confirmPassword: message("confirmPassword")),
            title: "Your account", section: "", session: session, status: error?.status ?? .ok)
    }

    /// The one page that shows a temporary password.
    func temporaryPasswordPage(_ user: ConsoleUser, password: String, _ context: KioskRequestContext) -> Response {
        renderer.page(
            TeamPasswordPage(email: user.email, password: password), title: "Temporary password for \(user.name)",
            section: "Team", session: context.consoleSession, status: .created)
    }

    /// The roles ticked in a form: one checkbox `role_ADMIN`, `role_FINANCE`… per role.
    static func roles(in form: ConsoleForm) -> [TeamRole] {
        TeamRole.allCases.filter { form.fields["role_\($0.rawValue)"] != nil }
    }

    static func describe(_ user: ConsoleUser) -> String {
        "\(user.email) \(user.roles.map(\.rawValue).joined(separator: ","))\(user.disabledAt != nil ? " disabled" : "")"
    }
}

/// The team: the people who sign in, their roles and access, and the form that adds one (which, when the store
/// refused it, shows what was typed and the refusal at its field, `error_…`).
struct TeamPage: ConsoleView {
    static let template = "team"

    struct User: Decodable {
        var email: String
        var name: String
        /// "active", "invited" (a temporary password) or "disabled".
        var status: String
        var disabled: Bool
        var roles: [Role]
    }

    /// A role's checkbox.
    struct Role: Decodable {
        var value: String
        var title: String
        /// What the role may do beyond reading, on the new-person form.
        var grants: String?
        var checked: Bool
    }

    var users: [User]
    var empty: Bool
    var roles: [Role]
    /// The new person's email and name, as typed.
    var email: String?
    var name: String?
    var error_form: String?
    var error_email: String?
    var error_name: String?
    var error_roles: String?
}

/// The only showing of a temporary password.
struct TeamPasswordPage: ConsoleView {
    static let template = "team-password"
    var email: String
    var password: String
}

/// The signed-in person's account: who they are, what their roles let them do, and (for a console user) the form
/// that changes their password, with a refusal at its field (`error_…`).
struct AccountPage: ConsoleView {
    static let template = "account"

    struct Permission: Decodable {
        var summary: String
    }

    /// Whether a console user is signed in, rather than an operator with the admin token.
    var isUser: Bool
    var email: String?
    var name: String
    var roles: String
    /// Whether the password is a temporary one that must be replaced.
    var mustChange: Bool
    var permissions: [Permission]
    var error_form: String?
    var error_currentPassword: String?
    var error_newPassword: String?
    var error_confirmPassword: String?
}

extension ConsoleController {
    /// The Team page's word for where a user stands: disabled, invited (until the temporary password expires),
    /// invitation expired, or active.
    static func status(of user: ConsoleUser, now: Date) -> String {
        if user.disabledAt != nil { return "disabled" }
        guard let expiry = user.temporaryPasswordExpiresAt else { return "active" }
        return expiry > now
            ? "invited (temporary password until \(time(expiry)))"
            : "temporary password expired: reset it to invite again"
    }
}
