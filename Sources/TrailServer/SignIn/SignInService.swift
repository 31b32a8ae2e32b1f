import Foundation
import Hummingbird
import HummingbirdBcrypt

/// The sign-in flows, as `PublishingService` is for publishing: what a password, or a sign-on through the agency's
/// provider, leads to (a session, a second step, or a refusal and why). The controllers in this folder translate forms,
/// cookies and pages to and from these outcomes; the rules live here once.
struct SignInService: Sendable {
    let database: AppDatabase
    let config: AppConfig
    /// A bcrypt hash checked when the email is unknown, so timing does not tell which emails have accounts.
    let unknownUserPasswordHash: String

    /// What `beginAttempt` decided.
    enum AttemptDecision {
        case allowed(Int64)
        case locked(String, retryAfter: TimeInterval)
    }

    /// Counts a sign-in attempt (a password or a second-step code) against the lockout per email and address, before it
    /// is checked, in one transaction with the check of the limit: fifty guesses sent at once cannot all pass it while
    /// bcrypt runs. Waits the growing delay of an email guessed at from many addresses (slower and slower, never refused).
    func beginAttempt(email: String, ipAddress: String?) async throws -> AttemptDecision {
        switch try await database.beginLoginAttempt(
            email: email,
            ipAddress: ipAddress,
            window: config.loginThrottleWindow,
            limit: config.loginFailureLimit,
            maxDelay: config.loginMaxDelay
        ) {
        case let .allowed(id, delay):
            if delay > 0 { try await Task.sleep(for: .milliseconds(Int(delay * 1000))) }
            return .allowed(id)
        case let .lockedForEmail(retryAfter):
            return .locked(
                "Too many failed sign-ins for this email from your address. Try again in \(Self.minutes(retryAfter)), or sign in from "
                    + "another network. If you forgot your password or lost your phone, an administrator can reset it.",
                retryAfter: retryAfter
            )
        case let .lockedForAddress(retryAfter):
            return .locked("Too many failed sign-ins from your address. Try again in \(Self.minutes(retryAfter)).", retryAfter: retryAfter)
        }
    }

    /// Where a sign-in goes next.
    enum Outcome: Sendable {
        /// Every step done: a session for the user (`detail` says how, for the audit log).
        case signedIn(User, detail: String)
        /// A second step is due: a half-signed-in browser, at the code or at setting one up.
        case secondStep(User, PendingStage)
        /// Refused: the sentence the person reads, with its status (and how long to wait, for a lockout). `reason` is
        /// what the log and audit entry say, where the refusal is not already recorded.
        case refused(shown: String, status: HTTPResponse.Status, reason: String? = nil, retryAfter: TimeInterval? = nil)
    }

    /// A password sign-in: throttled, checked against a dummy hash for an unknown email, refused for a site that signs in
    /// through the agency only, and on to the second step where the account has one or must set one up.
    func password(email: String, password: String, ipAddress: String?) async throws -> Outcome {
        let attempt: Int64
        switch try await beginAttempt(email: email, ipAddress: ipAddress) {
        case let .allowed(id): attempt = id
        case let .locked(message, retryAfter): return .refused(shown: message, status: .tooManyRequests, retryAfter: retryAfter)
        }
        let user = try await database.user(email: email)
        // Verify against a dummy hash when the user is unknown, so timing does not reveal which emails exist.
        let valid = try await Self.verify(password, hash: user?.passwordHash ?? unknownUserPasswordHash)
        guard let user, valid, !user.isDisabled else {
            try await database.recordLoginFailure(email: email, ipAddress: ipAddress)
            return .refused(shown: "The email or password is not right.", status: .unauthorized)
        }
        try await database.endLoginAttempt(attempt)
        // A site that signs in through the agency's provider only: said after the password checked out, so only the
        // account's owner learns which site it is.
        if let oidc = config.oidc, let site = try await database.sitesWithoutPasswordSignIn(for: user).first {
            return .refused(
                shown: "\(site.name) signs in with your agency account only: use \u{201C}\(oidc.label)\u{201D} below.",
                status: .forbidden
            )
        }
        // An enrolled account gives its code next, and one that must enrol does so now: either way only a half-signed-in
        // browser (its own cookie, no page of the panel) until that is done.
        let status = try await database.twoStepStatus(userId: user.id)
        let required = try await database.twoStepRequired(for: user, requirement: config.twoStepRequirement)
        if status.enrolled || required {
            return .secondStep(user, status.enrolled ? .code : .enrol)
        }
        return .signedIn(user, detail: "password")
    }

