//! How a run's jobs share the machine's cores: one GNU make jobserver for every build and
//! suite command, and a build slot for the builds that cannot use it.
//!
//! **The pool.** `cargo`, `rustc` and `cc` each start as many processes as there are cores
//! unless a jobserver tells them otherwise, so two jobs' builds on two cores would run four
//! compilers at once. Every command a job runs is handed one pool in `CARGO_MAKEFLAGS` (see
//! `runner::Job::jobserver`), the variable those three read. `MAKEFLAGS` is not set:
//! a plain `make` that found a jobserver there would run its recipes in parallel, and a suite
//! whose makefile was only ever run serially could then pass or fail by timing, a verdict the
//! tool's scheduling must never decide. As make does, each running command
//! holds one token implicitly and takes the others from the pool; the pool holds the cores
//! less one per job (at least none), so all jobs together run as many processes as there are
//! cores. The one thing a newcomer must know: the first checkout runs its baseline *alone* (the
//! others join once its build can be handed to them, see `session::warm`), so the tokens of
//! the checkouts not started yet are lent to it, and each checkout takes its token back as it joins.
//! Taking it back never waits: a helper thread reads it from the pool as soon as a command
//! releases one, so a token a killed compiler never gave back costs parallelism, never a hang.
//! A checkout that stops taking mutants (none left, or its baseline failed) gives its share back,
//! so the last checkouts still judging build with the cores the finished ones no longer use.
//! Run under `make -jN` or cargo, the tool uses that jobserver instead of a pool of its own,
//! as any jobserver client does, and takes one token from it for each checkout after the first;
//! the caller's own `MAKEFLAGS` reach the commands untouched, as they did before.
//!
//! **The build slot.** A build that does not speak the jobserver (`npm run build`, `pip
//! install`, a shell script) is taken to use every core, as those tools do. Two of them at
//! once only fight for the cores and both finish late, so such builds take the one build slot:
//! the builds of different jobs never overlap, while the other jobs' suites keep running. A
//! build the pool already keeps within the cores (its command is `cargo`) takes no slot, so
//! `--jobs` builds Rust in parallel as cargo-mutants users expect. With `--jobs` above the
//! cores there is no slot either: the operator has said the suites wait more than they
//! compute, and serialising their builds would undo that choice. The wait for the slot is not
//! the build's time: the build's timeout starts when it is spawned, and an interrupt ends the
//! wait at once.

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

use jobserver::{Acquired, Client, HelperThread};

/// What the jobs of one run share: the jobserver pool and the build slot, each when there is one.
#[derive(Debug, Default)]
pub(crate) struct Cores {
    pool: Option<Pool>,
    slot: Option<Slot>,
}

/// Where a run's pool came from, for the note the session prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Jobserver {
    /// A pool of the tool's own with this many tokens.
    Own { tokens: usize },
    /// The jobserver of the make or cargo that runs the tool.
    Inherited,
}

#[derive(Debug)]
struct Pool {
    client: Client,
    origin: Jobserver,
    /// Tokens taken back for checkouts that joined, held until each checkout leaves.
    taker: Mutex<Option<HelperThread>>,
    held: Arc<Mutex<Held>>,
    /// How many tokens are still to be taken back (one per copy that has not joined).
    owed: Mutex<usize>,
}

/// The tokens taken back from the pool for the checkouts running.
#[derive(Debug, Default)]
struct Held {
    tokens: Vec<Acquired>,
    /// Tokens asked for by checkouts that left before theirs arrived: each goes straight back.
    unwanted: usize,
}

/// What one checkout holds of the cores, given back by [`Cores::leave`] when it stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Share {
    /// The first checkout: its command's implicit token, which the pool never held.
    First,
    /// A checkout that took a token back from the pool when it joined.
    Token,
    /// A checkout beyond the cores: the pool had no token for it.
    Nothing,
}

impl Cores {
    /// The pool and slot for `copies` jobs on `cores` cores. `inherited` is the caller's own
    /// jobserver (see [`inherited`]); `jobserver: false` hands the commands none (each build
    /// may then use every core, as before the pool existed).
    pub(crate) fn new(
        cores: usize,
        copies: usize,
        jobserver: bool,
        inherited: Option<Client>,
    ) -> std::io::Result<Cores> {
        let pool = match (jobserver, inherited) {
            (false, _) => None,
            (true, Some(client)) => Some(Pool::new(
                client,
                Jobserver::Inherited,
                copies.saturating_sub(1),
            )),
            (true, None) => {
                let tokens = cores.saturating_sub(1);
                let lent = tokens.min(copies.saturating_sub(1));
                Some(Pool::new(
                    Client::new(tokens)?,
                    Jobserver::Own { tokens },
                    lent,
                ))
            }
        };
        Ok(Cores {
            pool,
            slot: (copies > 1 && copies <= cores).then(Slot::default),
        })
    }

