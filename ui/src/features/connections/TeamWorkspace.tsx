/**
 * "Team workspace" on the Connections screen: join one with its URL and a personal token (the
 * token goes to the OS's secret store, never a file), or see the one joined (URL, member, role,
 * whether it answers) and leave it. While joined, the support desk answers from the team's index.
 */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, toCommandError } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import { useTeam, WORKSPACE_KEY } from "../../lib/team";
import { EMPTY_JOIN, joinProblems, notJoinedText, reachabilityText, sourceText, type JoinDraft } from "./workspaceModel";

export function TeamWorkspace() {
  const team = useTeam();
  const client = useQueryClient();
  const [draft, setDraft] = useState<JoinDraft>(EMPTY_JOIN);
  const [touched, setTouched] = useState(false);
  const problems = joinProblems(draft);
  const join = useMutation({
    mutationFn: () => api.joinWorkspace({ url: draft.url.trim(), token: draft.token.trim() }),
    onSuccess: (view) => {
      client.setQueryData(WORKSPACE_KEY, view);
      setDraft(EMPTY_JOIN);
      setTouched(false);
    },
    // The token is not kept in the form after a failed join.
    onError: () => setDraft((d) => ({ ...d, token: "" })),
  });
  const leave = useMutation({
    mutationFn: api.leaveWorkspace,
    onSuccess: (view) => client.setQueryData(WORKSPACE_KEY, view),
  });
  const view = team.data;
  const notJoined = notJoinedText(view);
  const mayNot = (view?.permissions ?? []).filter((p) => !p.allowed).map((p) => p.label);

  return (
    <section className="card form-card" aria-label="Team workspace" data-testid="team-workspace">
      <h2>Team workspace</h2>
      {/* The status itself never fails (it says how the workspace answered); only the app's bridge can. */}
      {team.isError && <p className="muted small">The workspace&apos;s status could not be read: {toCommandError(team.error).message}</p>}
      {view?.joined ? (
        <>
          <dl className="facts small">
            <dt>URL</dt>
            <dd className="mono" data-testid="team-url">{view.url}</dd>
            <dt>Member</dt>
            <dd data-testid="team-member">{view.member}</dd>
            <dt>Role</dt>
            <dd data-testid="team-role">{view.role}</dd>
            <dt>Reachability</dt>
            <dd className={view.reachable ? "ok" : "bad"} data-testid="team-reachability">{reachabilityText(view)}</dd>
            {mayNot.length > 0 && (
              <>
                <dt>Your role may not</dt>
                <dd data-testid="team-may-not">{mayNot.join(", ")} (shown disabled, with why)</dd>
              </>
            )}
          </dl>
          <p className="muted small">The support desk answers from the team's index, and answers to transactions go through the workspace under your name; {sourceText(view)}.</p>
          {leave.isError && <ErrorPanel error={leave.error} compact />}
          <div className="actions">
            <button type="button" className="danger" data-testid="team-leave" onClick={() => leave.mutate()} disabled={leave.isPending}>
              {leave.isPending ? "Leaving…" : "Leave"}
            </button>
          </div>
        </>
      ) : (
        <form
          aria-label="Join a team workspace"
          onSubmit={(e) => {
            e.preventDefault();
            setTouched(true);
            if (Object.keys(problems).length === 0) join.mutate();
          }}
        >
          <p className="muted small">A team's <code>partner server</code> keeps one support index, the captures and the audit log for everyone. Join with your personal token; it is checked with the workspace before it is kept, in the OS's secret store.</p>
          {notJoined && <p className="caution small" data-testid="team-not-joined">{notJoined}</p>}
          <div className="form-row">
            <label>
              Workspace URL
              <input type="url" autoComplete="off" data-testid="team-url-input" placeholder="https://team.example" value={draft.url} onChange={(e) => setDraft({ ...draft, url: e.target.value })} aria-invalid={touched && problems.url !== undefined} />
              {touched && problems.url && <span className="field-error small">{problems.url}</span>}
            </label>
            <label>
              Personal token
              <input type="password" autoComplete="off" data-testid="team-token-input" value={draft.token} onChange={(e) => setDraft({ ...draft, token: e.target.value })} aria-invalid={touched && problems.token !== undefined} />
              {touched && problems.token && <span className="field-error small">{problems.token}</span>}
            </label>
          </div>
          {join.isError && <ErrorPanel error={join.error} compact />}
          <div className="actions">
            <button type="submit" className="primary" data-testid="team-join" disabled={join.isPending}>
              {join.isPending ? "Joining…" : "Join"}
            </button>
          </div>
        </form>
      )}
    </section>
  );
}
