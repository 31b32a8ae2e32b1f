import Foundation
import Hummingbird

/// Two-step sign-in: the code page after a right password, enrolment (forced at sign-in, or chosen on the account
/// page), the recovery codes shown once, and an administrator's reset.
struct TwoStepController: Sendable {
    let database: AppDatabase
    let pages: PageResponder
    let config: AppConfig
    let service: SignInService
    let responder: SignInResponder

    struct CodePage: Sendable {
        var error: String?
    }

    struct EnrolPage: Sendable {
        /// Where the confirming code is posted: `/login/enrol` (at sign-in) or `/account/two-step` (signed in).
        var action: String
        var email: String
        /// The QR code of the `otpauth://` address, as inline SVG (made here, from our own text: nothing a user typed).
        var qrCode: String
        /// The secret in base32, in groups of four, for typing into an app by hand.
        var secret: String
        /// Enrolment is required before the panel opens.
        var forced: Bool
        var resetNotice: Bool
        var error: String?
    }

    struct StatusPage: Sendable {
        var enrolled: Bool
        var recoveryCodesLeft: Int
        var required: Bool
    }

    struct RecoveryCodesPage: Sendable {
        var codes: [String]
        var next: String
    }

    func addRoutes(public router: some RouterMethods<AppRequestContext>, signedIn: some RouterMethods<SignedInContext>) {
        router.get("/login/code", use: showCode)
        router.post("/login/code", use: checkCode)
        router.get("/login/enrol", use: showSignInEnrolment)
        router.post("/login/enrol", use: confirmSignInEnrolment)

        signedIn.get("/account/two-step", use: showAccount)
        signedIn.post("/account/two-step/start", use: startAccountEnrolment)
        signedIn.post("/account/two-step", use: confirmAccountEnrolment)
    }

    // MARK: At sign-in

    /// The half-signed-in browser at this stage; nil sends it back to the sign-in page (expired, or never signed in).
    func pending(_ request: Request, stage: PendingStage) async throws -> (PendingSignIn, User)? {
        guard let token = request.cookies[CookieName.pending]?.value, !token.isEmpty else { return nil }
        guard let found = try await database.pendingSignIn(token: token, lifetime: config.pendingSignInLifetime),
            found.0.stage == stage
        else { return nil }
        return found
    }

    var signInAgain: Response { pages.redirect(to: "/login", notice: "Your sign-in took too long or was not started. Sign in again.") }

    func showCode(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        guard try await pending(request, stage: .code) != nil else { return signInAgain }
        return noStore(await pages.render("two-step-code", title: "Two-step sign-in", page: CodePage(), request: request, context: context))
    }

    /// A code (or recovery code) after a right password, throttled like passwords; right: a fresh full session.
    func checkCode(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let form = try await request.decode(as: CodeForm.self, context: context)
        guard let (pending, user) = try await pending(request, stage: .code) else { return signInAgain }
        func fail(_ message: String, status: HTTPResponse.Status) async -> Response {
            noStore(
                await pages.render(
                    "two-step-code",
                    title: "Two-step sign-in",
                    page: CodePage(error: message),
                    request: request,
                    context: context,
                    status: status
                )
            )
        }
        let attempt: Int64
        switch try await service.beginAttempt(email: user.email, ipAddress: context.remoteAddress) {
        case let .allowed(id): attempt = id
        case let .locked(message, retryAfter):
            var response = await fail(message, status: .tooManyRequests)
            response.headers[.retryAfter] = "\(Int(retryAfter.rounded(.up)))"
            return response
        }
        let actor = AuditActor(userId: user.id, ipAddress: context.remoteAddress)
        let input = form.code
        let check = try await database.checkSecondStep(userId: user.id, input: input, at: config.twoStepClock(), actor: actor)
        switch check {
        case .wrong:
            return await fail(
                "This code is not right. Enter the 6-digit code your authenticator app shows now, or one of your recovery codes.",
                status: .unauthorized
            )
        case .reused:
            return await fail("This code was already used. Wait for the next code in your authenticator app.", status: .unauthorized)
        case let .locked(retryAfter):
            // Not a guess: nothing was looked at, so the address's count is not raised either.
            try await database.endLoginAttempt(attempt)
            let wait = retryAfter ?? SecondStepLimits.window
            var response = await fail(
                retryAfter == nil
                    ? "Too many wrong codes were entered for this account, so its two-step sign-in is locked. "
                        + "Ask an administrator to reset your password."
                    : "Too many wrong codes were entered for this account. Try again in \(SignInService.minutes(wait)). "
                        + "If you did not enter them, someone knows your password: change it once you are signed in.",
                status: .tooManyRequests
            )
            response.headers[.retryAfter] = "\(Int(wait.rounded(.up)))"
            return response
        case .acceptedCode, .acceptedRecoveryCode:
            try await database.endLoginAttempt(attempt)
            let pendingToken = pending.tokenHash
            try await database.endPendingSignIn(tokenHash: pendingToken)
            var notices: [String] = []
            var detail = "password and code"
            if case let .acceptedRecoveryCode(left) = check {
                detail = "password and recovery code"
                notices.append(
                    "You signed in with a recovery code; it will not work again. \(left == 1 ? "1 recovery code is" : "\(left) recovery codes are") left."
                        + (left <= 3 ? " Ask an administrator to reset your two-step sign-in to get new ones." : "")
                )
            }
            if let failures = try await database.takeSecondStepFailures(userId: user.id) {
                notices.append(Self.failuresNotice(failures))
            }
            return try await responder.finishSignIn(
                user: user,
                next: pending.next,
                detail: detail,
                context: context,
                notice: notices.isEmpty ? nil : notices.joined(separator: " ")
            )
        }
    }

