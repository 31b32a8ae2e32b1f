import Foundation
import Hummingbird
import NIOCore
import NIOPosix

/// Carries who is asking (session or bearer token) and the CSRF token the page must echo back.
public struct AppRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public var user: AuthenticatedUser?
    /// The raw session cookie, for sign-out.
    public var sessionToken: String?
    public var csrfToken = ""
    /// True when the anonymous CSRF cookie was minted for this request and must be sent back.
    public var issueCSRFCookie = false
    /// True when the caller authenticated with `Authorization: Bearer`: no ambient credential, so no CSRF check.
    public var viaAPIToken = false
    public var remoteAddress: String?
    /// The connection's event loop when it is one of the server's (not a test's embedded channel): file responses
    /// wait for it between chunks so that they never queue chunks faster than the socket takes them.
    public var eventLoop: (any EventLoop)?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress?.ipAddress
        self.eventLoop = ServerEventLoops.contains(source.channel.eventLoop) ? source.channel.eventLoop : nil
    }

    /// Forms and JSON bodies are small; file uploads stream and never go through `collect`.
    public var maxUploadSize: Int { 512 * 1024 }

    public var actor: AuditActor { AuditActor(userId: user?.id, ipAddress: remoteAddress) }

    public func requireUser() throws -> AuthenticatedUser {
        guard let user else { throw HTTPError(.unauthorized, message: "Sign in first.") }
        return user
    }
}

/// The event loops of the group the server runs on (Hummingbird's default, `MultiThreadedEventLoopGroup.singleton`).
enum ServerEventLoops {
    static let identifiers = Set(MultiThreadedEventLoopGroup.singleton.makeIterator().map { ObjectIdentifier($0) })

    static func contains(_ loop: any EventLoop) -> Bool { identifiers.contains(ObjectIdentifier(loop)) }
}
