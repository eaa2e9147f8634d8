//! Where a mutant came from, as the spec says it: the `operator` that generated it (`mutants
//! suggest` writes one on every proposal) and whether its claim is named yet.
//!
//! The one rule a newcomer must know: a mutant with an `operator` is a *generated* one, and a
//! generated mutant whose `build` step fails is `unviable` (a proposal that does not compile
//! proves nothing about the suite, and is not the suite's fault), while a hand-written one
//! stays `error`. The claim of a proposal starts as `TODO: ...` until a reviewer names it; such
//! a mutant runs as any other, and every rendering says "claim not named".

/// `name` as a known operator's name, or why it is refused (the spec reader says where): the
/// `syntax` crate's [`syntax::Operator`] names them all (kebab-case: `boundary`, `return-value`,
/// ...), and its `FromStr` is the one reader of them.
pub(crate) fn check_operator(name: &str) -> Result<String, String> {
    name.parse::<syntax::Operator>()
        .map(|op| op.name().to_string())
        .map_err(|e| e.to_string())
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
        for name in ["boundary", "return-value", "remove-block", "control"] {
            assert_eq!(check_operator(name).as_deref(), Ok(name));
        }
        let e = check_operator("Boundary").unwrap_err();
        assert!(
            e.starts_with("unknown operator `Boundary` (known: boundary, equality"),
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