    /// A sign-on whose ID token (`claims`, with its verified `email`) checked out: the account (made at the first
    /// sign-on with `--oidc-create-users`), not disabled, the provider's `sub` kept or matched, a one-time password never
    /// used voided, and the second step where the account has one or is an admin's, unless the provider shows it asked
    /// for a second factor itself.
    func signOn(claims: IDTokenClaims, email: String, settings: OIDCSettings, ipAddress: String?) async throws -> Outcome {
        var user = try await database.user(email: email)
        if user == nil, settings.createUsers {
            let name =
                (claims.name?.trimmingCharacters(in: .whitespaces)).flatMap { $0.isEmpty ? nil : String($0.prefix(100)) }
                ?? String(email.split(separator: "@")[0])
            // A password nobody knows: this account signs in through the provider (an admin may set one later).
            user = try await database.createUser(
                email: email,
                displayName: name,
                password: OneTimePassword.make() + OneTimePassword.make(),
                isAdmin: false,
                bcryptCost: config.bcryptCost,
                actor: AuditActor(userId: nil, ipAddress: ipAddress)
            )
        }
        guard let user else {
            return .refused(
                shown: "There is no account for \(email) here. Ask a site manager to add you.",
                status: .forbidden,
                reason: "no account for \(email)"
            )
        }
        guard !user.isDisabled else {
            return .refused(shown: "This account is disabled. Ask an administrator.", status: .forbidden, reason: "account disabled: \(email)")
        }
        // The provider's own id of the person, kept at the first sign-on: the email alone does not make them the same.
        let actor = AuditActor(userId: user.id, ipAddress: ipAddress)
        // An account made from a shown invitation link: whoever held the link may have set its password, so the
        // provider's word on the address voids it (in the same transaction as the binding).
        let voidHash: String? =
            user.addressProven ? nil : try await BlockingWork.short { [cost = config.bcryptCost] in Bcrypt.hash(SecretToken.make(), cost: cost) }
        switch try await database.linkSingleSignOnSubject(
            userId: user.id,
            issuer: claims.iss,
            subject: claims.sub,
            actor: actor,
            provingAddressWith: voidHash
        ) {
        case .linked, .same:
            break
        case .changed:
            return .refused(
                shown: "Your agency account is not the one that first signed in here as \(email). Ask an administrator to reset your sign-in.",
                status: .forbidden,
                reason: "subject changed for \(email): the provider's sub is not the one kept at this account's first sign-on"
            )
        case .linkedElsewhere:
            return .refused(
                shown: "Your agency account already signs in to another account here. Ask an administrator.",
                status: .forbidden,
                reason: "subject of \(email) is already linked to another account here"
            )
        }
        var signedOn = user
        if user.mustChangePassword {
            Bootstrap.firstAdminSignedIn(user, dataFolder: config.dataFolder)
            signedOn = try await database.voidOneTimePassword(userId: user.id, bcryptCost: config.bcryptCost, actor: actor)
        }
        // An account that set up its own second step, and every admin, gives it here too, unless the provider shows it
        // asked for a second factor itself: the provider's password alone is not more than ours.
        if settings.askSecondStep, !claims.showsSecondFactor(acceptedACR: settings.secondFactorACR) {
            let status = try await database.twoStepStatus(userId: signedOn.id)
            if status.enrolled || signedOn.isAdmin { return .secondStep(signedOn, status.enrolled ? .code : .enrol) }
        }
        return .signedIn(signedOn, detail: "single sign-on (\(claims.iss))")
    }

    /// "1 minute", "14 minutes": a wait rounded up to whole minutes.
    static func minutes(_ seconds: TimeInterval) -> String {
        let minutes = max(1, Int((seconds / 60).rounded(.up)))
        return minutes == 1 ? "1 minute" : "\(minutes) minutes"
    }

    /// bcrypt is slow on purpose: keep it off the event loop.
    static func verify(_ password: String, hash: String) async throws -> Bool {
        try await BlockingWork.short { Bcrypt.verify(password, hash: hash) }
    }
}
