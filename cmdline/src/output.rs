//! The one output seam of the three tools, as nextest's reporter is: a tool's run hands typed
//! events to a [`Reporter`], the tool's renderer ([`Render`]) says what each one reads as, and
//! the reporter writes it where it goes: the live progress line, a note on stderr, or stdout.
//! A finished record is shown through [`Document`], one rendering per `--format`.
//!
//! Run, session, search and driver code never formats or prints a line (the layout check
//! forbids print macros there): it says what happened as a value of its own event type, and
//! this module is the only writer of stderr for a run and, with [`crate::exit::print`], of
//! stdout. [`Reporter::finish`] is where every tool's run ends: the live line goes, stdout is
//! flushed, and the exit code is the verdict whatever happened to stdout (a reader that went
//! away, a full disk behind a redirect), unless a report file the run owed failed to land.
//!
//! The reporter is generic over the renderer, and the renderer over the tool's own event
//! types (`impl Render<Note> for Lines`, `impl<'a> Render<Event<'a>> for Lines`), so no event
//! type of any tool is named here.

use report::{ColorChoice, Format, Painter};

use crate::exit::{self, Exit};
use crate::progress::Progress;

/// What an event reads as, and where it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shown {
    /// Nothing is shown for it.
    Nothing,
    /// A line (or lines) on stderr that a run has to say whatever `--format` is: a note, a
    /// warning, why a baseline failed. Above the live line on a terminal.
    Note(String),
    /// One step of the current loop finished, and its line: counted on the progress line,
    /// printed above it (on its own line off a terminal); hidden when the reporter is quiet.
    Step(String),
    /// What is running now: the live line's text on a terminal; nothing elsewhere.
    Status(String),
}

/// A tool's renderer for events of type `E`: what each reads as. One renderer may read many
/// event types (its run's steps, its notes); the words of every line are here, once.
pub trait Render<E: ?Sized> {
    fn render(&self, event: &E) -> Shown;
}

/// A finished record, in each format a tool prints on stdout: one renderer per format.
pub trait Document {
    /// The text a reviewer reads in a terminal; `paint` colours it when stdout takes colour.
    fn text(&self, paint: Painter) -> String;
    /// GitHub-flavoured Markdown for a pull request.
    fn markdown(&self) -> String;
    /// The JSON record, as written to its file.
    fn json(&self) -> anyhow::Result<String>;
}

/// The one writer of a run's output: the live progress line and notes on stderr, and stdout.
/// `R` is the tool's renderer.
#[derive(Debug)]
pub struct Reporter<R> {
    renderer: R,
    color: ColorChoice,
    /// Progress hidden (JSON on stdout, `--quiet`): steps and statuses are not shown; notes are.
    quiet: bool,
    /// The current loop's progress line, from [`Reporter::steps`] on.
    progress: Option<Progress>,
    /// Report files the run owed that could not be written (see [`Reporter::failed`]).
    failed: Vec<anyhow::Error>,
}

impl<R> Reporter<R> {
    /// A reporter that renders with `renderer`, colours stdout by `color`, and shows no
    /// progress when `quiet`.
    pub fn new(renderer: R, color: ColorChoice, quiet: bool) -> Reporter<R> {
        Reporter {
            renderer,
            color,
            quiet,
            progress: None,
            failed: Vec::new(),
        }
    }

    /// The renderer, for a caller that needs a line it renders (a test, a summary).
    pub fn renderer(&self) -> &R {
        &self.renderer
    }

    /// The renderer, to change what it knows as a run goes (the total of a loop, colour).
    pub fn renderer_mut(&mut self) -> &mut R {
        &mut self.renderer
    }

    /// A new loop of `total` steps starts: a fresh progress line (the last one taken away).
    pub fn steps(&mut self, total: usize) {
        self.clear();
        self.progress = Some(Progress::new(total, self.quiet));
    }

    /// At most `more` steps follow the finished ones: the loop's total grows to cover them.
    pub fn expect_more(&mut self, more: usize) {
        self.loop_of(0).expect_more(more);
    }

    /// Shows `event` as the renderer reads it.
    pub fn emit<E: ?Sized>(&mut self, event: &E)
    where
        R: Render<E>,
    {
        match self.renderer.render(event) {
            Shown::Nothing => {}
            Shown::Note(text) => self.note(&text),
            Shown::Step(line) => self.loop_of(0).finished(&line),
            Shown::Status(line) => {
                if let Some(p) = &mut self.progress {
                    p.status(&line);
                }
            }
        }
    }