    /// Where the pool came from; `None` without one.
    pub(crate) fn origin(&self) -> Option<Jobserver> {
        self.pool.as_ref().map(|p| p.origin)
    }

    /// Whether builds take the slot at all (more than one job, no more jobs than cores).
    pub(crate) fn has_slot(&self) -> bool {
        self.slot.is_some()
    }

    /// The jobserver every command of the run is handed.
    pub(crate) fn client(&self) -> Option<&Client> {
        self.pool.as_ref().map(|p| &p.client)
    }

    /// A checkout after the first starts: its token is taken back from the pool (by a helper
    /// thread, without waiting; see the module's note).
    pub(crate) fn join(&self) -> Share {
        match &self.pool {
            Some(pool) if pool.take_back() => Share::Token,
            _ => Share::Nothing,
        }
    }

    /// A checkout stops taking mutants: what it held goes back to the pool, for the checkouts still
    /// running. The first checkout's implicit token becomes one more in a pool of the tool's own;
    /// a caller's jobserver gets back only tokens taken from it, never one more.
    pub(crate) fn leave(&self, share: Share) {
        let Some(pool) = &self.pool else {
            return;
        };
        match share {
            Share::First if matches!(pool.origin, Jobserver::Own { .. }) => {
                // A write to the pool's own pipe; failing it only keeps the core idle.
                let _ = pool.client.release_raw();
            }
            Share::Token => {
                let mut held = lock(&pool.held);
                match held.tokens.pop() {
                    Some(token) => drop(token),
                    // Still on its way: the helper gives it back when it comes.
                    None => held.unwanted += 1,
                }
            }
            Share::First | Share::Nothing => {}
        }
    }

    /// Waits for the build slot when `build` needs it (see the module's note), until it is free
    /// or the run is interrupted (`None`: the build must not start). Holding the returned
    /// guard holds the slot.
    pub(crate) fn build_slot(&self, build: &str) -> Option<SlotGuard<'_>> {
        match &self.slot {
            Some(slot) if !speaks_jobserver(build) => slot.take(),
            _ => Some(SlotGuard(None)),
        }
    }
}

/// The one suite run's hook into the cores: every command gets the pool, and a build that
/// cannot use it runs in the build slot (an interrupt during the wait: it never starts).
impl candidate::suite::Share for Cores {
    fn hand(&self, job: runner::Job) -> runner::Job {
        match self.client() {
            Some(client) => job.jobserver(client.clone()),
            None => job,
        }
    }

    fn build_turn(
        &self,
        build: &str,
        build_it: &mut dyn FnMut() -> std::io::Result<report::RunRecord>,
    ) -> Option<std::io::Result<report::RunRecord>> {
        let _slot = self.build_slot(build)?;
        Some(build_it())
    }
}

impl Pool {
    fn new(client: Client, origin: Jobserver, owed: usize) -> Pool {
        Pool {
            client,
            origin,
            taker: Mutex::new(None),
            held: Arc::default(),
            owed: Mutex::new(owed),
        }
    }

    /// Asks for one lent token back; `false` when none is owed (or no helper could start).
    fn take_back(&self) -> bool {
        let mut owed = lock(&self.owed);
        if *owed == 0 {
            return false;
        }
        *owed -= 1;
        let mut taker = lock(&self.taker);
        if taker.is_none() {
            let held = Arc::clone(&self.held);
            // A read error (the pool closed under us) only leaves the token lent.
            let started = self.client.clone().into_helper_thread(move |token| {
                if let Ok(token) = token {
                    let mut held = lock(&held);
                    if held.unwanted > 0 {
                        held.unwanted -= 1;
                        drop(token);
                    } else {
                        held.tokens.push(token);
                    }
                }
            });
            match started {
                Ok(helper) => *taker = Some(helper),
                Err(_) => return false,
            }
        }
        if let Some(helper) = taker.as_ref() {
            helper.request_token();
        }
        true
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // The helper first (it stops waiting for tokens), then the tokens it took go back: a
        // make that runs the tool gets every one of them again.
        drop(lock(&self.taker).take());
        lock(&self.held).tokens.clear();
    }
}

/// Whether `build` is a command the pool keeps within the cores: one `cargo` command (after any
/// `VAR=value` words or `env`), which reads the pool from `CARGO_MAKEFLAGS`. Anything else (a
/// compound script, `make`, `npm`, `pip`) is assumed to use every core.
pub(crate) fn speaks_jobserver(build: &str) -> bool {
    let program = build
        .split_whitespace()
        .find(|w| *w != "env" && !w.contains('='))
        .unwrap_or("");
    let name = program.rsplit('/').next().unwrap_or(program);
    let single = !build.contains([';', '&', '|', '\n', '`', '$', '(']);
    single && name == "cargo"
}

