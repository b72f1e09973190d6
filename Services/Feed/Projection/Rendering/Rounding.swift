import Foundation

extension Double {
    /// Rounded to `places` decimals, for distances and bearings that need no more.
    func rounded(places: Int) -> Double {
        let scale = pow(10, Double(places))
        return (self * scale).rounded() / scale
    }
}
