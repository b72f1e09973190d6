/// "1 tour", "2 tours", "3 categories": a count with its noun, in plain words (people read these in the
/// admin and in catalog's answers).
public func counted(_ count: Int, _ noun: String, plural: String? = nil) -> String {
    "\(count) \(count == 1 ? noun : plural ?? noun + "s")"
}
