//! The process runner every gatekit tool uses to run a child command.
//!
//! Each child runs in its own process group, stdin from /dev/null, stdout and stderr straight
//! into a log file, with a timeout. Three things make it trustworthy:
//!
//! - **The tool is a child subreaper** (`PR_SET_CHILD_SUBREAPER`, as Bazel's process wrapper
//!   does). A descendant that leaves the group (`setsid`, a double fork) is reparented to us
//!   instead of to init, so it stays visible and killable. Every child also carries a unique
//!   `GATEKIT_RUN` tag in its environment, which its descendants inherit; after the child ends,
//!   every live process in its group, carrying its tag, or descended from one of those, is
//!   killed and counted as a stray. No run leaves a process behind.
//! - **Output never goes through a pipe we wait on.** A daemon that keeps the child's stdout
//!   open would make a pipe reader wait forever; a log file has no such end-of-file to wait for.
//!   Echoing to the terminal tails the file instead.
//! - **A hang is a hang.** On timeout the whole group gets SIGTERM (and the strays with it), then
//!   SIGKILL after a grace period that lets well-behaved suites clean up. The record says
//!   `hang`, and [`Outcome::Hang`] is never a pass.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, Once, OnceLock};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use nix::sys::signal::{kill, killpg, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};

use crate::counts::{self, Counts};
use crate::interrupt;
use crate::time::Timestamp;

/// The environment variable that tags a run's descendants.
pub const TAG_VAR: &str = "GATEKIT_RUN";

/// The default timeout when a caller gives none (SPEC: suites default to 30 minutes).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// Time between SIGTERM and SIGKILL: long enough for a suite to remove its temp files.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(3);

/// What to execute.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Program {
    /// A script run with `sh -c`.
    Shell(String),
    /// A program and its arguments, run directly.
    Argv(Vec<String>),
}

/// One child command to run: what, where, with which environment and limits.
#[derive(Clone, Debug)]
pub struct Job {
    pub program: Program,
    pub dir: PathBuf,
    /// Variables set (or overridden) for the child.
    pub env: Vec<(String, String)>,
    /// Variables removed from the inherited environment.
    pub env_remove: Vec<String>,
    /// Start from an empty environment (then `env` is all the child gets, plus the run tag).
    pub env_clear: bool,
    pub timeout: Duration,
    pub grace: Duration,
    /// Where stdout and stderr go, interleaved as the child writes them.
    pub log: PathBuf,
    /// Also copy the output to our stderr as it is written.
    pub echo: bool,
}

impl Job {
    /// A `sh -c SCRIPT` job in `dir` logging to `log`, with the default timeout and grace.
    pub fn shell(
        script: impl Into<String>,
        dir: impl Into<PathBuf>,
        log: impl Into<PathBuf>,
    ) -> Job {
        Job::new(Program::Shell(script.into()), dir, log)
    }

    pub fn new(program: Program, dir: impl Into<PathBuf>, log: impl Into<PathBuf>) -> Job {
        Job {
            program,
            dir: dir.into(),
            env: Vec::new(),
            env_remove: Vec::new(),
            env_clear: false,
            timeout: DEFAULT_TIMEOUT,
            grace: DEFAULT_GRACE,
            log: log.into(),
            echo: false,
        }
    }

    pub fn timeout(mut self, timeout: Duration) -> Job {
        self.timeout = timeout;
        self
    }

    pub fn grace(mut self, grace: Duration) -> Job {
        self.grace = grace;
        self
    }

    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Job {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Points `TMPDIR`, `TMP` and `TEMP` at `dir`: a suite's scratch folder of its own (see
    /// [`crate::scratch::ScratchDir`]), so runs side by side cannot meet in `/tmp`.
    pub fn tmpdir(self, dir: &Path) -> Job {
        let dir = dir.display().to_string();
        self.env("TMPDIR", &dir).env("TMP", &dir).env("TEMP", dir)
    }

    pub fn echo(mut self, echo: bool) -> Job {
        self.echo = echo;
        self
    }

    /// The command line as a list, for the record.
    pub fn argv(&self) -> Vec<String> {
        match &self.program {
            Program::Shell(s) => vec!["sh".into(), "-c".into(), s.clone()],
            Program::Argv(v) => v.clone(),
        }
    }
}

/// How a run ended, as a judge reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Exit code 0.
    Passed,
    /// Any other exit code, or death by a signal we did not send.
    Failed,
    /// Still running at the timeout: its group was killed. Never a pass.
    Hang,
    /// The command could not be started (spawn failed, or the shell's 126/127).
    CouldNotStart,
    /// Stopped because the tool was interrupted.
    Interrupted,
}

