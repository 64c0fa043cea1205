/// The name a person most likely meant: `pul` for `pull`, `nass` for `nas`, `s3` for `S3`.
public enum NearestName {
    /// The name in `names` equal to `word` or closest to it: at most one edit away for
    /// names shorter than four characters, two for longer ones, and never a name the word
    /// shares nothing with (`x` is no misspelling of `ls`). Ties go to the name first in
    /// alphabetical order.
    public static func among(_ names: [String], for word: String) -> String? {
        if names.contains(word) { return word }
        guard !word.isEmpty else { return nil }
        let near = names.map { ($0, ConfigReader.editDistance(word, $0)) }
            .filter { $0.1 <= ($0.0.count >= 4 ? 2 : 1) && $0.1 < $0.0.count }
        return near.min { $0.1 != $1.1 ? $0.1 < $1.1 : $0.0 < $1.0 }?.0
    }
}
