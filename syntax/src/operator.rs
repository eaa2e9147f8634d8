//! The operators' names in specs and JSON (`boundary`, `return-value`, ...) and back.

use std::str::FromStr;

use crate::Operator;

/// Every operator, in the order one-per-line picks from.
pub(crate) const ALL: [Operator; 19] = [
    Operator::Boundary,
    Operator::Equality,
    Operator::Logical,
    Operator::Negation,
    Operator::Boolean,
    Operator::ReturnValue,
    Operator::RemoveCall,
    Operator::RemoveBlock,
    Operator::Arithmetic,
    Operator::Bitwise,
    Operator::Assignment,
    Operator::Update,
    Operator::OptionalChaining,
    Operator::String,
    Operator::Constant,
    Operator::EmptyArray,
    Operator::EmptyObject,
    Operator::Regex,
    Operator::Control,
];

impl Operator {
    /// The kebab-case name a spec's `operator` key holds.
    pub fn name(self) -> &'static str {
        match self {
            Operator::Boundary => "boundary",
            Operator::Equality => "equality",
            Operator::Logical => "logical",
            Operator::Negation => "negation",
            Operator::Boolean => "boolean",
            Operator::ReturnValue => "return-value",
            Operator::RemoveCall => "remove-call",
            Operator::RemoveBlock => "remove-block",
            Operator::Arithmetic => "arithmetic",
            Operator::Bitwise => "bitwise",
            Operator::Assignment => "assignment",
            Operator::Update => "update",
            Operator::OptionalChaining => "optional-chaining",
            Operator::String => "string",
            Operator::Constant => "constant",
            Operator::EmptyArray => "empty-array",
            Operator::EmptyObject => "empty-object",
            Operator::Regex => "regex",
            Operator::Control => "control",
        }
    }
}

/// An operator name that is not one of [`Operator::name`]'s.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownOperator(pub String);

impl std::fmt::Display for UnknownOperator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let known: Vec<&str> = ALL.iter().map(|o| o.name()).collect();
        write!(
            f,
            "unknown operator `{}` (known: {})",
            self.0,
            known.join(", ")
        )
    }
}

impl std::error::Error for UnknownOperator {}

impl FromStr for Operator {
    type Err = UnknownOperator;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ALL.iter()
            .copied()
            .find(|o| o.name() == s)
            .ok_or_else(|| UnknownOperator(s.to_owned()))
    }
}