/// Everything known about one finished run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub argv: Vec<String>,
    pub dir: PathBuf,
    pub start: Timestamp,
    pub end: Timestamp,
    /// Wall time, in seconds.
    pub duration_secs: f64,
    /// The exit code, when the child exited on its own.
    pub exit_code: Option<i32>,
    /// The signal that ended the child (e.g. `SIGKILL`), when one did.
    pub signal: Option<String>,
    /// The timeout passed and the group was killed.
    pub hang: bool,
    /// The tool was interrupted while this ran.
    pub interrupted: bool,
    /// Processes still alive after the child ended (in its group, escaped from it, or
    /// descended from either) that the runner had to kill.
    pub strays_killed: u32,
    /// Why the child could not be started, if it could not.
    pub spawn_error: Option<String>,
    /// Pass/fail/skip counts read from the log's closing lines.
    pub counts: Option<Counts>,
    /// Tests the runner named as failed.
    pub failed_tests: Vec<String>,
    pub log: PathBuf,
}

impl RunRecord {
    /// A record of a command not run yet (or never, with `spawn_error` set by the caller), stamped
    /// now: the one place a record starts, so every field has its neutral value.
    pub fn not_yet_run(argv: Vec<String>, dir: PathBuf, log: PathBuf) -> RunRecord {
        let now = Timestamp::now();
        RunRecord {
            argv,
            dir,
            start: now,
            end: now,
            duration_secs: 0.0,
            exit_code: None,
            signal: None,
            hang: false,
            interrupted: false,
            strays_killed: 0,
            spawn_error: None,
            counts: None,
            failed_tests: Vec::new(),
            log,
        }
    }

    pub fn outcome(&self) -> Outcome {
        if self.interrupted {
            Outcome::Interrupted
        } else if self.hang {
            Outcome::Hang
        } else if self.spawn_error.is_some() || matches!(self.exit_code, Some(126 | 127)) {
            Outcome::CouldNotStart
        } else if self.exit_code == Some(0) {
            Outcome::Passed
        } else {
            Outcome::Failed
        }
    }

    pub fn duration(&self) -> Duration {
        Duration::from_secs_f64(self.duration_secs.max(0.0))
    }

    /// How it ended in a few words: `exit 0`, `exit 1`, `SIGSEGV`, `hang`, `not started`.
    pub fn status_text(&self) -> String {
        if self.hang {
            "hang".to_string()
        } else if self.interrupted {
            "interrupted".to_string()
        } else if let Some(e) = &self.spawn_error {
            format!("not started ({e})")
        } else if let Some(code) = self.exit_code {
            format!("exit {code}")
        } else if let Some(sig) = &self.signal {
            sig.clone()
        } else {
            "unknown".to_string()
        }
    }
}

/// Pids the runner spawned itself and reaps through `std`; orphan reaping must not touch them.
fn owned() -> &'static Mutex<HashSet<i32>> {
    static OWNED: OnceLock<Mutex<HashSet<i32>>> = OnceLock::new();
    OWNED.get_or_init(Default::default)
}

/// Makes this process a child subreaper, once. Called by [`run`]; tools may call it earlier.
pub fn become_subreaper() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Without it escaped descendants go to init and can still be killed by tag; with it they
        // also stay our children, so their zombies are ours to reap.
        let _ = nix::sys::prctl::set_child_subreaper(true);
    });
}