/// This process's jobserver, when a make or cargo that runs it handed one down and its pipe is
/// really open here (a recipe without `+` gets the variables but not the pipe).
pub(crate) fn inherited() -> Option<Client> {
    // SAFETY: the descriptors the variables name are checked to be open pipes
    // (`check_pipe`), and the session asks before it opens any file of its own, so they are
    // still the ones make passed down.
    unsafe { Client::from_env_ext(true) }.client.ok()
}

/// The machine's cores as this process may use them (affinity and cgroup quotas included).
pub(crate) fn available() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// One build at a time, across all jobs.
#[derive(Debug, Default)]
struct Slot {
    busy: Mutex<bool>,
    freed: Condvar,
}

/// How often a job waiting for the slot looks at the interrupt flag.
const POLL: Duration = Duration::from_millis(50);

impl Slot {
    fn take(&self) -> Option<SlotGuard<'_>> {
        let mut busy = lock(&self.busy);
        // The flag is read before the slot, every time: a job woken because the holder was
        // killed by the interrupt must not start its build either.
        loop {
            if files::interrupt::requested() {
                return None;
            }
            if !*busy {
                break;
            }
            busy = self
                .freed
                .wait_timeout(busy, POLL)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        *busy = true;
        Some(SlotGuard(Some(self)))
    }
}

/// The build slot, held until dropped (or no slot at all, for a build that needs none).
#[derive(Debug)]
pub(crate) struct SlotGuard<'a>(Option<&'a Slot>);

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        if let Some(slot) = self.0 {
            *lock(&slot.busy) = false;
            slot.freed.notify_one();
        }
    }
}

