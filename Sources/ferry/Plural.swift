/// Counts with their noun, singular or plural: "1 file", "3 files", "0 conflicts".
enum Plural {
    static func count(_ number: Int, _ singular: String, plural: String? = nil) -> String {
        "\(number) " + (number == 1 ? singular : plural ?? singular + "s")
    }
}