/// A tag no other run on the machine has: this process's [`RunId`](crate::scratch::RunId)
/// (pid and start time), then a sequence number and the clock. The `PID.START` prefix is what
/// lets the next gatekit start find and kill the processes of a run that died with SIGKILL.
fn new_tag() -> String {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!(
        "{}-{}-{nanos}",
        crate::scratch::RunId::current().tag(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    )
}

/// Variables that would point a child's git at another repository than the one it runs in
/// (set when gatekit itself runs inside a git hook): a suite's `git tag` must land in the run's
/// own repository, never in the user's.
pub const GIT_REDIRECTING: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_PREFIX",
];

/// Runs `job` to the end and returns its record.
///
/// Errors only when the log cannot be created; a command that cannot start is a record with
/// `spawn_error` set, because for a judge that is an outcome ("could not start"), not a crash.
pub fn run(job: &Job) -> io::Result<RunRecord> {
    become_subreaper();
    // The session folder exists before the first child does, so that if this process dies
    // with SIGKILL the next gatekit start finds it and kills what it left running.
    crate::scratch::session()?;
    let log = File::create(&job.log)?;
    let tag = new_tag();
    let argv = job.argv();
    let mut cmd = match &job.program {
        Program::Shell(script) => {
            let mut c = Command::new("sh");
            c.arg("-c").arg(script);
            c
        }
        Program::Argv(v) if !v.is_empty() => {
            let mut c = Command::new(&v[0]);
            c.args(&v[1..]);
            c
        }
        Program::Argv(_) => {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty command"))
        }
    };
    cmd.current_dir(&job.dir)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .process_group(0);
    if job.env_clear {
        cmd.env_clear();
    }
    for key in GIT_REDIRECTING {
        cmd.env_remove(key);
    }
    for key in &job.env_remove {
        cmd.env_remove(key);
    }
    for (key, value) in &job.env {
        cmd.env(key, value);
    }
    // Nested runs (a suite that itself runs gatekit) extend the tag instead of replacing it, so
    // the outer run still recognises every descendant of the inner one as its own.
    let inherited = if job.env_clear {
        None
    } else {
        job.env
            .iter()
            .rev()
            .find(|(k, _)| k == TAG_VAR)
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var(TAG_VAR).ok())
            .filter(|v| !v.is_empty())
    };
    let tag_value = match inherited {
        Some(outer) => format!("{outer}:{tag}"),
        None => tag.clone(),
    };
    cmd.env(TAG_VAR, &tag_value);

    let started = Instant::now();
    let mut record = RunRecord::not_yet_run(argv, job.dir.clone(), job.log.clone());

    // Children we already had (a server another thread started, say) are not this run's.
    let before: HashSet<i32> = our_children();
    // Hold the lock across spawn so orphan reaping never sees this pid unowned.
    let mut owned_guard = owned().lock().unwrap_or_else(|e| e.into_inner());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            drop(owned_guard);
            record.spawn_error = Some(e.to_string());
            record.end = Timestamp::now();
            record.duration_secs = started.elapsed().as_secs_f64();
            let _ = writeln!(
                File::options().append(true).open(&job.log)?,
                "gatekit: could not start {:?}: {e}",
                record.argv
            );
            return Ok(record);
        }
    };
    let pid = child.id() as i32;
    owned_guard.insert(pid);
    drop(owned_guard);

    let echo = job.echo.then(|| Echo::start(job.log.clone()));

    let _active = Active::enter();
    let scope = Scope {
        pid,
        tag: &tag,
        before: &before,
    };
    let (tx, rx) = mpsc::channel::<io::Result<ExitStatus>>();
    thread::spawn(move || {
        let _ = tx.send(child.wait());
    });

    let deadline = started + job.timeout;
    let mut status = None;
    loop {
        let now = Instant::now();
        if now >= deadline {
            record.hang = true;
            break;
        }
        // Short slices so an interrupt is noticed quickly; the exit itself wakes us at once.
        match rx.recv_timeout((deadline - now).min(Duration::from_millis(50))) {
            Ok(s) => {
                status = Some(s);
                break;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if interrupt::requested() {
                    record.interrupted = true;
                    break;
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }

    let mut killed: BTreeSet<i32> = BTreeSet::new();
    let status = match status {
        Some(s) => s,
        None => stop(&scope, job.grace, &rx, &mut killed),
    };
    owned()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&pid);

    let strays = clean_up(&scope, &mut killed);
    record.strays_killed = strays;
    record.end = Timestamp::now();
    record.duration_secs = started.elapsed().as_secs_f64();
    match status {
        Ok(st) => {
            record.exit_code = st.code();
            record.signal = st.signal().map(signal_name);
        }
        Err(e) => record.spawn_error = Some(format!("waiting failed: {e}")),
    }
    if let Some(echo) = echo {
        echo.finish();
    }
    let text = read_tail(&job.log, 1 << 20).unwrap_or_default();
    record.counts = counts::read(&text);
    record.failed_tests = counts::failed_tests(&text);
    Ok(record)
}

/// SIGTERM to the group and the tagged strays, then SIGKILL after the grace period.
fn stop(
    scope: &Scope,
    grace: Duration,
    rx: &mpsc::Receiver<io::Result<ExitStatus>>,
    killed: &mut BTreeSet<i32>,
) -> io::Result<ExitStatus> {
    let pid = scope.pid;
    let _ = killpg(Pid::from_raw(pid), Signal::SIGTERM);
    for p in members(scope) {
        let _ = kill(Pid::from_raw(p.pid), Signal::SIGTERM);
        // Outside the group means it escaped: a stray, even if SIGTERM is enough for it.
        if p.pgid != pid {
            killed.insert(p.pid);
        }
    }
    let until = Instant::now() + grace;
    let mut status = None;
    while Instant::now() < until {
        if status.is_none() {
            if let Ok(s) = rx.recv_timeout(Duration::from_millis(20)) {
                status = Some(s);
            }
        } else {
            reap_ours(pid, killed);
            if members(scope).is_empty() {
                break;
            }
            thread::sleep(Duration::from_millis(20));
        }
    }
    let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
    match status {
        Some(s) => s,
        None => rx
            .recv()
            .unwrap_or_else(|_| Err(io::Error::other("waiter thread vanished"))),
    }
}

/// Kills whatever of the run is still alive after its main process ended; returns how many.
fn clean_up(scope: &Scope, killed: &mut BTreeSet<i32>) -> u32 {
    let pid = scope.pid;
    // Escaped processes already signalled by `stop` count, whether or not they outlived it.
    let mut strays: BTreeSet<i32> = killed.clone();
    // Rounds, because a stray may fork while we kill its siblings.
    for _ in 0..200 {
        let live = members(scope);
        if live.is_empty() {
            break;
        }
        for p in live {
            let _ = kill(Pid::from_raw(p.pid), Signal::SIGKILL);
            strays.insert(p.pid);
            killed.insert(p.pid);
        }
        thread::sleep(Duration::from_millis(2));
        reap_ours(pid, killed);
    }
    // Give the last SIGKILLs a moment to land before reaping their zombies.
    for _ in 0..50 {
        if !reap_ours(pid, killed) {
            break;
        }
        thread::sleep(Duration::from_millis(2));
    }
    strays.len() as u32
}

#[derive(Debug, Clone, Copy)]
struct Proc {
    pid: i32,
    ppid: i32,
    pgid: i32,
    zombie: bool,
}

/// Every process on the machine, from /proc.
fn scan() -> Vec<Proc> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let pid: i32 = e.ok()?.file_name().to_str()?.parse().ok()?;
        let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The command name may hold spaces and parentheses: fields start after the last ')'.
        let rest = &stat[stat.rfind(')')? + 1..];
        let mut fields = rest.split_whitespace();
        let state = fields.next()?;
        let ppid = fields.next()?.parse().ok()?;
        let pgid = fields.next()?.parse().ok()?;
        Some(Proc {
            pid,
            ppid,
            pgid,
            zombie: state == "Z" || state == "X",
        })
    })
    .collect()
}

