//! manifests' integration tests: the library against real trees, the real GNU `sha256sum`, and
//! hostile input. One test binary for the crate.

mod common;
mod differential;
mod fuzz;
mod gnu;
mod props;
mod tree;
