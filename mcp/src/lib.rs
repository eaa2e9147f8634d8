//! The MCP harness probe measures with, usable alone: a stdio MCP server ([`server`]) whose one
//! tool, `emit`, returns text of exactly n UTF-16 units between markers ([`emit`]), the
//! JSON-RPC 2.0 framing it speaks ([`protocol`]), and the JSON-lines event log it and the model
//! stand-in write ([`events`]).
//!
//! It holds no command line, no client and no judgement: `probe` drives clients against it and
//! judges what came back; this crate only serves and records.

pub mod emit;
pub mod events;
pub mod protocol;
pub mod server;
