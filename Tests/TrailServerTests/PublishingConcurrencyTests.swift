import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import NIOCore
import Testing

@testable import TrailServer

/// Releases a group of tasks at once, so that racing calls really overlap: each awaits its turn without holding a
/// thread, and the last to arrive lets every one go.
final class PublishingStartGate: Sendable {
    private let state: NIOLockedValueBox<[CheckedContinuation<Void, Never>]>
    private let parties: Int

    init(parties: Int) {
        self.parties = parties
        self.state = NIOLockedValueBox([])
    }

    func arrive() async {
        await withCheckedContinuation { continuation in
            let released: [CheckedContinuation<Void, Never>] = state.withLockedValue { waiting in
                waiting.append(continuation)
                guard waiting.count >= parties else { return [] }
                defer { waiting = [] }
                return waiting
            }
            for waiter in released { waiter.resume() }
        }
    }
}

enum ReviewAttempt: Sendable, Equatable {
    case approved(becameReady: Bool)
    case denied
    case conflict
    case failed(String)
}

/// Concurrent reviews end in exactly one outcome: each transition is one write transaction whose WHERE checks the state.
/// The calls go through two connections pools on the same database file (as two processes would), from threads
/// released together, and through the router.
@Suite("Publishing: concurrent reviews", .scratch)
struct PublishingConcurrencyTests {
    static func reviewers(_ env: TestEnv, count: Int) async throws -> [AuthenticatedUser] {
        var users: [AuthenticatedUser] = []
        for index in 1...count {
            let email = "racer\(index)@test.org"
            try await env.addMember(email, role: .reviewer)
            users.append(try await env.user(email))
        }
        return users
    }

    /// Submits the seed tour straight through the database and builds it.
    static func pendingRequest(_ env: TestEnv) async throws -> String {
        let request = try await env.database.startPublish(
            tourId: env.seed.tourId,
            actor: try env.actor("author@test.org"),
            tiles: env.app.dependencies.tileSettings.current
        )
        #expect(await env.buildAll() == 1)
        let built = try await env.request(request.id)
        #expect(built.state == .pending, "\(built.failureReason ?? "")")
        return request.id
    }

    static func approve(_ database: AppDatabase, _ rid: String, _ reviewer: AuthenticatedUser) async -> ReviewAttempt {
        do {
            switch try await database.approve(
                requestId: rid,
                reviewer: reviewer,
                comment: "",
                actor: AuditActor(userId: reviewer.id, ipAddress: "race")
            ) {
            case .approved(_, let becameReady): return .approved(becameReady: becameReady)
            case .denied: return .denied
            }
        } catch is Conflict {
            return .conflict
        } catch {
            return .failed(String(describing: error))
        }
    }

    static func deny(_ database: AppDatabase, _ rid: String, _ reviewer: AuthenticatedUser, comment: String) async -> ReviewAttempt {
        do {
            try await database.deny(requestId: rid, reviewer: reviewer, comment: comment, actor: AuditActor(userId: reviewer.id, ipAddress: "race"))
            return .denied
        } catch is Conflict {
            return .conflict
        } catch {
            return .failed(String(describing: error))
        }
    }

