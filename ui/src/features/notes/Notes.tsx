import { useMutation, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api, type NoteKind, type WorkspaceView } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import { formatTime } from "../../lib/format";
import { refusal, useTeam } from "../../lib/team";

/**
 * The team's notes on a transaction or a capture: each with its author and time, oldest first,
 * and a box to add one. Notes live in a team workspace, so the panel is there only while the app
 * has joined one (a console on its own has nobody to leave a note for, and is not nagged about
 * it). A role that may not write notes (a viewer) sees the box disabled and the sentence why.
 */
export function Notes({ kind, targetId, heading = true }: { kind: NoteKind; targetId: string; heading?: boolean }) {
  const team = useTeam();
  if (!team.data?.joined) return null;
  return <NotesPanel kind={kind} targetId={targetId} team={team.data} heading={heading} />;
}

function NotesPanel({ kind, targetId, team, heading }: { kind: NoteKind; targetId: string; team: WorkspaceView; heading: boolean }) {
  const notes = useQuery({ queryKey: ["notes", kind, targetId], queryFn: () => api.notes(kind, targetId), retry: false });
  const [text, setText] = useState("");
  // The command's declaration reads the notes again once a note is added.
  const add = useMutation({ mutationFn: () => api.addNote({ kind, targetId, text }), onSuccess: () => setText("") });
  const why = refusal(team, "write-note");
  return (
    <section className={heading ? "card notes" : "notes"} aria-label="Notes">
      {heading && <h2>Notes</h2>}
      {notes.isError && <ErrorPanel error={notes.error} compact onRetry={() => void notes.refetch()} />}
      {notes.data && notes.data.length === 0 && <p className="muted small">No notes yet: the team sees what you write here, with your name.</p>}
      {notes.data && notes.data.length > 0 && (
        <ol className="notes-list">
          {notes.data.map((note) => (
            <li key={note.id} data-testid="note">
              <div className="note-head">
                <strong>{note.author}</strong> <span className="muted small">{formatTime(note.at)}</span>
              </div>
              <p className="note-text">{note.text}</p>
            </li>
          ))}
        </ol>
      )}
      <form
        className="note-form"
        onSubmit={(e) => {
          e.preventDefault();
          add.mutate();
        }}
      >
        <textarea aria-label="New note" rows={2} value={text} onChange={(e) => setText(e.target.value)} disabled={why !== null} placeholder={why === null ? `A note for the team, as ${team.member ?? "you"}` : undefined} />
        <div className="actions">
          <button type="submit" disabled={why !== null || text.trim() === "" || add.isPending}>{add.isPending ? "Adding…" : "Add"}</button>
          {why !== null && <span className="muted small" data-testid="note-refused">{why}</span>}
        </div>
        {add.isError && <ErrorPanel error={add.error} compact />}
      </form>
    </section>
  );
}
