//! The Audit log screen of a console joined to a real team workspace: a note written and a
//! clear made by two members, and a viewer's refused clear, are read on a third member's
//! console with each member's name and role; the export walks every page of the workspace's
//! log, as JSON Lines and CSV, oldest first; the screen shows the newest 500 and says older
//! ones exist; leaving shows this machine's own log again.
use crate::harness::form;
use crate::team::Team;
use partner_console_core::bridge::{AuditLogView, ExportFormat};
use partner_console_core::services::{audit, captures, notes, workspace};
use partner_console_core::ErrorKind;
use partner_server::audit::Outcome;
use partner_server::{Action, Member, Role};
use serde_json::json;

/// The entry of `member` in the view, which must have one.
fn by<'a>(log: &'a AuditLogView, member: &str) -> &'a partner_console_core::bridge::AuditEntryView {
    log.entries
        .iter()
        .find(|entry| entry.member.as_deref() == Some(member))
        .unwrap_or_else(|| panic!("no entry of {member}: {log:?}"))
}

/// The exported file's lines as the workspace's entries.
fn exported(path: &str) -> Vec<partner_workspace::AuditEntry> {
    std::fs::read_to_string(path)
        .expect("the export")
        .lines()
        .map(|line| serde_json::from_str(line).expect("an entry per line"))
        .collect()
}

#[tokio::test]
async fn every_members_writes_show_in_anothers_audit_log_and_export_and_leaving_shows_the_local_log(
) {
    let team = Team::start().await;
    let sam = team.joined(&team.member("sam", Role::Support).await).await;
    let dev = team
        .joined(&team.member("dev", Role::Developer).await)
        .await;
    let vera = team.joined(&team.member("vera", Role::Viewer).await).await;

    notes::add(
        &sam.console,
        form(json!({"kind": "transaction", "targetId": "t-1", "text": "The lender withdrew the loan."})),
    )
    .await
    .expect("sam writes a note");
    captures::clear(
        &dev.console,
        form(json!({"filter": null, "upToId": i64::MAX})),
    )
    .await
    .expect("dev clears the captures");
    let refused = captures::clear(
        &vera.console,
        form(json!({"filter": null, "upToId": i64::MAX})),
    )
    .await
    .expect_err("a viewer's clear");
    assert_eq!(refused.kind, ErrorKind::Refused);

    // Vera (a viewer: every member may read it) sees the workspace's log, not her machine's:
    // who did what, in which role, newest first.
    let log = audit::list(vera.console.state()).await.expect("the log");
    assert_eq!(
        log.workspace.as_deref(),
        Some(team.url().as_str()),
        "{log:?}"
    );
    assert_eq!(log.path, team.url());
    assert!(!log.older);
    assert_eq!(log.total, log.entries.len() as u64);
    assert!(
        log.entries
            .iter()
            .all(|e| e.via == "workspace" && e.member.is_some() && e.connection.is_empty()),
        "{log:?}"
    );
    let note = by(&log, "sam");
    assert_eq!(
        (
            note.role.as_deref(),
            note.action.as_str(),
            note.target.as_str(),
            note.outcome.as_str()
        ),
        (Some("support"), "write-note", "transaction t-1", "done")
    );
    assert!(note.answer.starts_with("note "), "{note:?}");
    assert!(
        !note.answer.contains("withdrew"),
        "a note's text is not the log's"
    );
    let clear = by(&log, "dev");
    assert_eq!(
        (
            clear.role.as_deref(),
            clear.action.as_str(),
            clear.outcome.as_str()
        ),
        (Some("developer"), "clear", "done")
    );
    assert_eq!(clear.answer, "0 cleared");
    // The viewer's refused clear was asked of the app's own rule first, so nothing reached the
    // workspace and it has nothing of vera.
    assert!(log
        .entries
        .iter()
        .all(|e| e.member.as_deref() != Some("vera")));
    let order: Vec<&str> = log
        .entries
        .iter()
        .filter_map(|e| e.member.as_deref())
        .collect();
    assert_eq!(order, ["dev", "sam"], "newest first");
    let at = chrono::DateTime::parse_from_rfc3339(&note.at).expect("an RFC 3339 time");
    assert!(at <= chrono::Utc::now() + chrono::Duration::seconds(5));

    // The export is the workspace's, oldest first: JSON Lines as the workspace answers an
    // entry, and CSV.
    let jsonl = audit::export(&vera.console, ExportFormat::Json)
        .await
        .expect("exported");
    let path = jsonl.path.expect("a file");
    assert!(
        path.ends_with(".jsonl") && path.contains("workspace-audit-log"),
        "{path}"
    );
    let lines = exported(&path);
    assert_eq!(jsonl.count, lines.len() as u64);
    let members: Vec<(&str, &str)> = lines
        .iter()
        .map(|e| (e.member.as_str(), e.role.as_str()))
        .collect();
    assert_eq!(members, [("sam", "support"), ("dev", "developer")]);
    let csv = audit::export(&vera.console, ExportFormat::Csv)
        .await
        .expect("exported");
    let text = std::fs::read_to_string(csv.path.expect("a file")).expect("the CSV");
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows[0], "id,at,member,role,action,target,outcome,detail");
    assert_eq!(rows.len(), 3, "{text}");
    assert!(
        rows[1].contains(",sam,support,write-note,transaction t-1,done,note "),
        "{}",
        rows[1]
    );
    assert!(rows[2].contains(",dev,developer,clear,captures,done,0 cleared"));

    // More than a page of the log: the screen shows the newest 500 and says there are older
    // ones; the export walks every page back to the first entry.
    let filler = Member {
        name: "filler".into(),
        role: Role::Admin,
    };
    for n in 0..1_100 {
        partner_server::audit::record(
            &team.pool,
            &filler,
            Action::ManageMembers,
            &format!("member m-{n}"),
            Outcome::Done,
            "added",
        )
        .await
        .expect("recorded");
    }
    let log = audit::list(vera.console.state()).await.expect("the log");
    assert_eq!(log.entries.len(), audit::SHOWN);
    assert_eq!(log.total, audit::SHOWN as u64);
    assert!(log.older);
    assert_eq!(log.entries[0].target, "member m-1099");
    let all = audit::export(&vera.console, ExportFormat::Json)
        .await
        .expect("exported");
    let lines = exported(&all.path.expect("a file"));
    assert_eq!(lines.len(), 1_102);
    assert_eq!(all.count, 1_102);
    assert!(
        lines.windows(2).all(|pair| pair[0].id < pair[1].id),
        "oldest first, each once"
    );
    assert_eq!(
        (lines[0].member.as_str(), lines[1_101].target.as_str()),
        ("sam", "member m-1099")
    );

    // Left: this machine's own log again.
    workspace::leave(&vera.console).await.expect("left");
    let local = audit::list(vera.console.state())
        .await
        .expect("the local log");
    assert_eq!(local.workspace, None);
    assert!(!local.older);
    assert!(
        local.path.ends_with(partner_local::paths::AUDIT_LOG),
        "{}",
        local.path
    );
    assert!(local
        .entries
        .iter()
        .all(|e| e.member.is_none() && e.via != "workspace"));
    team.stop().await;
}
