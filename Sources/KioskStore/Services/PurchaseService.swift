import Foundation
import KioskCore
import KioskProtocol
import KioskSigning
import KioskStorage

/// The store's side of the purchase protocol KioskKit speaks: sign-in, product lookup, payments, the payment
/// queue, restore, receipts and entitlements, for one environment at a time.
///
/// Every state change is one database transaction; a charge, its signed transaction and the queue entry that
/// tells the client are committed together, so a `purchased` answer always names a durable transaction.
public struct PurchaseService: Sendable {
    let context: StoreContext

    init(context: StoreContext) { self.context = context }

    var database: any KioskDatabase { context.database }
    var clocks: StoreClocks { context.clocks }
    var notifications: NotificationService { context.notifications }
    var ledger: StoreLedger { context.ledger }
    /// The base clock, for what does not depend on the environment (sessions).
    var clock: any KioskClock { clocks.base }
}

/// A signed-in client on one request: who, in which app, on which device.
public struct ClientSession: Sendable {
    public var session: StoreSession
    public var account: StoreAccount
    public var app: App
    public var storefront: Storefront

    public var environment: StoreEnvironment { session.environment }
}

// MARK: - Sign-in

extension PurchaseService {
    /// Signs an account in for one app on one device. Production takes customer accounts only, the sandbox
    /// sandbox testers only (as at Apple: a test account in production fails, and the reverse).
    public func signIn(_ request: SignInRequest, environment: StoreEnvironment) async throws -> SignInResponse {
        let email = request.email.lowercased()
        let found = try await database.transaction { tx -> (App?, StoreAccount?, String?, Bool) in
            let app = try await tx.app(bundleId: request.bundleId)
            if let account = try await tx.account(email: email, environment: environment) {
                return (app, StoreAccount(account), account.passwordHash, false)
            }
            let other: StoreEnvironment = environment == .sandbox ? .production : .sandbox
            return (app, nil, nil, try await tx.account(email: email, environment: other) != nil)
        }
        let (app, account, passwordHash, existsInOtherEnvironment) = found
        guard let app else {
            throw KioskError(
                .unknownApp, "No app has the bundle id '\(request.bundleId)'.",
                field: "bundleId", fix: "Create the app with `kiosk apps create`, or fix the bundle id the app sends.",
                storeKitCode: StoreKitErrorCode.clientInvalid.rawValue)
        }
        if existsInOtherEnvironment {
            throw Self.wrongEnvironment(email: email, environment: environment)
        }
        // The slow hash check runs outside the database transaction.
        guard let account, let passwordHash,
            await PasswordHasher().verifyOffCooperativePool(request.password, against: passwordHash)
        else {
            throw KioskError(
                .invalidCredentials, "The email or password is wrong for the \(environment.rawValue) store.",
                field: "email",
                fix: environment == .sandbox
                    ? "Sign in with a sandbox tester (`kiosk testers list`)."
                    : "Sign in with a customer account (`kiosk accounts list`).",
                storeKitCode: StoreKitErrorCode.clientInvalid.rawValue)
        }
        let token = SecretGenerator.token()
        let session = StoreSession(
            tokenHash: SecretGenerator.sha256Hex(token), environment: environment, accountId: account.id,
            appId: app.id, deviceId: request.deviceId, createdAt: clock.now())
        try await database.transaction { tx in
            try await tx.insertSession(session)
            try await Self.ensureAppTransaction(
                environment: environment, appId: app.id, accountId: account.id, now: session.createdAt, in: tx)
        }
        let storefront = try Self.storefront(of: account)
        return SignInResponse(
            sessionToken: token, environment: environment.appleName,
            account: AccountInfo(id: account.id, email: account.email),
            storefront: StorefrontInfo(
                countryCode: storefront.code, identifier: String(storefront.appleId),
                currency: storefront.currency.code, locale: Self.priceLocale(storefront)))
    }

    /// Finds the session of a bearer token in `environment`, with its account and app.
    public func client(token: String, environment: StoreEnvironment) async throws -> ClientSession {
        let hash = SecretGenerator.sha256Hex(token)
        let found = try await database.read { tx -> (StoreSession, StoreAccount, App)? in
            guard let session = try await tx.session(tokenHash: hash), session.environment == environment,
                let app = try await tx.app(id: session.appId)
            else { return nil }
            let account = try await tx.account(id: session.accountId, environment: environment)
            return account.map { (session, StoreAccount($0), app) }
        }
        guard let (session, account, app) = found else {
            throw KioskError(
                .sessionInvalid,
                "The session token is unknown in the \(environment.rawValue) store (signed out, or its "
                    + "account was deleted).",
                field: "Authorization", fix: "Sign in again.", storeKitCode: StoreKitErrorCode.clientInvalid.rawValue)
        }
        return ClientSession(session: session, account: account, app: app, storefront: try Self.storefront(of: account))
    }

    /// Ends a session; signing out twice is fine.
    public func signOut(_ client: ClientSession) async throws {
        try await database.transaction { tx in try await tx.deleteSession(tokenHash: client.session.tokenHash) }
    }

    static func wrongEnvironment(email: String, environment: StoreEnvironment) -> KioskError {
        environment == .production
            ? KioskError(
                .accountWrongEnvironment,
                "'\(email)' is a sandbox tester; sandbox testers cannot sign in to the production store.",
                field: "email", fix: "Point the app at the sandbox (/sandbox/storekit/v1), or use a customer account.",
                storeKitCode: StoreKitErrorCode.clientInvalid.rawValue)
            : KioskError(
                .accountWrongEnvironment,
                "'\(email)' is a production customer account; it cannot sign in to the sandbox.",
                field: "email", fix: "Create a sandbox tester with `kiosk testers create` and sign in with it.",
                storeKitCode: StoreKitErrorCode.clientInvalid.rawValue)
    }

    static func storefront(of account: StoreAccount) throws -> Storefront {
        guard let storefront = Storefront.named(account.storefront) else {
            throw KioskError(
                .accountStorefrontUnknown, "The account's storefront '\(account.storefront)' is not one Kiosk knows.",
                fix: "Set the account's storefront to an alpha-3 code such as USA.")
        }
        return storefront
    }

    /// `en_US@currency=USD`: the storefront's locale carrying its currency, as `SKProduct.priceLocale` does.
    static func priceLocale(_ storefront: Storefront) -> String {
        "\(storefront.defaultLocale)@currency=\(storefront.currency.code)"
    }
}
