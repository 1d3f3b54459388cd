//! Scenarios played to their end on the embedded sandbox, as the Demo screen plays them (the
//! real sandbox delivering to the real listener), each checked by the story its picture draws.
use crate::harness::Headless;
use partner_console_core::bridge::{
    NotificationStory, PictureOf, ScenarioPlayView, ScenarioStartForm, StoryStep, Verdict,
};
use partner_console_core::services::{listener, picture, scenarios};
use partner_listener::MatchedKey;

/// Plays `name` from its first step to its last; the final view, and the picture of the
/// notification the play is about (its story, and the SVG).
async fn play(console: &Headless, name: &str) -> (ScenarioPlayView, NotificationStory, String) {
    let mut view = scenarios::start(
        &console.console,
        ScenarioStartForm {
            name: name.into(),
            real_time: false,
        },
    )
    .await
    .unwrap_or_else(|e| panic!("{name} starts: {e:?}"));
    assert_eq!(view.next, 0);
    while !view.finished {
        let before = view.next;
        view = scenarios::next(&console.console)
            .await
            .unwrap_or_else(|e| panic!("{name}, step {}: {e:?}", before + 1));
        assert_eq!(view.next, before + 1);
        assert!(view.steps[before as usize].outcome.is_some());
    }
    assert!(view.transaction_id.is_some(), "{name}: a transaction");
    let of = view
        .picture
        .clone()
        .unwrap_or_else(|| panic!("{name}: a notification to draw"));
    assert!(matches!(of, PictureOf::Notification { .. }), "{of:?}");
    let drawn = picture::draw(&console.console, of)
        .await
        .expect("drawn")
        .unwrap_or_else(|| panic!("{name}: nothing to draw"));
    (view, drawn.story, drawn.svg)
}

fn entries(
    story: &NotificationStory,
    step: StoryStep,
) -> Vec<&partner_console_core::bridge::StoryEntry> {
    story.entries.iter().filter(|e| e.step == step).collect()
}

#[tokio::test]
async fn every_built_in_scenario_plays_to_its_end_and_draws_what_it_tells() {
    let console = Headless::start().await;
    console.demo_subscribed().await;

    let (view, story, svg) = play(&console, "happy-path").await;
    // The lender's order, not the event the partner's own answer added after it.
    assert_eq!(
        story.resource_type, "urn:svc:partner:transaction",
        "{story:?}"
    );
    assert_eq!(story.event_type, "created", "{story:?}");
    assert_eq!(story.outcome, "delivered", "{story:?}");
    assert_eq!(
        svg.matches("data-step=\"answer\"").count(),
        2,
        "processing, then completed: {svg}"
    );
    let captured = entries(&story, StoryStep::Captured);
    assert_eq!(captured.len(), 1, "{story:?}");
    assert_eq!(captured[0].status, Some(200));
    assert_eq!(captured[0].verdict, Some(Verdict::Valid));
    assert!(
        svg.contains("data-step=\"attempt\" data-attempt=\"1\" data-status=\"200\""),
        "{svg}"
    );
    assert!(view.steps[2]
        .outcome
        .as_deref()
        .unwrap_or_default()
        .contains("completed"));

    let (_, story, svg) = play(&console, "failing-receiver").await;
    assert_eq!(story.outcome, "discarded", "{story:?}");
    let attempts = entries(&story, StoryStep::ServiceAttempt);
    assert_eq!(attempts.len(), 3, "{story:?}");
    assert!(attempts.iter().all(|a| a.status == Some(503)), "{story:?}");
    assert_eq!(entries(&story, StoryStep::ServiceGaveUp).len(), 1);
    assert!(svg.matches("data-status=\"503\"").count() >= 3, "{svg}");

    let (_, story, svg) = play(&console, "key-rotation").await;
    assert!(
        svg.contains(
            "data-attempt=\"2\" data-status=\"200\" data-verdict=\"valid\" data-key=\"previous\""
        ),
        "{svg}"
    );
    assert_eq!(story.outcome, "delivered", "{story:?}");
    let captured = entries(&story, StoryStep::Captured);
    assert_eq!(captured.len(), 2, "{story:?}");
    assert_eq!(captured[0].status, Some(503));
    assert_eq!(captured[1].status, Some(200));
    assert_eq!(
        captured[1].matched_key,
        Some(MatchedKey::Previous),
        "the retry was signed before the rotation: {story:?}"
    );
    // The play put the listener's answers back as they were.
    let status = console.console.status();
    assert!(status.listener.running, "{status:?}");

    let (view, story, _) = play(&console, "offline-recovered").await;
    let refused = entries(&story, StoryStep::ServiceAttempt);
    assert_eq!(refused.len(), 3, "{story:?}");
    assert!(
        refused
            .iter()
            .all(|a| a.error.as_deref().unwrap_or_default().contains("refused")),
        "{story:?}"
    );
    let recovered = entries(&story, StoryStep::RecoveryCaptured);
    assert_eq!(recovered.len(), 1, "{story:?}");
    assert_eq!(recovered[0].verdict, Some(Verdict::Valid));
    let recovery = view
        .steps
        .last()
        .and_then(|s| s.outcome.clone())
        .unwrap_or_default();
    assert!(
        recovery.contains("found 2 missed notifications"),
        "{recovery}"
    );

    let (view, story, svg) = play(&console, "reserialised-json").await;
    let captured = entries(&story, StoryStep::Captured);
    assert_eq!(captured.len(), 2, "{story:?}");
    assert_eq!(captured[0].verdict, Some(Verdict::Valid));
    assert_eq!(captured[1].verdict, Some(Verdict::InvalidSignature));
    assert!(svg.contains("data-verdict=\"invalid-signature\""), "{svg}");
    let diagnosis = view.steps[2].outcome.clone().unwrap_or_default();
    assert!(
        diagnosis.contains("the JSON was re-serialised after signing"),
        "{diagnosis}"
    );

    console.stop().await;
}

