import HTTPTypes
import Hummingbird

/// Makes a route group's own context from its parent's before the handler runs, with what it has to read for it (a
/// site, a tour and the user's access there): a handler of the group receives that context whole, or the request is
/// answered with what the middleware threw (404, 403) and the handler never runs.
///
/// Hummingbird's `group(context:)` makes a child context in a synchronous init, which cannot read the database; an
/// ordinary middleware could only leave what it read in an optional of the parent context, which every handler of
/// the parent would see and none could trust. This one hands the child context straight to the handler.
protocol ContextMiddleware<Parent, Child>: Sendable {
    associatedtype Parent: RequestContext
    associatedtype Child: RequestContext
    func context(for request: Request, from parent: Parent) async throws -> Child
}

/// A context that only a `ContextMiddleware` makes; it has no source of its own to be made from.
protocol MiddlewareMadeContext: RequestContext where Source == Never {}

extension MiddlewareMadeContext {
    init(source: Never) {
        switch source {}
    }
}

/// Registers each route on the parent behind the middleware that makes its context.
private struct ContextMiddlewareGroup<Middleware: ContextMiddleware, Parent: RouterMethods<Middleware.Parent>>: RouterMethods {
    typealias Context = Middleware.Child
    let parent: Parent
    let middleware: Middleware

    struct Responder: HTTPResponder {
        let middleware: Middleware
        let responder: any HTTPResponder<Middleware.Child>

        func respond(to request: Request, context: Middleware.Parent) async throws -> Response {
            try await responder.respond(to: request, context: middleware.context(for: request, from: context))
        }
    }

    @discardableResult func on<R: HTTPResponder>(_ path: RouterPath, method: HTTPRequest.Method, responder: R) -> Self
    where R.Context == Context {
        parent.on(path, method: method, responder: Responder(middleware: middleware, responder: responder))
        return self
    }

    /// Never called: `group(_:context:)` hands out a `RouterGroup` over this one, which keeps its own middleware.
    @discardableResult func add(middleware: any MiddlewareProtocol<Request, Response, Context>) -> Self {
        preconditionFailure("Add middleware to the RouterGroup that group(_:context:) returns.")
    }
}

extension RouterMethods {
    /// The routes below `path`, each handed the context `middleware` makes from this group's.
    func group<M: ContextMiddleware>(_ path: RouterPath = "", context middleware: M) -> RouterGroup<M.Child> where M.Parent == Context {
        ContextMiddlewareGroup(parent: group(path), middleware: middleware).group()
    }
}