    /// Enrolment required at sign-in: the QR code and the secret shown at the password step.
    func showSignInEnrolment(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        guard let (pending, user) = try await pending(request, stage: .enrol) else { return signInAgain }
        guard let page = try await enrolPage(user: user, holder: pending.tokenHash, action: "/login/enrol", forced: true) else {
            return signInAgain
        }
        return noStore(await pages.render("two-step-enrol", title: "Set up two-step sign-in", page: page, request: request, context: context))
    }

    /// The first right code confirms enrolment; the session starts and the recovery codes are shown, once.
    func confirmSignInEnrolment(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let form = try await request.decode(as: CodeForm.self, context: context)
        guard let (pending, user) = try await pending(request, stage: .enrol) else { return signInAgain }
        // A later sign-in showed a new key: this one's is void, and so is this half-finished sign-in.
        guard try await database.pendingTwoStepSecret(userId: user.id, holder: pending.tokenHash) != nil else { return signInAgain }
        let attempt: Int64
        switch try await service.beginAttempt(email: user.email, ipAddress: context.remoteAddress) {
        case let .allowed(id): attempt = id
        case let .locked(message, retryAfter):
            guard var page = try await enrolPage(user: user, holder: pending.tokenHash, action: "/login/enrol", forced: true) else {
                return signInAgain
            }
            page.error = message
            var response = noStore(
                await pages.render(
                    "two-step-enrol",
                    title: "Set up two-step sign-in",
                    page: page,
                    request: request,
                    context: context,
                    status: .tooManyRequests
                )
            )
            response.headers[.retryAfter] = "\(Int(retryAfter.rounded(.up)))"
            return response
        }
        let actor = AuditActor(userId: user.id, ipAddress: context.remoteAddress)
        let code = form.code
        guard
            let codes = try await database.confirmTwoStepEnrolment(
                userId: user.id,
                holder: pending.tokenHash,
                code: code,
                at: config.twoStepClock(),
                actor: actor
            )
        else {
            guard var page = try await enrolPage(user: user, holder: pending.tokenHash, action: "/login/enrol", forced: true) else {
                return signInAgain
            }
            page.error = "This code is not right. Enter the 6-digit code your authenticator app shows now for Trail Companion."
            return noStore(
                await pages.render(
                    "two-step-enrol",
                    title: "Set up two-step sign-in",
                    page: page,
                    request: request,
                    context: context,
                    status: .unprocessableContent
                )
            )
        }
        try await database.endLoginAttempt(attempt)
        let pendingToken = pending.tokenHash
        try await database.endPendingSignIn(tokenHash: pendingToken)
        let signedIn = try await responder.finishSignIn(user: user, next: pending.next, detail: "password and code (enrolment)", context: context)
        // The recovery codes go on this answer, not behind a redirect: they are shown once and stored nowhere in clear.
        var response = await recoveryCodes(codes, next: signedIn.headers[.location] ?? "/", request: request, context: context)
        for field in signedIn.headers where field.name == .setCookie { response.headers.append(field) }
        return response
    }

