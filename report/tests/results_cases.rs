//! More sample projects for the counts tests (see `counts_cases`), for what outside checks
//! found wanting: pytest ids whose parameters hold spaces and ` - `, tape's TAP (its two-space
//! `# pass  N`, its `# name` headers, a todo that fails), a test killed by a crash beside one
//! killed by an assertion, a missing package imported by a module a test file imports (node 20
//! prints the cause as `#` lines above the test file's point), and pytest's collection error
//! whose cause is a `PackageNotFoundError` behind `ImportError while importing test module`.

use crate::counts_cases::{counts, npm_bin, on_path, pytest, Case};

pub const PYTEST_IDS: &str = r#"import pytest

@pytest.mark.parametrize("text", ["a b", "plain", "x - y", "two  spaces"])
def test_param(text):
    assert text == "plain"

@pytest.mark.parametrize("n", [1, 2], ids=["one thing", "other thing"])
def test_named(n):
    assert n == 1

def test_crash():
    x = None
    x + 1

def test_ok(): pass

@pytest.mark.skip(reason="later")
def test_skip(): pass
"#;

pub const PYTEST_IDS_FAILED: &[&str] = &[
    "test_ids.py::test_param[a b]",
    "test_ids.py::test_param[x - y]",
    "test_ids.py::test_param[two  spaces]",
    "test_ids.py::test_named[other thing]",
    "test_ids.py::test_crash",
];

const PACKAGE_INIT: &str =
    "from importlib.metadata import version\n__version__ = version(\"mylib-not-installed\")\n";

const PACKAGE_TEST: &str = "import mylib\n\ndef test_version():\n    assert mylib.__version__\n";

const TAPE: &str = r#"const test = require('tape');
test('adds', (t) => { t.equal(1 + 1, 2); t.equal(2 + 2, 4, 'four'); t.end(); });
test('subs', (t) => { t.equal(3 - 1, 1, 'three minus one'); t.end(); });
test('throws inside', (t) => { t.doesNotThrow(() => { const x = null; x.y(); }, 'no throw'); t.end(); });
test('skipped one', { skip: true }, (t) => { t.end(); });
test('todo one', { todo: true }, (t) => { t.ok(false, 'not yet'); t.end(); });
test('has skip', (t) => { t.skip('a skipped assertion'); t.ok(true, 'fine'); t.end(); });
"#;

/// A passing tape suite with a test that logs a TAP-looking failure of its own (a report line
/// it checks, say): tape closes with `# ok`.
const TAPE_LOGS_NOT_OK: &str = r#"const test = require('tape');
test('logs', (t) => {
  console.log('not ok 1 - remote check failed\n  ---\n  error: upstream\n  ...');
  t.equal(1 + 1, 2);
  t.end();
});
test('adds', (t) => { t.ok(true, 'fine'); t.end(); });
"#;

const NODE_SEMVER_SRC: &str =
    "import semver from 'semver';\nexport const ok = (v) => semver.valid(v) !== null;\n";

const NODE_SEMVER_TEST: &str = r#"import { test } from 'node:test';
import assert from 'node:assert';
import { ok } from '../src/version.mjs';
test('valid', () => { assert.ok(ok('1.2.3')); });
"#;

pub const NODE_NESTED: &str = r#"import { test, describe } from 'node:test';
import assert from 'node:assert';
describe('math', () => {
  test('adds', () => { assert.strictEqual(1 + 1, 2); });
  test('crashes', () => { const x = null; x.y(); });
  test('compares', () => { assert.strictEqual(1 + 1, 3); });
});
test('cause', () => { throw new Error('outer', { cause: new TypeError('inner reason') }); });
test('skipped', { skip: true }, () => {});
"#;

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "pytest-ids",
            program: pytest,
            files: &[("test_ids.py", PYTEST_IDS)],
            args: &["-m", "pytest", "-q", "-p", "no:cacheprovider"],
            expect: counts(3, 5, 1),
            failed: PYTEST_IDS_FAILED,
        },
        Case {
            name: "pytest-package-missing",
            program: pytest,
            files: &[
                ("mylib/__init__.py", PACKAGE_INIT),
                ("test_lib.py", PACKAGE_TEST),
            ],
            args: &["-m", "pytest", "-q", "-p", "no:cacheprovider"],
            expect: counts(0, 1, 0),
            failed: &["test_lib.py"],
        },
        Case {
            name: "tape",
            program: || npm_bin("tape"),
            files: &[("t.js", TAPE)],
            args: &["t.js"],
            // tape's own summary counts assertions, and a failing todo as a pass.
            expect: counts(5, 2, 0),
            failed: &["subs > three minus one", "throws inside > no throw"],
        },
        Case {
            name: "tape-logs-not-ok",
            program: || npm_bin("tape"),
            files: &[("t.js", TAPE_LOGS_NOT_OK)],
            args: &["t.js"],
            expect: counts(2, 0, 0),
            failed: &[],
        },
        Case {
            name: "node-missing-nested",
            program: || on_path("node"),
            files: &[
                ("package.json", "{\"type\":\"module\",\"private\":true}\n"),
                ("src/version.mjs", NODE_SEMVER_SRC),
                ("test/version.test.mjs", NODE_SEMVER_TEST),
                ("test/other.test.mjs", NODE_NESTED),
            ],
            args: &["--test", "--test-reporter=tap", "test/"],
            expect: counts(1, 4, 1),
            failed: &[
                "math > crashes",
                "math > compares",
                "cause",
                "/tmp/sample/test/version.test.mjs",
            ],
        },
    ]
}
