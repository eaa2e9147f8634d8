//! The process runner every gatekit tool uses to run a child command, and what it needs around
//! it: the per-process [`scratch`] folders, the clean-up of what a killed run left
//! ([`stale`]), and the typed [`stop`] errors a run and its callers raise.
//!
//! A crate of its own so that the code that starts processes (candidate's setup steps, every
//! tool's suites) depends on no command-line parser, progress bar or renderer: it hands back
//! the raw [`Finished`] record of a run, and the code that owns records (`report`) reads test
//! counts out of its log and judges it.
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
//!
//! A caller may also watch the output as it is written ([`Job::watch`], an [`Observer`] fed
//! each line of the log by the same tailer that echoes it) and ask for the run to stop: the
//! group is then stopped as a hung one is, and the record says [`Ended::Stopped`] (a failure,
//! never a pass). What the lines mean is the observer's business, never the runner's.
//!
//! [`run`] is the whole contract for a batch command. An interactive child (an MCP server a
//! client talks to over stdin and stdout) takes the [piped mode](start_piped) instead: the same
//! tag, group, environment, timeout, interrupt check and strays killed, with the two pipes
//! handed to the caller, stderr to the log, and the record when the caller is done. Finding a
//! run's processes in `/proc`, killing them and reaping their zombies is the `procs` module's concern.

use std::collections::{BTreeSet, HashSet};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use nix::sys::signal::Signal;
use serde::{Deserialize, Serialize};

use files::interrupt;

mod ended;
mod piped;
mod procs;
pub mod scratch;
pub mod stale;
pub mod stop;
mod tail;

pub use ended::{Ended, Outcome, Status};
pub use piped::{start_piped, Piped, STDERR_KEPT};
pub use procs::{become_subreaper, sweep, tagged_processes, TAG_VAR};
use tail::Tail;
pub use tail::{Observer, Watch};

