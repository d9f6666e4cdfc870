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
                return (Self.describe(user), "/console/team")
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
                let changed = try await team.changeConsolePassword(
                    email: user.email, current: form.fields["currentPassword"] ?? "",
                    new: form.fields["newPassword"] ?? "")
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
        var values: [String: Any] = [
            "users": users.map { user in
                [
                    "email": user.email, "name": user.name, "created": Self.time(user.createdAt),
                    "status": user.disabledAt != nil ? "disabled" : user.passwordIsTemporary ? "invited" : "active",
                    "disabled": user.disabledAt != nil,
                    "roles": TeamRole.allCases.map { role in
                        ["value": role.rawValue, "title": role.title, "checked": user.roles.contains(role)]
                    },
                ]
            },
            "empty": users.isEmpty,
            "roles": TeamRole.allCases.map { role in
                [
                    "value": role.rawValue, "title": role.title,
                    "grants": ConsolePermission.granted(to: [role]).map(\.summary).sorted().joined(separator: "; "),
                    "checked": form?.fields["role_\(role.rawValue)"] != nil,
                ]
            },
            "email": form?["email"] ?? "", "name": form?["name"] ?? "",
        ]
        if let error {
            values["error_\(error.field ?? "form")"] = [error.message, error.fix].compactMap { $0 }.joined(
                separator: " ")
        }
        return renderer.page(
            "team", title: "Team", section: "Team", values: values, session: context.consoleSession,
            status: error?.status ?? .ok)
    }

    func accountPage(_ context: KioskRequestContext, error: KioskError? = nil) -> Response {
        let session = context.consoleSession
        let permissions = session?.permissions ?? []
        return renderer.page(
            "account", title: "Your account", section: "",
            values: [
                "isUser": session?.user != nil, "email": session?.user?.email ?? "",
                "name": session?.user?.name ?? session?.actor ?? "",
                "roles": session?.user?.roles.map(\.title).joined(separator: ", ") ?? "Admin (admin token)",
                "mustChange": session?.mustChangePassword ?? false,
                "permissions": ConsolePermission.allCases.filter(permissions.contains).map { ["summary": $0.summary] },
                "error_\(error?.field ?? "form")": [error?.message, error?.fix].compactMap { $0 }.joined(
                    separator: " "),
            ], session: session, status: error?.status ?? .ok)
    }

    /// The one page that shows a temporary password.
    func temporaryPasswordPage(_ user: ConsoleUser, password: String, _ context: KioskRequestContext) -> Response {
        renderer.page(
            "team-password", title: "Temporary password for \(user.name)", section: "Team",
            values: ["email": user.email, "password": password], session: context.consoleSession, status: .created)
    }

    /// The roles ticked in a form: one checkbox `role_ADMIN`, `role_FINANCE`… per role.
    static func roles(in form: ConsoleForm) -> [TeamRole] {
        TeamRole.allCases.filter { form.fields["role_\($0.rawValue)"] != nil }
    }

    static func describe(_ user: ConsoleUser) -> String {
        "\(user.email) \(user.roles.map(\.rawValue).joined(separator: ","))\(user.disabledAt != nil ? " disabled" : "")"
    }
}
