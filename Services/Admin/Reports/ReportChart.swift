import Foundation

/// A bar chart as inline SVG, drawn on the server (the site runs no script): labelled axes, gridlines,
/// each bar's number above it and in its tooltip (`<title>`), and a text alternative for screen readers.
/// Colours are SVG attributes, which the content security policy allows (it forbids inline styles).
enum ReportChart {
    struct Bar: Sendable, Equatable {
        var label: String
        var value: Int
        /// The tooltip's words after the number, e.g. "unique devices on 2025-03-01".
        var caption: String
    }

    static let height = 300.0
    static let left = 64.0, right = 16.0, top = 24.0, bottom = 62.0

    static func bars(_ bars: [Bar], id: String, title: String, xAxis: String, yAxis: String) -> HTML {
        // At least 14 units a bar, so 90 days of upright numbers stay legible; the page scales it to fit.
        let width = max(760, left + right + 14 * Double(bars.count))
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        let (maximum, step) = scale(bars.map(\.value).max() ?? 0)
        let slot = plotWidth / Double(max(bars.count, 1))
        let barWidth = max(1, slot * 0.72)
        var parts: [HTML] = []
        // Gridlines and the y axis's numbers.
        for tick in stride(from: 0, through: maximum, by: step) {
            let y = top + plotHeight - Double(tick) / Double(maximum) * plotHeight
            parts.append("""
                <line x1="\(f(left))" y1="\(f(y))" x2="\(f(width - right))" y2="\(f(y))" stroke="#d5dede" stroke-width="1"/>\
                <text x="\(f(left - 6))" y="\(f(y))" text-anchor="end" dominant-baseline="middle" font-size="11" fill="#5b6b6b">\(grouped(tick))</text>
                """)
        }
        // Bars, each with its number: above it when there is room, else turned upright.
        let labelEvery = max(1, Int((Double(bars.count) / 15).rounded(.up)))
        for (index, bar) in bars.enumerated() {
            let height = Double(bar.value) / Double(maximum) * plotHeight
            let x = left + Double(index) * slot + (slot - barWidth) / 2, y = top + plotHeight - height
            let center = x + barWidth / 2
            let number: HTML = slot >= 24
                ? "<text x=\"\(f(center))\" y=\"\(f(y - 4))\" text-anchor=\"middle\" font-size=\"11\" fill=\"#1d2a2a\">\(grouped(bar.value))</text>"
                : "<text x=\"\(f(center))\" y=\"\(f(y - 3))\" transform=\"rotate(-90 \(f(center)) \(f(y - 3)))\" dominant-baseline=\"middle\" font-size=\"9\" fill=\"#1d2a2a\">\(grouped(bar.value))</text>"
            parts.append("""
                <g class="bar"><rect x="\(f(x))" y="\(f(y))" width="\(f(barWidth))" height="\(f(max(height, 0)))" fill="#006666">\
                <title>\(grouped(bar.value)) \(bar.caption)</title></rect>\(number)</g>
                """)
            if index % labelEvery == 0 {
                parts.append("""
                    <text x="\(f(center))" y="\(f(top + plotHeight + 16))" text-anchor="middle" font-size="11" fill="#5b6b6b">\(bar.label)</text>
                    """)
            }
        }
        let total = bars.reduce(0) { $0 + $1.value }
        let description = bars.isEmpty ? "No days in the range." :
            "\(bars.count) days from \(bars.first!.label) to \(bars.last!.label); total \(grouped(total)), highest \(grouped(bars.map(\.value).max() ?? 0)). The table below lists every day."
        return """
            <svg class="chart" id="\(id)" viewBox="0 0 \(f(width)) \(f(height))" width="\(f(width))" height="\(f(height))" role="img" \
            aria-labelledby="\(id)-title \(id)-desc" xmlns="http://www.w3.org/2000/svg" font-family="system-ui, sans-serif">
            <title id="\(id)-title">\(title)</title>
            <desc id="\(id)-desc">\(description)</desc>
            \(parts)
            <line x1="\(f(left))" y1="\(f(top + plotHeight))" x2="\(f(width - right))" y2="\(f(top + plotHeight))" stroke="#1d2a2a" stroke-width="1"/>
            <line x1="\(f(left))" y1="\(f(top))" x2="\(f(left))" y2="\(f(top + plotHeight))" stroke="#1d2a2a" stroke-width="1"/>
            <text class="axis-title" x="\(f(left + plotWidth / 2))" y="\(f(height - 12))" text-anchor="middle" font-size="12" fill="#1d2a2a">\(xAxis)</text>
            <text class="axis-title" x="14" y="\(f(top + plotHeight / 2))" transform="rotate(-90 14 \(f(top + plotHeight / 2)))" text-anchor="middle" font-size="12" fill="#1d2a2a">\(yAxis)</text>
            </svg>
            """
    }

    /// The axis's top and its step: a round number (1, 2 or 5 times a power of ten) about a quarter of it.
    static func scale(_ maximum: Int) -> (top: Int, step: Int) {
        guard maximum > 0 else { return (4, 1) }
        let rough = Double(maximum) / 4
        let power = pow(10, (log10(rough)).rounded(.down))
        let step = max(1, Int([1.0, 2, 5, 10].map { $0 * power }.first { $0 >= rough } ?? 10 * power))
        return (Int((Double(maximum) / Double(step)).rounded(.up)) * step, step)
    }

    /// Coordinates to one decimal.
    static func f(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}

/// 1234567 as "1,234,567".
func grouped(_ value: Int) -> String {
    let digits = String(value.magnitude)
    var out = ""
    for (index, character) in digits.enumerated() {
        if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
        out.append(character)
    }
    return value < 0 ? "-" + out : out
}
