"""gatekit's coverage map for pytest: which test ids run which lines.

Loaded with `-p gatekit_cover` (PYTEST_ADDOPTS) from a folder of gatekit's session on
PYTHONPATH, by `mutants run` for a suite with a `select` template. coverage.py measures from
the moment pytest loads this plugin; each test runs in a dynamic context named by its id (as
the suite's own command line can name it: its file relative to the working folder), and lines
run outside any test (imports during collection) are in the empty context; each test's own call
is timed too (its fixtures' setup counts with the run's start-up). Each process writes its map as JSON into GATEKIT_COVER_DIR; without coverage.py it writes why, and measures nothing.
"""

import json
import os

import pytest

_OUT = os.environ.get("GATEKIT_COVER_DIR")
_COV = None
_WHY = None
_SECS = {}
_CURRENT = None

try:
    import coverage

    _COV = coverage.Coverage(data_file=None, config_file=False, auto_data=False)
    _COV.start()
except Exception as e:  # no coverage.py, or one that cannot start: no map, the suite runs whole
    _COV = None
    _WHY = "%s: %s" % (type(e).__name__, e)


@pytest.hookimpl(hookwrapper=True)
def pytest_load_initial_conftests(early_config, parser, args):
    # pytest-cov (`--cov` in the project's addopts) would start a coverage.py of its own after
    # this one and take the tracer over, leaving this map empty; for this one run it is told
    # there is nothing to measure (its `--cov-fail-under` with it). A hook wrapper's first half
    # runs before every plugin's own hook, pytest-cov's included.
    if _COV is not None:
        options = early_config.known_args_namespace
        if getattr(options, "cov_source", None):
            options.cov_source = None
    yield


def _test_id(item):
    nodeid = item.nodeid
    try:
        rest = nodeid.split("::", 1)[1] if "::" in nodeid else ""
        path = os.path.relpath(str(item.path), os.getcwd())
        return path + ("::" + rest if rest else "")
    except Exception:
        return nodeid


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    global _CURRENT
    _CURRENT = _test_id(item)
    if _COV is not None:
        _COV.switch_context(_CURRENT)
    try:
        yield
    finally:
        _CURRENT = None
        if _COV is not None:
            _COV.switch_context("")


def pytest_runtest_logreport(report):
    # Only the test's own call: a fixture set up once for many tests is paid by whichever runs
    # first, and by any covering test run alone, so setups count with the run's start-up.
    if report.when == "call" and _CURRENT is not None:
        _SECS[_CURRENT] = _SECS.get(_CURRENT, 0.0) + report.duration


def _write(doc):
    if not _OUT:
        return
    path = os.path.join(_OUT, "pytest-%d.json" % os.getpid())
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(doc, f)
    os.replace(path + ".tmp", path)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    if _COV is None:
        _write({"error": _WHY or "coverage.py did not start"})
        return
    _COV.stop()
    data = _COV.get_data()
    files = {}
    for name in data.measured_files():
        by_line = data.contexts_by_lineno(name)
        files[name] = {str(line): sorted(set(c)) for line, c in by_line.items()}
    _write({"cwd": os.getcwd(), "files": files, "secs": _SECS})
