//! `partner audit`: the audit log of writes the desktop app and this command sent or refused
//! (`partner_local::audit`, in the shared data folder), newest first; `--export FILE` writes
//! the whole log, oldest first, as JSON Lines or (`.csv`) CSV. The log's lines are sealed with
//! the console's data key (`super::data_key`), across its rotated files.

use super::render::{write_lines, Row};
use crate::error::{CliError, Result};
use clap::Args as ClapArgs;
use partner_local::audit::{answer_words, outcome_word, AuditFormat};
use partner_local::{AuditEntry, AuditLog};
use std::path::PathBuf;

#[derive(Debug, ClapArgs)]
pub struct Args {
    /// The newest N writes.
    #[arg(long, default_value_t = 50)]
    limit: usize,
    /// One JSON object per line, each with the body sent (secrets replaced).
    #[arg(long, conflicts_with = "export")]
    json: bool,
    /// Write the whole log to FILE (CSV when it ends in .csv, else JSON Lines).
    #[arg(long, value_name = "FILE")]
    export: Option<PathBuf>,
}

/// One write as the table shows it.
struct Shown<'a>(&'a AuditEntry);

impl Row for Shown<'_> {
    const HEADERS: &'static [&'static str] = &[
        "at",
        "connection",
        "via",
        "action",
        "target",
        "outcome",
        "answer",
    ];

    fn cells(&self) -> Vec<String> {
        let write = &self.0.write;
        vec![
            write.at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            self.0.connection.clone(),
            self.0.via.clone(),
            write.action.describe().to_owned(),
            write.target.clone(),
            outcome_word(&write.outcome).to_owned(),
            answer_words(&write.outcome),
        ]
    }
}

impl serde::Serialize for Shown<'_> {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

pub fn run(args: Args) -> Result<()> {
    let path = partner_local::paths::data_dir()
        .map_err(|e| CliError::Usage(e.to_string()))?
        .join(partner_local::paths::AUDIT_LOG);
    let limit = if args.export.is_some() {
        None
    } else {
        Some(args.limit)
    };
    // No log yet: nothing to open, and no data key to look up or make for it.
    let (log, read) = if AuditLog::exists(&path) {
        let key = super::data_key::resolve().map_err(CliError::Local)?;
        let log = AuditLog::new(&path, key.key.clone());
        let read = log.read(limit).map_err(CliError::Local)?;
        if read.unreadable > 0 {
            eprintln!(
                "{} line(s) of {} (and its rotated files) are not entries: kept in the file, left out here",
                read.unreadable,
                log.path().display()
            );
        }
        if read.unopened > 0 {
            eprintln!(
                "{} of them do not open with the data key {} ({}): the key may differ from the one that wrote them",
                read.unopened,
                key.key.fingerprint(),
                key.home
            );
        }
        (Some(log), read)
    } else {
        (None, partner_local::audit::AuditRead::default())
    };
    if let Some(path) = args.export {
        let oldest_first: Vec<AuditEntry> = read.entries.into_iter().rev().collect();
        let file = std::fs::File::create(&path).map_err(CliError::Output)?;
        let out = std::io::BufWriter::new(file);
        let mut out =
            partner_local::audit::write_entries(out, &oldest_first, AuditFormat::for_path(&path))
                .map_err(CliError::Output)?;
        std::io::Write::flush(&mut out).map_err(CliError::Output)?;
        eprintln!(
            "{} write(s) exported to {}",
            oldest_first.len(),
            path.display()
        );
        return Ok(());
    }
    if read.entries.is_empty() && !args.json {
        let shown = log.as_ref().map_or(path.as_path(), |log| log.path());
        eprintln!("no writes recorded yet in {}", shown.display());
        return Ok(());
    }
    let shown: Vec<Shown> = read.entries.iter().map(Shown).collect();
    write_lines(&shown, args.json)
}
