//! Notes on a transaction or a capture (#50, item 5): written by one member of a team
//! workspace, read by all, each with its author and time.
//!
//! Why only through a workspace: a note is for the next person who looks at the same
//! transaction or capture, and on one laptop there is no next person; the workspace keeps the
//! notes with the members who wrote them (and audits each write under the member's name). A
//! console that has joined none is told so, not handed an empty list that looks like "nobody
//! wrote anything".
//!
//! A capture's id is the workspace's capture id: while joined, the inspector shows the
//! workspace's captures (`services::captures`), so the id on screen is the one notes are kept
//! under.
use crate::bridge::{NoteForm, NoteKind, NoteView};
use crate::error::{AppError, ErrorKind, Result};
use crate::services::workspace::{self, Joined};
use crate::state::AppState;
use partner_workspace::roles::Action;
use partner_workspace::{Note, TargetKind};

/// The most a note holds (the workspace refuses more: `partner_server::notes::MAX_NOTE_CHARS`).
pub const MAX_NOTE_CHARS: usize = 10_000;

/// The notes on a transaction or a capture, oldest first.
pub async fn list(state: &AppState, kind: NoteKind, target_id: &str) -> Result<Vec<NoteView>> {
    let target_id = target(target_id)?;
    let joined = joined(state)?;
    let notes = workspace::answered(state, joined.client.notes(wire(kind), &target_id).await)?;
    Ok(notes.into_iter().map(|note| view(kind, note)).collect())
}

/// Writes a note as the member; refused before anything is sent when the member's role may not
/// write notes (a viewer), with the sentence that says who may.
pub async fn add(state: &AppState, form: NoteForm) -> Result<NoteView> {
    let target_id = target(&form.target_id)?;
    let text = form.text.trim();
    if text.is_empty() {
        return Err(AppError::invalid("Write something in the note first."));
    }
    let length = text.chars().count();
    if length > MAX_NOTE_CHARS {
        return Err(AppError::invalid(format!(
            "A note holds at most {MAX_NOTE_CHARS} characters; this one has {length}."
        )));
    }
    if text.contains('\0') {
        return Err(AppError::invalid(
            "A note is text: it cannot hold a NUL character.",
        ));
    }
    let joined = joined(state)?;
    joined.may(Action::WriteNote)?;
    let note = workspace::answered(
        state,
        joined
            .client
            .add_note(wire(form.kind), &target_id, text)
            .await,
    )?;
    Ok(view(form.kind, note))
}

/// The session, or the error that says notes are a team feature.
fn joined(state: &AppState) -> Result<Joined> {
    workspace::joined(state).ok_or_else(|| {
        AppError::new(
            ErrorKind::NotConnected,
            "Notes are a team feature: they are kept in a team workspace, and this console has not joined one.",
            "Join your team's workspace in Connections (its URL and your personal token), then read and write notes here.",
        )
    })
}

/// The id a note is on, trimmed; a blank one is the caller's mistake.
fn target(id: &str) -> Result<String> {
    let id = id.trim();
    if id.is_empty() || id.contains('\0') {
        return Err(AppError::invalid(
            "A note needs the id of the transaction or capture it is on.",
        ));
    }
    Ok(id.to_string())
}

fn wire(kind: NoteKind) -> TargetKind {
    match kind {
        NoteKind::Transaction => TargetKind::Transaction,
        NoteKind::Capture => TargetKind::Capture,
    }
}

fn view(kind: NoteKind, note: Note) -> NoteView {
    NoteView {
        id: note.id,
        kind,
        target_id: note.target_id,
        author: note.author,
        at: note.at.to_rfc3339(),
        text: note.text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blank_target_is_refused_and_a_padded_one_trimmed() {
        assert!(target("  ").is_err());
        assert!(target("t\0").is_err());
        assert_eq!(target(" t-1 ").expect("trimmed"), "t-1");
    }

    #[tokio::test]
    async fn without_a_workspace_notes_say_they_are_a_team_feature() {
        let dir = tempfile::tempdir().expect("dir");
        let state = crate::state::test_state(dir.path().to_path_buf());
        let error = list(&state, NoteKind::Transaction, "t-1")
            .await
            .expect_err("not joined");
        assert_eq!(error.kind, ErrorKind::NotConnected);
        assert!(error.message.contains("team feature"), "{}", error.message);
        let form = NoteForm {
            kind: NoteKind::Capture,
            target_id: "7".into(),
            text: "seen twice".into(),
        };
        let error = add(&state, form).await.expect_err("not joined");
        assert!(
            error.message.contains("has not joined"),
            "{}",
            error.message
        );
        let blank = NoteForm {
            kind: NoteKind::Capture,
            target_id: "7".into(),
            text: "  ".into(),
        };
        assert_eq!(
            add(&state, blank).await.expect_err("blank").kind,
            ErrorKind::InvalidInput
        );
    }
}
