#if canImport(Glibc)
import Glibc
#endif

/// The two glibc allocator calls the feed makes, which glibc's Swift module does not export (malloc.h):
/// looked up at run time, so on another C library they do nothing.
enum GlibcMalloc {
    private typealias Trim = @convention(c) (Int) -> Int32
    private typealias Option = @convention(c) (Int32, Int32) -> Int32

    private static let trim: Trim? = symbol("malloc_trim", as: Trim.self)
    private static let option: Option? = symbol("mallopt", as: Option.self)

    /// `M_ARENA_MAX` in malloc.h.
    private static let arenaMax: Int32 = -8

    /// Caps the arenas threads allocate from. By default glibc gives each contending thread its own, up to
    /// eight per core; loading a city on the event loops and Dispatch threads at once spread the projection
    /// and its freed load buffers over all of them, each arena keeping its own free pages (a tenth of the
    /// feed's RSS). Call before the threads start.
    static func limitArenas(to count: Int32) {
        _ = option?(arenaMax, count)
    }

    /// Returns free pages at the top of the heap and inside it to the system: loading frees far more than it
    /// keeps. Walks every arena, so it belongs off the event loops.
    static func returnFreedMemory() {
        _ = trim?(0)
    }

    private static func symbol<Function>(_ name: String, as type: Function.Type) -> Function? {
        #if canImport(Glibc)
        dlsym(nil, name).map { unsafeBitCast($0, to: type) }
        #else
        nil
        #endif
    }
}
