//! gatekit's records and their renderings.
//!
//! The [`RunRecord`] of a child command (what the `runner` saw, with the pass/fail [`counts`]
//! and the [`failures`] read from its log, and the one rule a run is judged by), UTC [`time`]
//! stamps, [`duration`]s as users write them, and the renderings of records: aligned
//! [`table`]s, plain [`text`], atomic [`json`] files checked against their [`schema`], [`junit`]
//! XML for CI, [`sarif`] for code scanning, [`markdown`] for pull requests, chosen by
//! [`format`](mod@format), with [`color`] decided in one place (on a terminal only, `NO_COLOR`
//! honoured). The tools produce records; the renderings here consume them, so no tool formats
//! output inside its run loop.
//!
//! A crate of its own, above `runner` and `files` and below `cmdline`, so that what reads and
//! renders records needs no command-line parser or progress bar: `candidate` judges its setup
//! steps' records without either.

pub mod color;
pub mod counts;
pub mod duration;
pub mod errors;
pub mod failures;
pub mod first_failure;
pub mod fit;
pub mod format;
pub mod json;
pub mod junit;
pub mod junit_read;
pub mod lines;
pub mod markdown;
pub mod record;
pub mod results;
pub mod sarif;
pub mod schema;
pub mod table;
pub mod tap;
pub mod text;
pub mod time;
pub mod xml;

pub use color::{ColorChoice, Painter};
pub use counts::Counts;
pub use format::Format;
pub use record::RunRecord;
/// How a run ended: the runner's word, judged for a record by [`RunRecord::outcome`].
pub use runner::Outcome;
pub use table::Table;
pub use time::Timestamp;