    @Test("20 concurrent approvals (database methods, two connection pools), 2 required: one transition to ready, two approvals, 18 refusals")
    func twentyApprovalsThroughTheDatabase() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 2)
        let reviewers = try await Self.reviewers(env, count: 20)
        let rid = try await Self.pendingRequest(env)
        let second = try AppDatabase.openFile(at: env.databasePath, migrationsFolder: projectRoot.appendingPathComponent("migrations"))
        let gate = PublishingStartGate(parties: reviewers.count)
        let first = env.database
        let results = await withTaskGroup(of: ReviewAttempt.self) { group in
            for (index, reviewer) in reviewers.enumerated() {
                group.addTask {
                    await gate.arrive()
                    return await Self.approve(index.isMultiple(of: 2) ? first : second, rid, reviewer)
                }
            }
            return await group.reduce(into: [ReviewAttempt]()) { $0.append($1) }
        }
        let failures = results.compactMap { attempt -> String? in
            if case .failed(let reason) = attempt { return reason }
            return nil
        }
        #expect(failures.isEmpty, "unexpected errors: \(failures)")
        #expect(results.filter { $0 == .approved(becameReady: true) }.count == 1, "\(results)")
        #expect(results.filter { $0 == .approved(becameReady: false) }.count == 1, "\(results)")
        #expect(results.filter { $0 == .conflict }.count == 18, "\(results)")
        await #expect(try env.auditCount("publish.approve.ready") == 1)
        await #expect(try env.auditCount("publish.approve.ready", objectId: rid) == 1)
        let reviews = try await env.reviews(rid)
        #expect(reviews.count == 2)
        #expect(Set(reviews.map(\.reviewerId)).count == reviews.count, "a reviewer was recorded twice")
        #expect(reviews.allSatisfy { $0.decision == .approve })
        await #expect(try env.request(rid).state == .ready)
    }

    @Test("20 concurrent approvals through the router (management API), 2 required: two 200s, eighteen 409s, one ready")
    func twentyApprovalsThroughTheAPI() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 2)
        let reviewers = try await Self.reviewers(env, count: 20)
        var issued: [String] = []
        for reviewer in reviewers { issued.append(try await env.token(reviewer.email)) }
        let tokens = issued
        let rid = try await Self.pendingRequest(env)
        try await env.app.test { client in
            let statuses = try await withThrowingTaskGroup(of: (HTTPResponse.Status, String?).self) { group in
                for token in tokens {
                    group.addTask {
                        let response = try await client.publishAction(rid, "approve", token: token)
                        return (response.status, response.jsonObject["state"] as? String)
                    }
                }
                return try await group.reduce(into: [(HTTPResponse.Status, String?)]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0.0 == .ok }.count == 2, "\(statuses.map(\.0))")
            #expect(statuses.filter { $0.0 == .conflict }.count == 18, "\(statuses.map(\.0))")
            // An answer reports the request as it is when the answer is made, so the first approver may already see
            // `ready` if the second committed in between; the single move to ready is counted in the audit log below.
            #expect((1...2).contains(statuses.filter { $0.0 == .ok && $0.1 == "ready" }.count), "\(statuses)")
            let state = try await client.publishState(rid, token: tokens[0])
            #expect(state["state"] as? String == "ready")
            #expect(state["approvals"] as? Int == 2)
        }
        await #expect(try env.auditCount("publish.approve.ready", objectId: rid) == 1)
        let reviews = try await env.reviews(rid)
        #expect(reviews.count == 2 && Set(reviews.map(\.reviewerId)).count == 2)
    }

    @Test("Each reviewer counts once under a race: 20 reviewers each approving twice at once with 20 required: 20 approvals, one ready")
    func eachReviewerOnceUnderRace() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 20)
        let reviewers = try await Self.reviewers(env, count: 20)
        let rid = try await Self.pendingRequest(env)
        let second = try AppDatabase.openFile(at: env.databasePath, migrationsFolder: projectRoot.appendingPathComponent("migrations"))
        let attempts = reviewers + reviewers
        let gate = PublishingStartGate(parties: attempts.count)
        let first = env.database
        let results = await withTaskGroup(of: ReviewAttempt.self) { group in
            for (index, reviewer) in attempts.enumerated() {
                group.addTask {
                    await gate.arrive()
                    return await Self.approve(index.isMultiple(of: 2) ? first : second, rid, reviewer)
                }
            }
            return await group.reduce(into: [ReviewAttempt]()) { $0.append($1) }
        }
        let failures = results.compactMap { attempt -> String? in
            if case .failed(let reason) = attempt { return reason }
            return nil
        }
        #expect(failures.isEmpty, "unexpected errors: \(failures)")
        #expect(results.filter { if case .approved = $0 { true } else { false } }.count == 20)
        #expect(results.filter { $0 == .approved(becameReady: true) }.count == 1)
        #expect(results.filter { $0 == .conflict }.count == 20)
        let reviews = try await env.reviews(rid)
        #expect(reviews.count == 20)
        #expect(Set(reviews.map(\.reviewerId)) == Set(reviewers.map(\.id)), "each reviewer exactly once")
        await #expect(try env.auditCount("publish.approve.ready", objectId: rid) == 1)
        await #expect(try env.auditCount("publish.approve", objectId: rid) == 19)
        await #expect(try env.request(rid).state == .ready)
    }

    @Test("A denial racing the last approval, 12 rounds: each ends ready with no denial, or denied with the tour unlocked")
    func denialRacingLastApproval() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 2)
        let approvers = await [try env.user("reviewer@test.org"), try env.user("reviewer2@test.org")]
        try await env.addMember("denier@test.org", role: .reviewer)
        let denier = try await env.user("denier@test.org")
        let second = try AppDatabase.openFile(at: env.databasePath, migrationsFolder: projectRoot.appendingPathComponent("migrations"))
        let first = env.database
        var outcomes: [PublishState: Int] = [:]
        for round in 1...12 {
            let rid = try await Self.pendingRequest(env)
            await #expect(Self.approve(first, rid, approvers[0]) == .approved(becameReady: false))
            let gate = PublishingStartGate(parties: 2)
            let comment = "Round \(round): the map is wrong."
            let approver = approvers[1]
            async let racingApproval: ReviewAttempt = {
                await gate.arrive()
                return await Self.approve(round.isMultiple(of: 2) ? first : second, rid, approver)
            }()
            async let racingDenial: ReviewAttempt = {
                await gate.arrive()
                return await Self.deny(round.isMultiple(of: 2) ? second : first, rid, denier, comment: comment)
            }()
            let (approval, denial) = await (racingApproval, racingDenial)
            #expect(![approval, denial].contains { if case .failed = $0 { true } else { false } }, "round \(round): \(approval), \(denial)")

            let request = try await env.request(rid)
            let reviews = try await env.reviews(rid)
            let tour = try await env.tour()
            outcomes[request.state, default: 0] += 1
            switch request.state {
            case .ready:
                #expect(denial == .conflict, "round \(round): ready, but the denial answered \(denial)")
                #expect(!reviews.contains { $0.decision == .deny }, "round \(round): ready with a denial recorded")
                #expect(request.denialComment == nil)
                #expect(tour.state == .inReview)
                await #expect(try env.auditCount("publish.approve.ready", objectId: rid) == 1)
                _ = try await env.database.withdraw(requestId: rid, user: try env.user("author@test.org"), actor: .system)
            case .denied:
                #expect(denial == .denied, "round \(round)")
                #expect(reviews.filter { $0.decision == .deny }.count == 1)
                #expect(request.denialComment == comment)
                #expect(tour.state == .draft && tour.reviewComment == comment, "round \(round): denied but the tour is \(tour.state)")
                await #expect(try env.auditCount("publish.deny", objectId: rid) == 1)
                // The approval either came first (and counted, then the denial ended the request) or was refused.
                let approvals = reviews.filter { $0.decision == .approve }.count
                #expect(
                    approval == (approvals == 2 ? .approved(becameReady: true) : .conflict),
                    "round \(round): \(approval) with \(approvals) approvals"
                )
                await #expect(try env.auditCount("publish.approve.ready", objectId: rid) == (approvals == 2 ? 1 : 0))
            default:
                Issue.record("round \(round): the request ended \(request.state)")
            }
            #expect(try await env.database.openRequest(tourId: env.seed.tourId) == nil)
        }
        print("denial racing the last approval: \(outcomes)")
        #expect(outcomes.values.reduce(0, +) == 12)
    }
}
