//! `partner completions SHELL` and `partner man --out DIR`: shell completions (clap_complete)
//! and man pages (clap_mangen) made from the same definitions as `--help`, so they can never
//! say something else. Packages install both; a source install can print them.

use crate::error::{CliError, Result};
use clap::{Args as ClapArgs, CommandFactory, ValueEnum};
use clap_complete::Shell;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, ClapArgs)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    shell: CompletionShell,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum CompletionShell {
    Bash,
    Zsh,
    Fish,
    Powershell,
}

impl From<CompletionShell> for Shell {
    fn from(shell: CompletionShell) -> Self {
        match shell {
            CompletionShell::Bash => Shell::Bash,
            CompletionShell::Zsh => Shell::Zsh,
            CompletionShell::Fish => Shell::Fish,
            CompletionShell::Powershell => Shell::PowerShell,
        }
    }
}

#[derive(Debug, ClapArgs)]
pub struct ManArgs {
    /// The folder to write `partner.1` and one page per subcommand (`partner-listen.1`, …) into.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

/// Prints the completion script on stdout.
pub fn completions<C: CommandFactory>(args: CompletionsArgs) -> Result<()> {
    let mut command = C::command();
    // Made whole first: clap_complete panics on a failed write (`partner completions bash |
    // head`), where a write of our own is an error.
    let mut script = Vec::new();
    clap_complete::generate(
        Shell::from(args.shell),
        &mut command,
        "partner",
        &mut script,
    );
    let mut out = std::io::stdout().lock();
    out.write_all(&script)
        .and_then(|()| out.flush())
        .map_err(CliError::Output)
}

/// Writes the man pages; says on stderr how many.
pub fn man<C: CommandFactory>(args: ManArgs) -> Result<()> {
    std::fs::create_dir_all(&args.out)
        .map_err(|e| CliError::Usage(format!("could not create {}: {e}", args.out.display())))?;
    let command = C::command();
    clap_mangen::generate_to(command, &args.out).map_err(|e| {
        CliError::Usage(format!(
            "could not write the man pages into {}: {e}",
            args.out.display()
        ))
    })?;
    let pages = std::fs::read_dir(&args.out)
        .map(|entries| {
            entries
                .filter_map(std::result::Result::ok)
                .filter(|e| e.path().extension().is_some_and(|x| x == "1"))
                .count()
        })
        .unwrap_or(0);
    eprintln!("partner: {pages} man pages in {}", args.out.display());
    Ok(())
}
