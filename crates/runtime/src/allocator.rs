//! The allocator of Rust's allocations: mimalloc, whose thread-local free lists make the
//! per-record allocations of the task loops (records, converted values, batches) cheaper than
//! glibc's malloc. Every binary linking the runtime (the worker, the benchmarks and the tests)
//! uses it.
//!
//! C code (librdkafka, the JVM of Java plugins) keeps glibc's `malloc`: mimalloc's override of
//! `malloc` made the sink faster still, but gave each of the hundreds of librdkafka threads of a
//! worker with many tasks a heap of its own, which nearly doubled such a worker's memory
//! (100 source tasks: 163 MiB against glibc's 88 MiB; with Rust's allocations alone, 113 MiB).

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
