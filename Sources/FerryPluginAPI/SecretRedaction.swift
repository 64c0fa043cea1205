/// Takes secrets out of text before it is shown: a URL typed or configured with a password
/// in it (`https://me:secret@nas/dav`) is refused, and the refusal must not print it.
public enum SecretRedaction {
    /// `text` with the password of a `user:password@` part (with or without a scheme)
    /// replaced by `***`; anything else unchanged.
    public static func redactingPassword(_ text: String) -> String {
        let authorityStart = text.range(of: "://")?.upperBound ?? text.startIndex
        let rest = text[authorityStart...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else { return text }
        return String(text[..<authority.index(after: colon)]) + "***" + String(text[at...])
    }
}
