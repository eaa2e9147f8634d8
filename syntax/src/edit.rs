//! An edit: the one value every rule, the control and the selection share.

use crate::Operator;

/// One mutation of the original text: bytes `start..end` become `text`.
#[derive(Clone, Debug)]
pub(crate) struct Edit {
    pub start: usize,
    pub end: usize,
    pub text: String,
    pub operator: Operator,
    pub description: String,
}
