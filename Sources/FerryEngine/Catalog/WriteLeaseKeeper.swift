import FerryPluginAPI
import FerrySystem
import Foundation

/// Takes, renews and gives back one writer's write lease (`WriteLease`) for one run.
package actor WriteLeaseKeeper {
    private let store: RemoteCatalogStore
    private let writer: String
    private let device: String
    /// The lease's length in seconds: a file unchanged this long is a crashed device's.
    package let duration: Double
    private let clock: any FerryClock
    private var renewals = 0
    /// When the last write of this writer's file started that the store confirmed
    /// (`clock.now()`): the lease is this writer's for half a duration from then.
    private var renewedAt: Double?
    private var lost: String?

    package init(store: RemoteCatalogStore, writer: String, device: String, duration: Double, clock: any FerryClock) {
        self.store = store
        self.writer = writer
        self.device = device
        self.duration = duration
        self.clock = clock
    }

    /// Why a wait for the lease ended without it.
    package struct Refusal: Error {
        /// The device named in the live lease, if it could be read.
        package var holder: String?
        package var waited: Double
    }

    /// Takes the lease, waiting while another writer holds it for at most `maxWait`
    /// seconds (and at least one lease's duration, so that a crashed device's file is
    /// outlived). Returns the catalog folder as listed by the look that found it free.
    /// `whenHeld` hears once, the first time another writer is found holding the lease,
    /// that writer's name (nil when it cannot be read), so a person knows why nothing moves.
    package func take(maxWait: Double, whenHeld: @Sendable (String?) -> Void = { _ in }) async throws -> [RemoteEntry] {
        let started = clock.now()
        var told = false
        let giveUpAfter = max(maxWait, duration * 1.25)
        var firstSeen: [String: Double] = [:]
        var tries = 0
        var generator = SystemRandomNumberGenerator()
        while true {
            tries += 1
            let written = clock.now()
            let listing: [RemoteEntry]
            do {
                try await writeOwnFile()
                listing = try await store.listFolder() ?? []
            } catch let error as BackendError where error.isRetryable && clock.now() - started < giveUpAfter {
                // A store that failed one request (moto answered 500 under load) is asked
                // again after the same pause as a taken lease, not given up on at once.
                await clock.sleep(until: clock.now() + Self.pause(afterTries: tries, using: &generator))
                if Task.isCancelled { throw CancellationError() }
                continue
            }
            let now = clock.now()
            for lease in WriteLease.listed(in: listing) where firstSeen[WriteLease.seenKey(lease)] == nil {
                firstSeen[WriteLease.seenKey(lease)] = now
            }
            let look = WriteLease.look(at: listing, own: writer, firstSeen: firstSeen, now: now, duration: duration)
            for stale in look.stale {
                try? await store.vacate(named: stale.path.name, now: clock.wallTime())
            }
            if look.live.isEmpty && look.ownListed {
                renewedAt = written
                return listing
            }
            // Another writer holds it (or takes it at this moment): step back, so that it
            // can go on, and try again after a random while.
            try? await store.vacate(named: WriteLease.fileName(writer: writer), now: clock.wallTime())
            if !told, !look.live.isEmpty {
                told = true
                whenHeld(await holderName(look, in: listing))
            }
            if now - started >= giveUpAfter {
                throw Refusal(holder: await holderName(look, in: listing), waited: now - started)
            }
            await clock.sleep(until: clock.now() + Self.pause(afterTries: tries, using: &generator))
            if Task.isCancelled { throw CancellationError() }
        }
    }

    /// A random pause between looks, growing with the tries (up to 5 s on average), so that
    /// two writers that stepped back at once part.
    package static func pause(afterTries tries: Int, using generator: inout SystemRandomNumberGenerator) -> Double {
        min(5.0, 0.5 * Double(min(tries, 10))) * Double.random(in: 0.5...1.5, using: &generator)
    }

    /// The device named in a live lease, for the refusal's message. A holder rewrites its
    /// file at every renewal, and a download names the version listed: one that changed
    /// in between is listed again and read again (three looks at most).
    private func holderName(_ look: WriteLease.Look, in listing: [RemoteEntry]) async -> String? {
        var look = look
        var listing = listing
        for attempt in 1...3 {
            if let live = look.live.first, let entry = listing.first(where: { $0.path == live.path }),
               let data = try? await store.fetchData(entry), let device = WriteLease.device(in: [UInt8](data)) {
                return device
            }
            guard attempt < 3, let again = try? await store.listFolder() else { return nil }
            listing = again
            look = WriteLease.look(at: listing, own: writer, firstSeen: [:], now: clock.now(), duration: duration)
        }
        return nil
    }

    /// Renews the lease every quarter of its duration until the task is cancelled. A
    /// renewal that finds this writer's file gone (a waiter took it for a crashed device's)
    /// loses the lease; so does half a duration without a renewal the store confirmed.
    package func keepRenewing() async {
        while !Task.isCancelled, lost == nil {
            await clock.sleep(until: clock.now() + duration / 4)
            if Task.isCancelled { return }
            await renew()
        }
    }

    /// One renewal: a look that this writer's file is still there, then the file written
    /// again. A failure is tried again at the next quarter; `loss()` says when it is too late.
    package func renew() async {
        guard lost == nil else { return }
        let started = clock.now()
        do {
            let listing = try await store.listFolder() ?? []
            guard WriteLease.listed(in: listing).contains(where: { $0.writer == writer }) else {
                lost = "another device took this device's write lease for a crashed device's"
                return
            }
            try await writeOwnFile()
            renewedAt = started
        } catch {
            return
        }
    }

    /// Why this writer must not write now, or nil while it holds the lease.
    package func loss() -> String? {
        if let lost { return lost }
        guard let renewedAt else { return "this device does not hold the write lease" }
        if clock.now() - renewedAt > duration / 2 {
            lost = "the write lease could not be renewed for \(Int(duration / 2)) s"
        }
        return lost
    }

    /// Gives the lease back: other writers need not wait for it to expire.
    package func release() async {
        renewedAt = nil
        try? await store.vacate(named: WriteLease.fileName(writer: writer), now: clock.wallTime())
    }

    private func writeOwnFile() async throws {
        renewals += 1
        try await store.put(Data(WriteLease.encode(device: device, renewal: renewals)), named: WriteLease.fileName(writer: writer),
                            now: clock.wallTime())
    }
}
