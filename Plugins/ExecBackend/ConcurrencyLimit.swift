/// At most `capacity` holders at once; the rest wait in arrival order. The capacity can
/// change while in use: a plugin's handshake says how many requests it takes at a time.
actor ConcurrencyLimit {
    private var capacity: Int
    private var inUse = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    func setCapacity(_ value: Int) {
        capacity = max(1, value)
        admit()
    }

    func acquire() async {
        if inUse < capacity && waiting.isEmpty {
            inUse += 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        inUse -= 1
        admit()
    }

    private func admit() {
        while inUse < capacity && !waiting.isEmpty {
            inUse += 1
            waiting.removeFirst().resume()
        }
    }
}