#[tokio::test]
async fn a_user_written_scenario_is_listed_and_played_and_a_broken_one_is_reported() {
    let console = Headless::start().await;
    console.demo_subscribed().await;
    let folder = scenarios::folder(&console.console);
    std::fs::create_dir_all(&folder).expect("folder");
    let example = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../docs/scenarios/back-in-time.toml"
    );
    std::fs::copy(example, folder.join("back-in-time.toml")).expect("copied");
    std::fs::write(
        folder.join("typo.toml"),
        "title = \"T\"\n[[steps]]\ndo = \"wait\"\nsecs = 3\ncaption = \"c\"\n",
    )
    .expect("written");

    let list = scenarios::list(&console.console).await;
    let names: Vec<&str> = list.scenarios.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "happy-path",
            "failing-receiver",
            "key-rotation",
            "offline-recovered",
            "reserialised-json",
            "back-in-time"
        ]
    );
    assert_eq!(list.problems.len(), 1, "{:?}", list.problems);
    assert!(
        list.problems[0].error.contains("unknown field `secs`"),
        "{:?}",
        list.problems
    );

    // A test mode the user left on is off while the scenario plays, and put back after.
    let users = partner_console_core::bridge::TestMode {
        enabled: true,
        fail_first_attempts: 1,
        failure_status: 502,
        ..Default::default()
    };
    listener::set_test_mode(&console.console, users.clone()).expect("test mode set");
    let (view, story, _) = play(&console, "back-in-time").await;
    assert_eq!(listener::view(&console.console).test_mode, users);
    assert!(view.finished);
    // The notification it is about is the event the lender added at the end, delivered at once.
    assert_eq!(
        story.resource_type, "urn:svc:partner:transaction:event",
        "{story:?}"
    );
    assert_eq!(story.outcome, "delivered", "{story:?}");
    let transaction = view.transaction_id.clone().expect("transaction");
    let timeline = partner_console_core::services::transaction_notifications::timeline(
        &console.console,
        &transaction,
    )
    .await
    .expect("timeline");
    let created = timeline
        .notifications
        .iter()
        .find(|n| n.resource_type == "urn:svc:partner:transaction" && n.event_type == "created")
        .expect("the transaction's created notification");
    let statuses: Vec<Option<u16>> = entries(created, StoryStep::Captured)
        .iter()
        .map(|e| e.status)
        .collect();
    assert_eq!(statuses, [Some(500), Some(500), Some(200)], "{created:?}");

    // Next after the end says so, and changes nothing.
    let error = scenarios::next(&console.console)
        .await
        .expect_err("played out");
    assert!(error.message.contains("played to its end"), "{error:?}");
    // Put back once: a test mode the user sets after the play ended survives its stop.
    let later = partner_console_core::bridge::TestMode {
        enabled: true,
        status: 202,
        ..Default::default()
    };
    listener::set_test_mode(&console.console, later.clone()).expect("test mode set");
    scenarios::stop(&console.console).await;
    assert_eq!(listener::view(&console.console).test_mode, later);
    listener::set_test_mode(&console.console, Default::default()).expect("test mode off");
    console.stop().await;
}

#[tokio::test]
async fn in_real_time_a_wait_really_passes_and_the_sandbox_clock_is_left_alone() {
    let console = Headless::start().await;
    console.demo_subscribed().await;
    let folder = scenarios::folder(&console.console);
    std::fs::create_dir_all(&folder).expect("folder");
    std::fs::write(
        folder.join("a-second.toml"),
        "title = \"A second\"\n[[steps]]\ndo = \"wait\"\nseconds = 1\ncaption = \"One second passes.\"\n",
    )
    .expect("written");
    let sandbox = partner_console_core::services::embedded::active_sandbox(&console.console)
        .expect("the embedded sandbox");
    let offset = sandbox.clock().offset();
    let view = scenarios::start(
        &console.console,
        ScenarioStartForm {
            name: "a-second".into(),
            real_time: true,
        },
    )
    .await
    .expect("started");
    assert!(view.real_time);
    let started = std::time::Instant::now();
    let view = scenarios::next(&console.console).await.expect("played");
    assert!(started.elapsed() >= std::time::Duration::from_secs(1));
    assert!(view.finished);
    assert_eq!(view.steps[0].outcome.as_deref(), Some("1 s passed."));
    assert_eq!(sandbox.clock().offset(), offset, "the clock was not moved");

    // Played in the sandbox's time instead, the same wait moves the clock at once.
    scenarios::start(
        &console.console,
        ScenarioStartForm {
            name: "a-second".into(),
            real_time: false,
        },
    )
    .await
    .expect("started");
    scenarios::next(&console.console).await.expect("played");
    assert_eq!(
        sandbox.clock().offset(),
        offset + std::time::Duration::from_secs(1)
    );
    console.stop().await;
}
