//! Finding a run's processes in `/proc`, stopping them and reaping what is ours.
//!
//! A run's processes are those in its group, those carrying its `GATEKIT_RUN` tag, and the
//! descendants of either: a child that called `setsid` and cleared its environment is still
//! someone's child. The tool is a subreaper, so such orphans become our children, and their
//! zombies are ours to reap; pids the runner spawned itself are [`owned`] and reaped by `std`.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fs;
use std::io;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex, Once, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, killpg, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag};
use nix::unistd::Pid;

/// The environment variable that tags a run's descendants.
pub const TAG_VAR: &str = "GATEKIT_RUN";

/// Makes this process a child subreaper, once. Called by the runner before each child starts;
/// tools may call it earlier.
pub fn become_subreaper() {
    SUBREAPER.call_once(|| {
        // Without it escaped descendants go to init and can still be killed by tag; with it they
        // also stay our children, so their zombies are ours to reap.
        let _ = nix::sys::prctl::set_child_subreaper(true);
    });
}

/// Done once this process is a child subreaper ([`become_subreaper`]).
static SUBREAPER: Once = Once::new();

/// Whether this process has made itself a child subreaper: until it has, no process it did not
/// start itself can become its child, and only the runner starts a child in a group of its own.
fn is_subreaper() -> bool {
    SUBREAPER.is_completed()
}

/// Pids the runner spawned itself and reaps through `std`; orphan reaping must not touch them.
pub(super) fn owned() -> &'static Mutex<HashSet<i32>> {
    static OWNED: OnceLock<Mutex<HashSet<i32>>> = OnceLock::new();
    OWNED.get_or_init(Default::default)
}

/// SIGTERM to the group and the tagged strays, then SIGKILL after the grace period.
pub(super) fn stop(
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
pub(super) fn clean_up(scope: &Scope, killed: &mut BTreeSet<i32>) -> u32 {
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
pub(super) struct Scope<'a> {
    /// The main child's pid, which is also its process group id.
    pub(super) pid: i32,
    pub(super) tag: &'a str,
    /// Our children from before the run started.
    pub(super) before: &'a HashSet<i32>,
}

/// How many runs are in flight in this process.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

pub(super) struct Active;

impl Active {
    pub(super) fn enter() -> Active {
        ACTIVE.fetch_add(1, Ordering::SeqCst);
        Active
    }
}

impl Drop for Active {
    fn drop(&mut self) {
        ACTIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

pub(super) fn our_children() -> HashSet<i32> {
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
    // The runner's own children and the process table are read under one lock, which `spawn`
    // holds from fork to registration: a child another run starts meanwhile is either already
    // owned or not yet in the table, never an unowned child of ours (which, taken for an
    // orphan, would be killed as this run's stray).
    let owned_now = files::sync::lock(owned());
    let alone = ACTIVE.load(Ordering::SeqCst) <= 1;
    let procs: Vec<Proc> = scan().into_iter().filter(|p| p.pid != me).collect();
    let owned = owned_now.clone();
    drop(owned_now);
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
    // A process that never ran a child through the runner has none of ours to look for, and
    // looking reads every process's `/proc` entry: half the time of a small `gate check`.
    if !is_subreaper() {
        return 0;
    }
    let me = std::process::id() as i32;
    let my_pgid = nix::unistd::getpgrp().as_raw();
    let owned = files::sync::lock(owned()).clone();
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
        reap_adopted(&procs, &owned);
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

/// Reaps the zombies of the orphans we adopted as subreaper, from any run: a child of ours
/// that is in a group other than ours (so not one of this process's own `git` and the like,
/// which `std` reaps) and that the runner did not spawn. A descendant that left its run's
/// group (`setsid`: git's detached `gc --auto` does) and ended on its own before the run did is
/// neither in the group nor killed; without this its zombie stays until the tool exits, and a
/// run of hours with suites that run git leaves thousands, against a pid limit of 32768.
/// `owned` must be the runner's set as read under its lock, held across the reaping, so a
/// child being spawned is never taken for an orphan.
fn reap_adopted(procs: &[Proc], owned: &HashSet<i32>) {
    let me = std::process::id() as i32;
    let my_pgid = nix::unistd::getpgrp().as_raw();
    for p in procs
        .iter()
        .filter(|p| p.zombie && p.ppid == me && p.pgid != my_pgid && !owned.contains(&p.pid))
    {
        let _ = waitpid(Pid::from_raw(p.pid), Some(WaitPidFlag::WNOHANG));
    }
}

/// Reaps zombies that were reparented to us: this run's (its group, or pids we killed) and
/// any other orphan we adopted (see [`reap_adopted`]). Returns whether a process we killed is
/// still to become a zombie.
fn reap_ours(pid: i32, killed: &BTreeSet<i32>) -> bool {
    let me = std::process::id() as i32;
    let owned = files::sync::lock(owned());
    let procs = scan();
    reap_adopted(&procs, &owned);
    let mut pending = false;
    for p in procs {
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
