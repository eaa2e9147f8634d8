//! Where a mutant came from, as the spec says it: the `operator` that generated it (`mutants
//! suggest` writes one on every proposal) and whether its claim is named yet.
//!
//! The one rule a newcomer must know: a mutant with an `operator` is a *generated* one, and a
//! generated mutant whose `build` step fails is `unviable` (a proposal that does not compile
//! proves nothing about the suite, and is not the suite's fault), while a hand-written one
//! stays `error`. The claim of a proposal starts as `TODO: ...` until a reviewer names it; such
//! a mutant runs as any other, and every rendering says "claim not named".

/// The operator names a spec may give, kebab-case: the names of the `syntax` crate's
/// `Operator` enum, in its order. Kept here, in one place, until that crate's `FromStr` is the
/// one every tool parses with.
pub(crate) const OPERATORS: [&str; 19] = [
    "boundary",
    "equality",
    "logical",
    "negation",
    "boolean",
    "return-value",
    "remove-call",
    "remove-block",
    "arithmetic",
    "bitwise",
    "assignment",
    "update",
    "optional-chaining",
    "string",
    "constant",
    "empty-array",
    "empty-object",
    "regex",
    "control",
];

/// `name` as a known operator, or why it is refused (the spec reader says where).
pub(crate) fn check_operator(name: &str) -> Result<String, String> {
    if OPERATORS.contains(&name) {
        Ok(name.to_string())
    } else {
        Err(format!(
            "unknown operator {name:?} (one of: {})",
            OPERATORS.join(", ")
        ))
    }
}

/// What a claim that is not named yet starts with.
pub(crate) const TODO: &str = "TODO:";

/// The words every rendering shows for a claim that still says `TODO:`.
pub(crate) const NOT_NAMED: &str = "claim not named";

/// Whether the claim a mutant undoes is named: false only while `undoes` still starts with
/// `TODO:` (leading blanks aside), as `mutants suggest` writes it. A mutant without an
/// `undoes` names no claim to fill in, so it is not counted as one.
pub(crate) fn claim_named(undoes: Option<&str>) -> bool {
    !undoes.is_some_and(|u| u.trim_start().starts_with(TODO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_syntax_crates_operator_names_are_known() {
        for name in OPERATORS {
            assert_eq!(check_operator(name).as_deref(), Ok(name));
        }
        let e = check_operator("Boundary").unwrap_err();
        assert!(
            e.starts_with("unknown operator \"Boundary\" (one of: boundary, equality"),
            "{e}"
        );
        assert!(check_operator("").is_err());
        assert!(check_operator("return_value").is_err());
    }

    #[test]
    fn a_claim_is_not_named_while_it_says_todo() {
        assert!(!claim_named(Some("TODO: the claim this mutant undoes")));
        assert!(!claim_named(Some("  TODO:")));
        assert!(claim_named(Some("the page starts past after")));
        assert!(claim_named(Some("todo: lower case is a claim")));
        assert!(claim_named(Some("a TODO: later in the text")));
        assert!(claim_named(None));
    }
}