/// The default timeout when a caller gives none (suites default to 30 minutes).
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
#[derive(Clone)]
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
    /// A GNU make jobserver the child shares: `CARGO_MAKEFLAGS` names it (what cargo, rustc
    /// and cc read), and its two pipe ends are inherited by this child alone. `MAKEFLAGS` is
    /// left as it is: handed to make it would turn a serial makefile parallel. A
    /// `CARGO_MAKEFLAGS` the job sets itself wins.
    pub jobserver: Option<jobserver::Client>,
    /// Watches the output as it is written and may stop the run (see [`Observer`]).
    pub watch: Option<Watch>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job")
            .field("program", &self.program)
            .field("dir", &self.dir)
            .field("env", &self.env)
            .field("env_remove", &self.env_remove)
            .field("env_clear", &self.env_clear)
            .field("timeout", &self.timeout)
            .field("grace", &self.grace)
            .field("log", &self.log)
            .field("echo", &self.echo)
            .field("jobserver", &self.jobserver)
            .field("watch", &self.watch.as_ref().map(|_| "an observer"))
            .finish()
    }
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
            jobserver: None,
            watch: None,
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
    /// [`scratch::ScratchDir`]), so runs side by side cannot meet in `/tmp`.
    pub fn tmpdir(self, dir: &Path) -> Job {
        let dir = dir.display().to_string();
        self.env("TMPDIR", &dir).env("TMP", &dir).env("TEMP", dir)
    }

    pub fn echo(mut self, echo: bool) -> Job {
        self.echo = echo;
        self
    }

    /// Hands each line of the output to `watch` as it is written; it may stop the run.
    pub fn watch(mut self, watch: Watch) -> Job {
        self.watch = Some(watch);
        self
    }

    /// Hands the child `client`'s jobserver (see the `jobserver` field).
    pub fn jobserver(mut self, client: jobserver::Client) -> Job {
        self.jobserver = Some(client);
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

/// Everything the runner knows about one finished run: how the process ended, never what its
/// output says (reading a log is the record's business, in `report`).
#[derive(Clone, Debug, PartialEq)]
pub struct Finished {
    pub argv: Vec<String>,
    pub dir: PathBuf,
    pub start: SystemTime,
    pub end: SystemTime,
    /// Wall time, in seconds.
    pub duration_secs: f64,
    /// How the run ended.
    pub ended: Ended,
    /// Processes still alive after the child ended (in its group, escaped from it, or
    /// descended from either) that the runner had to kill.
    pub strays_killed: u32,
    pub log: PathBuf,
}

impl Finished {
    /// A run that has not started yet, stamped now, every field at its neutral value.
    fn starting(job: &Job) -> Finished {
        let now = SystemTime::now();
        Finished {
            argv: job.argv(),
            dir: job.dir.clone(),
            start: now,
            end: now,
            duration_secs: 0.0,
            ended: Ended::Exited(Status::default()),
            strays_killed: 0,
            log: job.log.clone(),
        }
    }

    /// How the process ended (see [`Ended::outcome`]).
    pub fn outcome(&self) -> Outcome {
        self.ended.outcome()
    }
}

/// A tag no other run on the machine has: this process's [`RunId`](scratch::RunId)
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
        scratch::RunId::current().tag(),
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

/// The command for `job`, in its own process group, with its environment and a fresh run tag
/// (returned too: it is what finds the run's strays). Its standard streams are the caller's.
fn command(job: &Job) -> io::Result<(Command, String)> {
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
    cmd.current_dir(&job.dir).process_group(0);
    if job.env_clear {
        cmd.env_clear();
    }
    // Before the job's own variables, so a suite's own wins. The pipe ends are close-on-exec
    // in this process; the crate clears that flag in this child only (after the fork), so no
    // other child, started at the same moment by another thread, inherits them.
    if let Some(client) = &job.jobserver {
        client.configure(&mut cmd);
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
    let tag = new_tag();
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
    Ok((cmd, tag))
}

/// A child that was started, and what identifies its processes.
struct Started {
    child: Child,
    tag: String,
    /// Our children from before it started: a server another thread started is not its own.
    before: HashSet<i32>,
    at: Instant,
}

/// Spawns `cmd` and records its pid as the runner's own (see [`procs::owned`]).
fn spawn(mut cmd: Command, tag: String) -> io::Result<Started> {
    become_subreaper();
    // The session folder exists before the first child does, so that if this process dies
    // with SIGKILL the next gatekit start finds it and kills what it left running.
    scratch::session()?;
    let before = procs::our_children();
    let at = Instant::now();
    // Hold the lock across spawn so orphan reaping never sees this pid unowned.
    let mut owned = files::sync::lock(procs::owned());
    let child = cmd.spawn()?;
    owned.insert(child.id() as i32);
    Ok(Started {
        child,
        tag,
        before,
        at,
    })
}

/// Appends the reason a command could not start to its log, where a reader looks first.
fn log_spawn_error(log: &Path, argv: &[String], e: &io::Error) -> io::Result<()> {
    writeln!(
        File::options().append(true).open(log)?,
        "gatekit: could not start {argv:?}: {e}"
    )
}

/// Why waiting for a child ended before it exited.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cut {
    Hang,
    Interrupted,
    /// The caller asked (a piped child's owner is done with it).
    Asked,
    /// The run's observer asked: stopped as a hang is, recorded as stopped.
    Stopped,
}

/// Waits for the child (whose exit `status` delivers) until it exits, `deadline` passes, an
/// interrupt arrives, or `asked` is set (`asked_is` says by whom); then stops what is left of
/// the run, kills its strays and fills in `record`.
fn supervise(
    started: Started,
    deadline: Instant,
    grace: Duration,
    (asked, asked_is): (&AtomicBool, Cut),
    mut record: Finished,
) -> Finished {
    let Started {
        mut child,
        tag,
        before,
        at,
    } = started;
    let pid = child.id() as i32;
    let _active = procs::Active::enter();
    let scope = procs::Scope {
        pid,
        tag: &tag,
        before: &before,
    };
    let (tx, rx) = mpsc::channel::<io::Result<ExitStatus>>();
    thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let mut status = None;
    let mut cut = None;
    while status.is_none() && cut.is_none() {
        let now = Instant::now();
        if now >= deadline {
            cut = Some(Cut::Hang);
            break;
        }
        // Short slices so an interrupt is noticed quickly; the exit itself wakes us at once.
        match rx.recv_timeout((deadline - now).min(Duration::from_millis(50))) {
            Ok(s) => status = Some(s),
            Err(mpsc::RecvTimeoutError::Timeout) if interrupt::requested() => {
                cut = Some(Cut::Interrupted)
            }
            Err(mpsc::RecvTimeoutError::Timeout) if asked.load(Ordering::SeqCst) => {
                cut = Some(asked_is)
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }

    let mut killed: BTreeSet<i32> = BTreeSet::new();
    let status = match status {
        Some(s) => s,
        None => procs::stop(&scope, grace, &rx, &mut killed),
    };
    files::sync::lock(procs::owned()).remove(&pid);

    record.strays_killed = procs::clean_up(&scope, &mut killed);
    record.end = SystemTime::now();
    record.duration_secs = at.elapsed().as_secs_f64();
    let status = match status {
        Ok(st) => Ok(Status {
            exit_code: st.code(),
            signal: st.signal().map(signal_name),
        }),
        Err(e) => Err(format!("waiting failed: {e}")),
    };
    record.ended = match (cut, status) {
        (Some(Cut::Hang), status) => Ended::Hang(status.unwrap_or_default()),
        (Some(Cut::Interrupted), status) => Ended::Interrupted(status.unwrap_or_default()),
        (Some(Cut::Stopped), status) => Ended::Stopped(status.unwrap_or_default()),
        (_, Ok(status)) => Ended::Exited(status),
        (_, Err(why)) => Ended::CouldNotStart {
            why,
            status: Status::default(),
        },
    };
    record
}

/// Runs `job` to the end and returns what the runner saw of it (`report`'s record of a run
/// adds what its log says).
///
/// Errors only when the log cannot be created; a command that cannot start is a record with
/// [`Ended::CouldNotStart`], because for a judge that is an outcome ("could not start"), not a crash.
pub fn run(job: &Job) -> io::Result<Finished> {
    let log = files::outputs::create(&job.log)?;
    let (mut cmd, tag) = command(job)?;
    cmd.stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log);
    let mut record = Finished::starting(job);
    let started = match spawn(cmd, tag) {
        Ok(started) => started,
        Err(e) => {
            record.ended = Ended::CouldNotStart {
                why: e.to_string(),
                status: Status::default(),
            };
            record.end = SystemTime::now();
            log_spawn_error(&job.log, &record.argv, &e)?;
            return Ok(record);
        }
    };
    // Only its observer can ask a plain run to stop; without one it ends by itself, by its
    // timeout or by Ctrl-C.
    let asked = Arc::new(AtomicBool::new(false));
    let tail = (job.echo || job.watch.is_some()).then(|| {
        Tail::start(
            job.log.clone(),
            job.echo,
            job.watch.clone(),
            Arc::clone(&asked),
            started.at,
        )
    });
    let deadline = started.at + job.timeout;
    let record = supervise(started, deadline, job.grace, (&asked, Cut::Stopped), record);
    if let Some(tail) = tail {
        tail.finish();
    }
    Ok(record)
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
