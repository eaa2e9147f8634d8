//! Regex literal mutations.
