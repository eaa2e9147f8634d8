//! `probe clients`: every installed preset measured in turn (version, limit, unit, what happens
//! above the limit), beside the other commands.
//!
//! [`matrix`] runs the measurements through the bracket driver and builds the typed record,
//! [`kinds`] finds what kind of limit a client has, [`render`] formats the tables, and
//! [`command`] writes them and picks the exit code. The presets it measures live below it, in
//! [`crate::presets`].

pub(crate) mod command;
mod kinds;
pub(crate) mod matrix;
mod render;
