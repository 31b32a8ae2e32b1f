import Hummingbird
import Testing

@testable import TrailServer

/// Every cookie the server sets comes from `AppCookie`, with the same attributes: HttpOnly, SameSite=Lax, Secure over
/// TLS; and each clearing has the path of the cookie it clears (a browser keeps a cookie cleared under another path).
@Suite struct AppCookieTests {
    @Test(arguments: [false, true])
    func everyCookieHasTheSameAttributes(secure: Bool) {
        let pairs: [(set: Cookie, cleared: Cookie)] = [
            (AppCookie.session(token: "t", secure: secure), AppCookie.clearedSession(secure: secure)),
            (AppCookie.pendingSignIn(token: "t", lifetime: 600, secure: secure), AppCookie.clearedPendingSignIn(secure: secure)),
            (AppCookie.singleSignOn(secure: secure), AppCookie.clearedSingleSignOn(secure: secure)),
            (AppCookie.singleSignOnStart("s.n.v.x", secure: secure), AppCookie.clearedSingleSignOnStart(secure: secure)),
            (AppCookie.flash("bm90aWNl", secure: secure), AppCookie.clearedFlash(secure: secure)),
        ]
        for cookie in pairs.flatMap({ [$0.set, $0.cleared] }) + [AppCookie.csrf(token: "t", secure: secure)] {
            #expect(cookie.httpOnly && cookie.sameSite == .lax && cookie.secure == secure, "\(cookie)")
        }
        for (set, cleared) in pairs {
            #expect(cleared.name == set.name && cleared.path == set.path && cleared.value.isEmpty && cleared.maxAge == 0, "\(cleared)")
        }
        #expect(AppCookie.session(token: "t", secure: secure).maxAge == nil, "the session cookie ends with the browser")
        #expect(AppCookie.csrf(token: "t", secure: secure).maxAge == nil)
        #expect(AppCookie.pendingSignIn(token: "t", lifetime: 600, secure: secure).maxAge == 600)
        #expect(AppCookie.singleSignOnStart("v", secure: secure).path == "/auth/oidc")
        #expect(AppCookie.flash("v", secure: secure).maxAge == 60)
    }
}
