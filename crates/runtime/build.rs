//! Compiles `csrc/consumed_headers.c` against the librdkafka that `rdkafka-sys` built (its
//! source tree, configured, is `DEP_RDKAFKA_ROOT`), so the shim sees the message layout that
//! is linked in.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=csrc/consumed_headers.c");
    let root = PathBuf::from(
        std::env::var("DEP_RDKAFKA_ROOT")
            .expect("rdkafka-sys exports its librdkafka tree as DEP_RDKAFKA_ROOT"),
    );
    cc::Build::new()
        .file("csrc/consumed_headers.c")
        .include(root.join("src"))
        .include(&root)
        .warnings(false)
        .compile("tributary_consumed_headers");
}