use files::sync::lock;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_speaks_the_jobserver_and_nothing_else_does() {
        for yes in [
            "cargo build --tests",
            "CARGO_TARGET_DIR=t cargo test --no-run",
            "env RUSTFLAGS=-Dwarnings /usr/bin/cargo build",
        ] {
            assert!(speaks_jobserver(yes), "{yes}");
        }
        for no in [
            "npm run build",
            "pip install -e .",
            "sh build.sh",
            "cd sub && cargo build",
            "cargo build; npm run build",
            "cargo build | tee log",
            "",
            "make -j",
            "cargo-nextest run",
        ] {
            assert!(!speaks_jobserver(no), "{no}");
        }
    }

    #[test]
    fn the_pool_holds_the_cores_less_one_and_lends_what_later_copies_take_back() {
        let cores = Cores::new(4, 2, true, None).unwrap();
        assert_eq!(cores.origin(), Some(Jobserver::Own { tokens: 3 }));
        assert_eq!(*lock(&cores.pool.as_ref().unwrap().owed), 1);
        // More copies than cores: every token is lent, and taken back, none left.
        let many = Cores::new(2, 8, true, None).unwrap();
        assert_eq!(many.origin(), Some(Jobserver::Own { tokens: 1 }));
        assert_eq!(*lock(&many.pool.as_ref().unwrap().owed), 1);
        let one = Cores::new(1, 1, true, None).unwrap();
        assert_eq!(one.origin(), Some(Jobserver::Own { tokens: 0 }));
        assert_eq!(Cores::new(4, 2, false, None).unwrap().origin(), None);
    }

    #[test]
    fn a_joining_copy_takes_its_token_back_from_the_pool() {
        let cores = Cores::new(3, 2, true, None).unwrap();
        let client = cores.client().unwrap().clone();
        assert_eq!(client.available().unwrap(), 2);
        cores.join();
        let pool = cores.pool.as_ref().unwrap();
        // The helper thread reads it; wait for that.
        wait_held(&cores, 1);
        assert_eq!(client.available().unwrap(), 1);
        // Owed nothing more: a second join takes nothing.
        cores.join();
        assert_eq!(*lock(&pool.owed), 0);
        drop(cores);
        assert_eq!(
            client.available().unwrap(),
            2,
            "the token goes back at the end"
        );
    }

    /// Waits until `done` (bounded, not a timed assertion: a helper thread acts on its own).
    fn wait_until(what: &str, done: impl Fn() -> bool) {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !done() {
            assert!(std::time::Instant::now() < deadline, "{what}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Waits until the helper holds `n` tokens taken back.
    fn wait_held(cores: &Cores, n: usize) {
        let pool = cores.pool.as_ref().unwrap();
        wait_until("no token taken back", || lock(&pool.held).tokens.len() == n);
    }

    #[test]
    fn a_copy_that_stops_gives_its_token_back_to_the_copies_still_running() {
        let cores = Cores::new(3, 2, true, None).unwrap();
        let client = cores.client().unwrap().clone();
        assert_eq!(cores.join(), Share::Token);
        wait_held(&cores, 1);
        assert_eq!(client.available().unwrap(), 1);
        cores.leave(Share::Token);
        assert_eq!(client.available().unwrap(), 2, "the token stays held");
        // The first checkout leaving too: its implicit token joins the pool of the tool's own.
        cores.leave(Share::First);
        assert_eq!(client.available().unwrap(), 3);
    }

    #[test]
    fn a_copy_beyond_the_cores_has_nothing_to_give_back() {
        let cores = Cores::new(2, 3, true, None).unwrap();
        let client = cores.client().unwrap().clone();
        assert_eq!(cores.join(), Share::Token);
        assert_eq!(cores.join(), Share::Nothing);
        wait_held(&cores, 1);
        cores.leave(Share::Nothing);
        assert_eq!(client.available().unwrap(), 0);
    }

    #[test]
    fn a_callers_jobserver_gets_back_only_the_tokens_taken_from_it() {
        let caller = Client::new(1).unwrap();
        let cores = Cores::new(2, 2, true, Some(caller.clone())).unwrap();
        assert_eq!(cores.origin(), Some(Jobserver::Inherited));
        cores.leave(Share::First);
        assert_eq!(
            caller.available().unwrap(),
            1,
            "a token added to the caller's pool"
        );
        assert_eq!(cores.join(), Share::Token);
        wait_held(&cores, 1);
        assert_eq!(caller.available().unwrap(), 0);
        cores.leave(Share::Token);
        assert_eq!(caller.available().unwrap(), 1);
    }

    #[test]
    fn a_copy_that_stops_before_its_token_came_gives_it_back_when_it_comes() {
        let cores = Cores::new(2, 2, true, None).unwrap();
        let client = cores.client().unwrap().clone();
        // The one token is busy with a command: the joining checkout's request waits for it.
        let busy = client.acquire().unwrap();
        assert_eq!(cores.join(), Share::Token);
        cores.leave(Share::Token);
        drop(busy);
        // The helper reads the token and, the checkout gone, puts it straight back.
        let pool = cores.pool.as_ref().unwrap();
        wait_until("the token never came", || lock(&pool.held).unwanted == 0);
        assert!(lock(&pool.held).tokens.is_empty(), "the token was kept");
        assert_eq!(
            client.available().unwrap(),
            1,
            "the token was not given back"
        );
    }

    #[test]
    fn a_token_never_given_back_does_not_hold_up_the_end_of_the_run() {
        // Two cores, two copies: the one token is lent; a command that died holding it (here:
        // the test, which keeps it) never gives it back, and the run must still end.
        let cores = Cores::new(2, 2, true, None).unwrap();
        let lost = cores.client().unwrap().acquire().unwrap();
        cores.join();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            drop(cores);
            let _ = tx.send(());
        });
        assert!(
            rx.recv_timeout(Duration::from_secs(20)).is_ok(),
            "dropping the pool waited for a token that never came"
        );
        drop(lost);
    }

    #[test]
    fn builds_take_the_slot_only_with_several_jobs_within_the_cores() {
        assert!(Cores::new(2, 2, true, None).unwrap().has_slot());
        assert!(!Cores::new(2, 1, true, None).unwrap().has_slot());
        assert!(!Cores::new(2, 3, true, None).unwrap().has_slot());
        // The jobserver off changes nothing about the slot.
        assert!(Cores::new(4, 2, false, None).unwrap().has_slot());
    }

    #[test]
    fn the_slot_admits_one_build_at_a_time_and_cargo_needs_none() {
        let cores = Cores::new(2, 2, true, None).unwrap();
        let held = cores.build_slot("npm run build").unwrap();
        assert!(held.0.is_some());
        // In a thread of its own, so a cargo build that waited for the slot fails the test
        // instead of hanging it.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::scope(|s| {
            s.spawn(|| {
                let _ = tx.send(cores.build_slot("cargo build").map(|g| g.0.is_none()));
            });
            let got = rx.recv_timeout(Duration::from_secs(10));
            if got.is_err() {
                // Let the waiting thread through so the scope can end, then fail.
                *lock(&cores.slot.as_ref().unwrap().busy) = false;
                cores.slot.as_ref().unwrap().freed.notify_all();
            }
            assert_eq!(got, Ok(Some(true)), "cargo waits for no slot");
        });
        let slot = cores.slot.as_ref().unwrap();
        assert!(*lock(&slot.busy));
        drop(held);
        assert!(!*lock(&slot.busy));
        assert!(cores.build_slot("sh build.sh").is_some());
    }
}
