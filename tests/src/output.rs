//! [`Output`]: what a finished command gave (exit, stdout, stderr), with the assertions every
//! test makes on it, each failing with both streams shown.

use std::fmt;

/// A finished command's exit code and its two streams as text.
#[derive(Debug, Clone)]
pub struct Output {
    /// The exit code; `None` when a signal ended the process.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    /// Runs `cmd` to its end (an `assert_cmd::Command` keeps the outer timeout).
    pub fn of(cmd: &mut assert_cmd::Command) -> Output {
        Output::from(cmd.output().expect("the command starts"))
    }

    /// Runs `cmd` to its end with stdin empty and stdout a pipe whose reader is gone before
    /// the command starts, so its every write to stdout fails with `EPIPE` (a `| head -1` that
    /// has read its line). The result's `stdout` is empty.
    pub fn with_closed_stdout(cmd: &mut std::process::Command) -> Output {
        use std::process::Stdio;
        let (read, write) = nix::unistd::pipe().expect("a pipe");
        drop(read);
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::from(write))
            .stderr(Stdio::piped())
            .spawn()
            .expect("the command starts");
        Output::from(child.wait_with_output().expect("the command ends"))
    }

    /// The exit code, or -1 when a signal ended the process.
    pub fn exit(&self) -> i32 {
        self.code.unwrap_or(-1)
    }

    /// Panics, showing both streams, unless the command exited with `code`.
    #[track_caller]
    pub fn assert_exit(&self, code: i32) -> &Output {
        assert_eq!(self.code, Some(code), "expected exit {code}\n{self}");
        self
    }

    /// Both streams in one text, for substring checks that do not care which stream said it.
    pub fn both(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

impl From<std::process::Output> for Output {
    fn from(out: std::process::Output) -> Output {
        Output {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

impl fmt::Display for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let code = self.code.map_or("a signal".to_string(), |c| c.to_string());
        write!(
            f,
            "exit: {code}\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        )
    }
}