    /// What the owner is told after wrong codes: whoever sent them got past the password.
    static func failuresNotice(_ failures: SecondStepFailures) -> String {
        "\(failures.count == 1 ? "1 wrong code was" : "\(failures.count) wrong codes were") entered for your account since "
            + "\(DisplayFormat.date(failures.since)). If that was not you, someone knows your password: change it now."
    }

    // MARK: Signed in

    func showAccount(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let user = context.user
        guard let record = try await database.user(id: user.id) else { throw NotFound() }
        let status = try await database.twoStepStatus(userId: user.id)
        // Only the enrolment this session started: a key another browser was shown is not shown here.
        if status.enrolling, let page = try await enrolPage(user: record, holder: holder(context), action: "/account/two-step", forced: false) {
            return noStore(await pages.render("two-step-enrol", title: "Set up two-step sign-in", page: page, request: request, context: context))
        }
        let required = try await database.twoStepRequired(for: record, requirement: config.twoStepRequirement)
        return await pages.render(
            "two-step",
            title: "Two-step sign-in",
            page: StatusPage(enrolled: status.enrolled, recoveryCodesLeft: status.recoveryCodesLeft, required: required),
            request: request,
            context: context
        )
    }

    func startAccountEnrolment(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let user = context.user
        _ = try await database.beginTwoStepEnrolment(userId: user.id, holder: holder(context), actor: context.actor)
        return Response.redirect(to: "/account/two-step")
    }

    func confirmAccountEnrolment(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let form = try await request.decode(as: CodeForm.self, context: context)
        let user = context.user
        guard let record = try await database.user(id: user.id) else { throw NotFound() }
        let code = form.code
        guard
            let codes = try await database.confirmTwoStepEnrolment(
                userId: user.id,
                holder: holder(context),
                code: code,
                at: config.twoStepClock(),
                actor: context.actor
            )
        else {
            guard var page = try await enrolPage(user: record, holder: holder(context), action: "/account/two-step", forced: false) else {
                return pages.redirect(to: "/account/two-step", notice: "Start the set-up again.")
            }
            page.error = "This code is not right. Enter the 6-digit code your authenticator app shows now for Trail Companion."
            return noStore(
                await pages.render(
                    "two-step-enrol",
                    title: "Set up two-step sign-in",
                    page: page,
                    request: request,
                    context: context,
                    status: .unprocessableContent
                )
            )
        }
        return await recoveryCodes(codes, next: "/account/two-step", request: request, context: context)
    }

    // MARK: Pages

    /// Who holds an enrolment started on the account page: this session (the SHA-256 of its token).
    func holder(_ context: some AppContextProviding) -> String? { context.app.sessionToken.map(SecretToken.hash) }

    /// The enrolment page of the secret `holder` is setting up; nil when it has no enrolment in progress.
    func enrolPage(user: User, holder: String?, action: String, forced: Bool) async throws -> EnrolPage? {
        let userId = user.id
        guard let secret = try await database.pendingTwoStepSecret(userId: userId, holder: holder) else { return nil }
        let status = try await database.twoStepStatus(userId: userId)
        let url = TwoStepCodes.authenticatorURL(secret: secret, email: user.email)
        return EnrolPage(
            action: action,
            email: user.email,
            qrCode: try QRCode(url).svg(title: "QR code to scan with your authenticator app"),
            secret: TwoStepCodes.grouped(TwoStepCodes.base32(secret)),
            forced: forced,
            resetNotice: status.resetNotice
        )
    }

    func recoveryCodes(_ codes: [String], next: String, request: Request, context: some AppContextProviding) async -> Response {
        noStore(
            await pages.render(
                "two-step-codes",
                title: "Your recovery codes",
                page: RecoveryCodesPage(codes: codes, next: next),
                request: request,
                context: context
            )
        )
    }

    /// Secrets and codes must not linger in a cache or the back button.
    func noStore(_ response: Response) -> Response {
        var response = response
        response.headers[.cacheControl] = "no-store"
        return response
    }
}

/// A two-step code (or a recovery code) as typed.
struct CodeForm: PanelForm {
    @Field var code: String
}
