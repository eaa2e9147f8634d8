//! What a test needs from the machine, asked before it starts: a program that runs, a Python
//! module that imports. Whatever the missing piece is (an interpreter, a package inside it, a
//! runner, a client), the test skips through [`crate::skip`] with a reason naming the piece and
//! how to get it, instead of failing half-way in a step nobody tested (a `pip install -e .` on a
//! Python without `wheel` once failed gate's suite and stopped cargo before the other crates).

use std::process::{Command, Stdio};

/// True when `program args` runs and exits 0 (say `node --version`); otherwise the test is
/// skipped as `id`, naming the program and `install` (how to get it), and false.
pub fn program(id: &str, program: &str, args: &[&str], install: &str) -> bool {
    match runs(program, args) {
        Ok(()) => true,
        Err(why) => {
            crate::skip(id, &format!("{why}; {install}"));
            false
        }
    }
}

/// True when python3 imports every module in `modules`; otherwise the test is skipped as `id`,
/// naming the modules that did not import, and false.
pub fn python_modules(id: &str, modules: &[&str]) -> bool {
    if let Err(why) = runs("python3", &["--version"]) {
        crate::skip(id, &format!("{why}; install CPython 3 (Debian's python3)"));
        return false;
    }
    let missing = missing_modules(modules);
    if missing.is_empty() {
        return true;
    }
    let pip: Vec<&str> = missing.iter().map(|m| pip_name(m)).collect();
    crate::skip(
        id,
        &format!(
            "python3 lacks {} (python3 -m pip install {})",
            missing.join(", "),
            pip.join(" ")
        ),
    );
    false
}

fn runs(program: &str, args: &[&str]) -> Result<(), String> {
    let status = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| format!("`{program}` cannot run ({e})"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{program} {}` exits {status}", args.join(" ")))
    }
}

/// The modules of `modules` python3 cannot import, in order.
fn missing_modules<'a>(modules: &[&'a str]) -> Vec<&'a str> {
    modules
        .iter()
        .copied()
        .filter(|module| runs("python3", &["-c", &format!("import {module}")]).is_err())
        .collect()
}

/// The PyPI name of a module where the two differ.
fn pip_name(module: &str) -> &str {
    match module {
        "yaml" => "pyyaml",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::{missing_modules, runs};

    #[test]
    fn a_module_that_does_not_import_is_named_and_the_standard_library_is_not() {
        assert_eq!(
            missing_modules(&["json", "no_such_module_gatekit", "os"]),
            ["no_such_module_gatekit"]
        );
    }

    #[test]
    fn a_program_that_is_missing_or_fails_is_named() {
        assert!(runs("true", &[]).is_ok());
        let missing = runs("no-such-program-gatekit", &[]).unwrap_err();
        assert!(
            missing.contains("`no-such-program-gatekit` cannot run"),
            "{missing}"
        );
        let fails = runs("false", &["x"]).unwrap_err();
        assert!(fails.contains("`false x` exits"), "{fails}");
    }
}
