internal import CFerrySystem

/// What the processor can do, where a choice of algorithm depends on it.
public enum ProcessorFeatures {
    /// AES and carry-less multiply instructions: with them AES-GCM is the faster
    /// authenticated cipher; without them ChaCha20-Poly1305 is, by several times.
    public static let hasAESGCMInstructions: Bool = CFerrySystem_cpu_has_aes_gcm() != 0
}
