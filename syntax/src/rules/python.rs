//! python rules.

use tree_sitter::Node;

use super::Cx;

pub(crate) fn visit(_node: Node, _cx: &mut Cx) -> bool {
    true
}
