import Hummingbird
import NIOCore

/// A request of one file's routes (`/assets/{aid}/…` on the panel, `/api/v1/manage/assets/{aid}…`). `AssetMiddleware`
/// reads the file, its tour, the tour's site and the user's access in one read and checks the group's
/// `TourAccessNeed`, as a tour's routes do: someone who may not see the tour is told the file does not exist.
struct AssetContext: MiddlewareMadeContext, AppChildContext {
    var coreContext: CoreRequestContextStorage
    let user: AuthenticatedUser
    let asset: Asset
    let tour: Tour
    let site: Site
    let access: SiteAccess
    let app: AppRequestContext
}

/// Makes an `AssetContext` for the route's `{aid}`; a malformed or unknown id is 404 before anything else is read.
struct AssetMiddleware: ContextMiddleware {
    let database: AppDatabase
    let need: TourAccessNeed

    func context(for request: Request, from parent: SignedInContext) async throws -> AssetContext {
        guard let id = parent.parameters.get("aid", as: Int64.self), let found = try await database.assetAccess(id: id, user: parent.user)
        else { throw NotFound() }
        try need.check(found.access)
        return AssetContext(
            coreContext: parent.coreContext,
            user: parent.user,
            asset: found.asset,
            tour: found.tour,
            site: found.site,
            access: found.access,
            app: parent.app
        )
    }
}

extension RouterMethods<SignedInContext> {
    /// The routes below `/assets/{aid}` that need `need` of the user on the file's tour, each handed an `AssetContext`.
    func assetGroup(_ database: AppDatabase, _ need: TourAccessNeed) -> RouterGroup<AssetContext> {
        group("assets/{aid}", context: AssetMiddleware(database: database, need: need))
    }
}