    /// Runs `work`, a step that blocks, under the line `started` reads as: redrawn with its
    /// elapsed time on a terminal, one plain line as it starts elsewhere. Returns what `work`
    /// returns.
    pub fn during<E: ?Sized, T>(&mut self, started: &E, work: impl FnOnce() -> T) -> T
    where
        R: Render<E>,
    {
        match self.renderer.render(started) {
            Shown::Nothing => work(),
            Shown::Note(line) | Shown::Step(line) | Shown::Status(line) => {
                self.loop_of(1).during(&line, work)
            }
        }
    }

    /// Takes the live line off the screen (a loop ended).
    pub fn clear(&mut self) {
        if let Some(mut p) = self.progress.take() {
            p.clear();
        }
    }

    /// Writes `text` (data a command was asked for) to stdout: a closed pipe is not an error
    /// (see [`exit::print`]); any other failure is.
    pub fn print(&mut self, text: &str) -> std::io::Result<()> {
        self.clear();
        exit::print(text)
    }

    /// Shows on stdout a report whose files are written: no failure to write stdout is an
    /// error or changes the exit code (see [`exit::show`]).
    pub fn show(&mut self, text: &str) {
        self.clear();
        exit::show(text);
    }

    /// Shows `document` on stdout in `format`, its text painted when stdout takes colour.
    pub fn show_document(
        &mut self,
        document: &impl Document,
        format: Format,
    ) -> anyhow::Result<()> {
        let text = match format {
            Format::Json => document.json()?,
            Format::Markdown => document.markdown(),
            Format::Text => document.text(Painter::new(self.color.for_stdout())),
        };
        self.show(&text);
        Ok(())
    }

    /// Whether stdout's reader went away during this run.
    pub fn stdout_closed(&self) -> bool {
        exit::stdout_closed()
    }

    /// A file the run owed could not be written (`error`, said by the caller): a passing
    /// verdict cannot stand at [`Reporter::finish`] (see [`exit::after_writing`]).
    pub fn failed(&mut self, error: anyhow::Error) {
        self.failed.push(error);
    }

    /// Where a tool's run ends: the live line taken away, stdout flushed (a closed one is
    /// noted, never an error), and the exit code the verdict, unless a report file failed to
    /// be written (then a pass is that failure's code, 74 for an I/O error).
    pub fn finish(mut self, verdict: Exit) -> Exit {
        self.clear();
        let _ = exit::print("");
        exit::after_writing(verdict, &self.failed)
    }

    /// The loop under way, or one of `total` steps begun for a step said outside any loop.
    fn loop_of(&mut self, total: usize) -> &mut Progress {
        let quiet = self.quiet;
        self.progress
            .get_or_insert_with(|| Progress::new(total, quiet))
    }

    /// Lines on stderr, above the live line when there is one; every line made safe to print
    /// (colour codes pass, nothing else that moves the cursor).
    fn note(&mut self, text: &str) {
        for line in text.lines() {
            match &mut self.progress {
                Some(p) => p.note(line),
                None => crate::errln!("{}", crate::progress::safe(line)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    enum Ev {
        Said(&'static str),
        Done(u32),
        Now,
        Silent,
    }

    struct Lines;

    impl Render<Ev> for Lines {
        fn render(&self, e: &Ev) -> Shown {
            match e {
                Ev::Said(s) => Shown::Note(format!("tool: {s}")),
                Ev::Done(n) => Shown::Step(format!("step {n}")),
                Ev::Now => Shown::Status("running".into()),
                Ev::Silent => Shown::Nothing,
            }
        }
    }

    #[test]
    fn events_of_the_tools_own_type_are_read_by_its_renderer() {
        let mut r = Reporter::new(Lines, ColorChoice::Never, true);
        r.emit(&Ev::Said("x"));
        r.emit(&Ev::Silent);
        r.emit(&Ev::Now);
        r.steps(2);
        r.emit(&Ev::Done(1));
        assert_eq!(r.during(&Ev::Now, || 7), 7);
        assert_eq!(r.during(&Ev::Silent, || "w"), "w");
        assert_eq!(
            r.renderer().render(&Ev::Done(3)),
            Shown::Step("step 3".into())
        );
        assert_eq!(r.finish(Exit::Findings), Exit::Findings);
    }

    #[test]
    fn a_report_file_that_failed_to_land_keeps_a_pass_from_standing() {
        let mut r = Reporter::new(Lines, ColorChoice::Never, true);
        r.failed(anyhow::anyhow!("writing results.json"));
        assert_ne!(r.finish(Exit::Ok), Exit::Ok);
        let mut r = Reporter::new(Lines, ColorChoice::Never, true);
        r.failed(anyhow::anyhow!("writing results.json"));
        assert_eq!(r.finish(Exit::Findings), Exit::Findings);
    }
}
