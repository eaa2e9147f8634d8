//! gatekit's shared reporting library.
//!
//! Everything the three tools (`gate`, `mutants`, `probe`) report with lives here, once: the
//! process-group [`runner`] every child command goes through and the [`RunRecord`] it produces,
//! the pass/fail [`counts`] read from a runner's closing lines, UTC [`time`] stamps, [`duration`]s
//! as users write them, aligned [`table`]s, atomic [`json`] files, the [`exit`] codes of SPEC.md,
//! [`interrupt`] handling and terminal [`progress`] lines; and the renderings other programs
//! read: [`junit`] XML for CI, [`markdown`] for pull requests, chosen by [`format`](mod@format), with
//! [`color`] decided in one place (on a terminal only, `NO_COLOR` honoured). The tools produce records; the
//! renderings here consume them, so no tool formats output inside its run loop.

pub mod cli;
pub mod color;
pub mod counts;
pub mod duration;
pub mod escape;
pub mod exit;
pub mod format;
pub mod input;
pub mod interrupt;
pub mod json;
pub mod junit;
pub mod lines;
pub mod located;
pub mod lock;
pub mod manual;
pub mod markdown;
pub mod outputs;
pub mod progress;
pub mod runner;
pub mod schema;
pub mod scratch;
pub mod table;
pub mod text;
pub mod time;

pub use color::{ColorChoice, Painter};
pub use counts::Counts;
pub use exit::Exit;
pub use format::Format;
pub use runner::{Job, Outcome, Program, RunRecord};
pub use table::Table;
pub use time::Timestamp;
