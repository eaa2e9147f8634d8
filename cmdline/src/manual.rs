//! Shell completions and man pages, generated from a tool's clap definitions so they can never
//! drift from its `--help`. One place for all three tools.

use std::io;
use std::path::Path;

pub use clap_complete::Shell;

/// Writes the completion script for `shell` to stdout. The script is made in memory first:
/// clap_complete panics when a write fails, and a reader may close the pipe early
/// (`gate completions bash | head`), which [`crate::exit::print_bytes`] swallows.
pub fn write_completions(shell: Shell, mut cmd: clap::Command) -> io::Result<()> {
    let name = cmd.get_name().to_string();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, name, &mut script);
    crate::exit::print_bytes(&script)
}

/// [`write_completions`] for callers with no error path: a failure (not a closed stdout,
/// which is no failure) is one line on stderr.
pub fn print_completions(shell: Shell, cmd: clap::Command) {
    if let Err(e) = write_completions(shell, cmd) {
        crate::errln!(
            "error: writing the completion script: {}",
            crate::exit::one_line(&e)
        );
    }
}

/// The man page of `cmd` on stdout, or (with `out`) `NAME.1` and one `NAME-SUB.1` per
/// subcommand written into `out`.
pub fn write_man_pages(mut cmd: clap::Command, out: Option<&Path>) -> io::Result<()> {
    cmd.build();
    let Some(dir) = out else {
        let mut page = Vec::new();
        clap_mangen::Man::new(cmd).render(&mut page)?;
        return crate::exit::print_bytes(&page);
    };
    std::fs::create_dir_all(dir)?;
    let name = cmd.get_name().to_string();
    let mut pages = vec![(name.clone(), cmd.clone())];
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        // clap names are `&'static str` without its `string` feature; a page run leaks a few.
        let full: &'static str = format!("{name}-{}", sub.get_name()).leak();
        pages.push((full.to_string(), sub.clone().name(full)));
    }
    for (file, page_cmd) in pages {
        let mut page = Vec::new();
        clap_mangen::Man::new(page_cmd).render(&mut page)?;
        let path = dir.join(format!("{file}.1"));
        // The one output guard (see `files::outputs`): never through a link or into a checkout.
        files::outputs::Plan::new()
            .file("man page", &path)
            .check()
            .map_err(io::Error::other)?;
        files::atomic::write_bytes_atomic(&path, &page)
            .map_err(|e| io::Error::new(e.kind(), format!("writing {}: {e}", path.display())))?;
    }
    Ok(())
}
