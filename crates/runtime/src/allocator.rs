//! The process's memory allocator: mimalloc, for every allocation of the process, Rust's and
//! C's alike (librdkafka's messages and buffers, the JVM of Java plugins), since it also
//! replaces `malloc` and `free` (mimalloc's static override). Its thread-local free lists make
//! the per-record allocations of task loops and of librdkafka cheaper than glibc's malloc: the
//! sink path moves about 40% more records per second. Every binary linking the runtime (the
//! worker, the benchmarks, whose raw-client ceilings thus run on the same allocator, and the
//! tests) uses it.

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Tells mimalloc to commit its arenas' memory on demand rather than eagerly (its default on
/// Linux), and so to give freed pages back to the system: an idle worker keeps glibc's
/// resident size (about 28 MiB rather than about 48). Runs as a constructor, before the first
/// allocation creates the first arena (set later, the option no longer applies to it).
#[allow(unsafe_code)]
#[ctor::ctor]
fn tune_allocator() {
    /// `mi_option_arena_eager_commit` in mimalloc 3's `mi_option_e` (mimalloc.h) of the pinned
    /// `libmimalloc-sys` version.
    const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
    // SAFETY: sets one of mimalloc's process-wide options, a plain integer store into its
    // option table, which needs no initialised runtime.
    unsafe { libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0) };
}
