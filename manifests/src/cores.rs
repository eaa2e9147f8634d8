//! The cores this process may use: how many threads a check, a parse and a lookup may run.

/// The cores this process may use, asked once: the answer reads the cgroup's files, and a check
/// asks for every pass it runs on every core.
pub(crate) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}
