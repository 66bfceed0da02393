//! Log-like text for tests and benchmarks, generated deterministically so that a clone of the
//! repository needs no data set from outside it: timestamps, levels, components and messages
//! shaped like real service logs, every line numbered and so unique.

/// A small deterministic generator (xorshift64*), so every run produces the same text.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

const LEVELS: &[&str] = &["INFO", "WARN", "ERROR", "DEBUG", "TRACE"];
const COMPONENTS: &[&str] = &[
    "dfs.DataNode$PacketResponder",
    "org.apache.hadoop.hdfs.server.namenode.FSNamesystem",
    "sshd[24200]",
    "kernel",
    "mod_jk child workerEnv",
    "nova.compute.manager",
    "spark.storage.BlockManager",
];
const WORDS: &[&str] = &[
    "Received",
    "block",
    "blk_-1608999687919862906",
    "of",
    "size",
    "91178",
    "from",
    "/10.250.10.6",
    "Verification",
    "succeeded",
    "for",
    "session",
    "opened",
    "user",
    "root",
    "by",
    "(uid=0)",
    "instance",
    "terminated",
    "connection",
    "reset",
    "retrying",
    "in",
    "5",
    "seconds",
    "jk2_init()",
    "Found",
    "child",
    "6725",
    "in",
    "scoreboard",
    "slot",
    "10",
];

/// `lines` log-like lines (timestamp, level, component, message), each terminated by `\n`.
/// Every line is unique: it starts with its zero-padded number.
pub fn synthetic_log(lines: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::with_capacity(lines * 100);
    for i in 0..lines {
        let words = 3 + rng.below(18) as usize;
        let msg: Vec<&str> = (0..words)
            .map(|_| WORDS[rng.below(WORDS.len() as u64) as usize])
            .collect();
        out.extend_from_slice(
            format!(
                "{i:07} 2026-11-{:02} {:02}:{:02}:{:02},{:03} {} {}: {}\n",
                1 + rng.below(28),
                rng.below(24),
                rng.below(60),
                rng.below(60),
                rng.below(1000),
                LEVELS[rng.below(LEVELS.len() as u64) as usize],
                COMPONENTS[rng.below(COMPONENTS.len() as u64) as usize],
                msg.join(" ")
            )
            .as_bytes(),
        );
    }
    out
}