/// Every live process whose `GATEKIT_RUN` has a `:`-separated part for which `matches` holds.
pub fn tagged_processes(matches: impl Fn(&[u8]) -> bool) -> Vec<i32> {
    let prefix = format!("{TAG_VAR}=").into_bytes();
    scan()
        .into_iter()
        .filter(|p| !p.zombie)
        .filter(|p| match fs::read(format!("/proc/{}/environ", p.pid)) {
            Ok(env) => env
                .split(|b| *b == 0)
                .filter_map(|var| var.strip_prefix(prefix.as_slice()))
                .any(|value| value.split(|b| *b == b':').any(&matches)),
            Err(_) => false,
        })
        .map(|p| p.pid)
        .collect()
}

/// Whether the process's `GATEKIT_RUN` holds `tag` among its `:`-separated runs.
fn has_tag(pid: i32, tag: &[u8]) -> bool {
    let prefix = format!("{TAG_VAR}=").into_bytes();
    match fs::read(format!("/proc/{pid}/environ")) {
        Ok(env) => env
            .split(|b| *b == 0)
            .filter_map(|var| var.strip_prefix(prefix.as_slice()))
            .any(|value| value.split(|b| *b == b':').any(|part| part == tag)),
        Err(_) => false,
    }
}

/// What identifies one run's processes.
struct Scope<'a> {
    /// The main child's pid, which is also its process group id.
    pid: i32,
    tag: &'a str,
    /// Our children from before the run started.
    before: &'a HashSet<i32>,
}

/// How many runs are in flight in this process.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

struct Active;

impl Active {
    fn enter() -> Active {
        ACTIVE.fetch_add(1, Ordering::SeqCst);
        Active
    }
}

impl Drop for Active {
    fn drop(&mut self) {
        ACTIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

fn our_children() -> HashSet<i32> {
    let me = std::process::id() as i32;
    scan()
        .into_iter()
        .filter(|p| p.ppid == me)
        .map(|p| p.pid)
        .collect()
}

/// The live processes of a run: in its group, carrying its tag, or descended from those.
///
/// One more kind is caught while this is the only run in flight: an orphan adopted by us (we
/// are the subreaper) that is in a group of its own and was not our child before the run. That
/// is a descendant that left the group, cleared its environment and lost its parent; with
/// several runs in flight it cannot be told apart from another run's, so it is left to the tag.
fn members(scope: &Scope) -> Vec<Proc> {
    let me = std::process::id() as i32;
    let my_pgid = nix::unistd::getpgrp().as_raw();
    let pid = scope.pid;
    let needle = scope.tag.as_bytes();
    let alone = ACTIVE.load(Ordering::SeqCst) <= 1;
    let owned = owned().lock().unwrap_or_else(|e| e.into_inner()).clone();
    let procs: Vec<Proc> = scan().into_iter().filter(|p| p.pid != me).collect();
    let mut set: HashSet<i32> = procs
        .iter()
        .filter(|p| {
            p.pgid == pid
                || p.pid == pid
                || (!p.zombie && has_tag(p.pid, needle))
                || (alone
                    && p.ppid == me
                    && p.pgid != my_pgid
                    && !owned.contains(&p.pid)
                    && !scope.before.contains(&p.pid))
        })
        .map(|p| p.pid)
        .collect();
    // Descendants that cleared their environment and left the group are still children of
    // someone in the set.
    let parent: HashMap<i32, i32> = procs.iter().map(|p| (p.pid, p.ppid)).collect();
    loop {
        let before = set.len();
        for p in &procs {
            if !set.contains(&p.pid) && parent.get(&p.pid).is_some_and(|pp| set.contains(pp)) {
                set.insert(p.pid);
            }
        }
        if set.len() == before {
            break;
        }
    }
    procs
        .into_iter()
        .filter(|p| !p.zombie && set.contains(&p.pid))
        .collect()
}

/// Kills what is left of every run of this process: live children we adopted as subreaper
/// (orphans in a group other than ours that no run claimed, e.g. a descendant that left its
/// group and cleared its environment while several runs were in flight) and their
/// descendants. Tools call it once, when their last run has ended, so no run leaves a process
/// behind. Returns how many it killed.
pub fn sweep() -> u32 {
    let me = std::process::id() as i32;
    let my_pgid = nix::unistd::getpgrp().as_raw();
    let owned = owned().lock().unwrap_or_else(|e| e.into_inner()).clone();
    let mut killed: BTreeSet<i32> = BTreeSet::new();
    for _ in 0..50 {
        let procs = scan();
        let mut set: HashSet<i32> = procs
            .iter()
            .filter(|p| p.ppid == me && p.pgid != my_pgid && !owned.contains(&p.pid))
            .map(|p| p.pid)
            .collect();
        loop {
            let before = set.len();
            for p in &procs {
                if set.contains(&p.ppid) {
                    set.insert(p.pid);
                }
            }
            if set.len() == before {
                break;
            }
        }
        let live: Vec<i32> = procs
            .iter()
            .filter(|p| !p.zombie && set.contains(&p.pid))
            .map(|p| p.pid)
            .collect();
        // Our adopted children's zombies (ours to reap as their subreaper).
        for p in procs
            .iter()
            .filter(|p| p.zombie && p.ppid == me && p.pgid != my_pgid && !owned.contains(&p.pid))
        {
            let _ = waitpid(Pid::from_raw(p.pid), Some(WaitPidFlag::WNOHANG));
        }
        if live.is_empty() {
            break;
        }
        for pid in live {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            killed.insert(pid);
        }
        thread::sleep(Duration::from_millis(5));
    }
    killed.len() as u32
}

/// Reaps zombies that were reparented to us from this run (its group, or pids we killed).
/// Returns whether any such zombie is still waiting.
fn reap_ours(pid: i32, killed: &BTreeSet<i32>) -> bool {
    let me = std::process::id() as i32;
    let owned = owned().lock().unwrap_or_else(|e| e.into_inner());
    let mut pending = false;
    for p in scan() {
        if p.ppid != me || owned.contains(&p.pid) {
            continue;
        }
        if p.pgid == pid || killed.contains(&p.pid) {
            if p.zombie {
                let _ = waitpid(Pid::from_raw(p.pid), Some(WaitPidFlag::WNOHANG));
            } else if killed.contains(&p.pid) {
                pending = true;
            }
        }
    }
    pending
}

fn signal_name(sig: i32) -> String {
    Signal::try_from(sig)
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|_| format!("signal {sig}"))
}

/// The last `max` bytes of a file, as text.
pub fn read_tail(path: &Path, max: u64) -> io::Result<String> {
    let mut f = File::open(path)?;
    let len = f.metadata()?.len();
    if len > max {
        f.seek(SeekFrom::Start(len - max))?;
    }
    let mut buf = Vec::new();
    f.read_to_end(&mut buf)?;
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// Copies a growing log to stderr until told to stop.
struct Echo {
    stop: Arc<AtomicBool>,
    handle: thread::JoinHandle<()>,
}

impl Echo {
    fn start(path: PathBuf) -> Echo {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let handle = thread::spawn(move || {
            let Ok(mut f) = File::open(&path) else {
                return;
            };
            let mut buf = vec![0u8; 64 * 1024];
            // Whole lines only, each made safe for a terminal: a suite's `\r` or cursor escape
            // must not rewrite what the tool printed. A line longer than the buffer goes out in
            // pieces rather than waiting for its end.
            let mut pending: Vec<u8> = Vec::new();
            let show = |bytes: &[u8]| {
                let text = String::from_utf8_lossy(bytes);
                let _ = writeln!(io::stderr(), "{}", crate::escape::terminal_line(&text));
            };
            loop {
                let done = flag.load(Ordering::SeqCst);
                loop {
                    match f.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            pending.extend_from_slice(&buf[..n]);
                            while let Some(i) = pending.iter().position(|b| *b == b'\n') {
                                show(&pending[..i]);
                                pending.drain(..=i);
                            }
                            if pending.len() > buf.len() {
                                show(&pending);
                                pending.clear();
                            }
                        }
                    }
                }
                if done {
                    if !pending.is_empty() {
                        show(&pending);
                    }
                    break;
                }
                thread::sleep(Duration::from_millis(50));
            }
        });
        Echo { stop, handle }
    }

    fn finish(self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.handle.join();
    }
}
