//! The life of a notification, drawn: a sequence picture (swimlanes) of one
//! [`NotificationStory`], as SVG text.
//!
//! The story is what the console already records (the service's delivery record where a sandbox
//! keeps one, the listener's captures, forwards, replays and recoveries), so the picture is a
//! drawing of it, never a log of its own. Time runs down the page. The service's waits and
//! timeouts are drawn to scale (the service's clock, which a sandbox may move on); a gap longer
//! than the scale's cap is drawn with a marked break and its real length written beside it.
//!
//! One drawing serves the window and the files: [`Palette::Screen`] colours through the theme's
//! CSS variables (with the light theme's values as fallbacks), [`Palette::Print`] with fixed
//! colours on white, for an exported SVG or the PNG [`png`] rasterises with `resvg`. Every step
//! carries `data-*` attributes (lane, step, attempt, status, verdict), so a test reads the
//! picture from the DOM rather than by looking at it.
use crate::bridge::{NotificationStory, StoryEntry, StoryStep, Verdict};
use chrono::{DateTime, Utc};
use partner_listener::xml::escape;
use partner_listener::MatchedKey;
use std::fmt::Write as _;

/// How the picture is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Palette {
    /// Through the window's theme (dark and high contrast included).
    Screen,
    /// Fixed colours on white, for files and slides.
    Print,
}

/// What the picture needs beyond the story.
#[derive(Debug, Clone, Default)]
pub struct Setting {
    /// The heading: what the notification is about.
    pub title: String,
    /// The tunnel's host the service sends through, when there is one.
    pub tunnel_host: Option<String>,
    /// The service's attempts reach the console's listener (else the user's own receiver).
    pub receiver_is_listener: bool,
    /// The listener's base URL, to tell a replay to it from one to the user's app.
    pub listener_url: Option<String>,
    /// The console's answers about the transaction after the notification, oldest first.
    pub answers: Vec<Answer>,
}

/// What the partner's app (the console, acting for it) answered the service about the
/// transaction after the notification arrived: a response, and what it cost to send.
#[derive(Debug, Clone)]
pub struct Answer {
    /// When it ended (this machine's clock).
    pub at: DateTime<Utc>,
    /// `respond: processing`.
    pub what: String,
    /// The service's last answer, when one came.
    pub status: Option<u16>,
    /// Why it failed, in the service's words.
    pub error: Option<String>,
    /// How many times it was sent (more than once where a fault bit and the client tried again).
    pub attempts: u32,
    /// The waits the service asked for (`Retry-After`), summed.
    pub waited_ms: u64,
}

/// A drawn picture.
#[derive(Debug, Clone)]
pub struct Picture {
    pub svg: String,
    pub width: u32,
    pub height: u32,
}

const WIDTH: f64 = 1000.0;
/// The left column holding each row's time.
const GUTTER: f64 = 84.0;
const TOP: f64 = 64.0;
const FIRST_ROW: f64 = TOP + 64.0;
/// Pixels per second of the service's clock: its 20 s retry delay is 100 px, its 30 s timeout
/// 150 px.
const PX_PER_SECOND: f64 = 5.0;
/// A gap longer than this is drawn as a break with its length written.
const MOST_TO_SCALE: f64 = 170.0;
/// Waits shorter than this are not drawn (a retry scheduled at once).
const LEAST_WAIT_SECONDS: f64 = 1.0;
/// The widest a note box on a lane is.
const NOTE_MOST: f64 = 180.0;
/// The width of a lane's name box.
const LANE_BOX: f64 = 150.0;
const FONT: &str = "'DejaVu Sans', 'Liberation Sans', Arial, Helvetica, sans-serif";
/// An estimate of one character's width at the 11 px font, for fitting labels.
const CHAR_PX: f64 = 6.3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lane {
    Lender,
    Service,
    Network,
    Listener,
    App,
}

impl Lane {
    fn key(self) -> &'static str {
        match self {
            Lane::Lender => "lender",
            Lane::Service => "service",
            Lane::Network => "network",
            Lane::Listener => "listener",
            Lane::App => "app",
        }
    }
}

/// How a line or box is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tone {
    Ink,
    Ok,
    Bad,
    Muted,
}

impl Tone {
    fn class(self) -> &'static str {
        match self {
            Tone::Ink => "ink",
            Tone::Ok => "ok",
            Tone::Bad => "bad",
            Tone::Muted => "muted",
        }
    }

    fn of_status(status: u16) -> Tone {
        if partner_api::delivery::acknowledges(status) {
            Tone::Ok
        } else {
            Tone::Bad
        }
    }
}

/// Draws the story.
pub fn draw(story: &NotificationStory, setting: &Setting, palette: Palette) -> Picture {
    let mut canvas = Canvas::new(story, setting);
    canvas.lender(story);
    let entries = &story.entries;
    let mut index = 0;
    while index < entries.len() {
        let entry = &entries[index];
        match entry.step {
            StoryStep::ServiceAttempt => {
                // The listener's capture of this attempt follows it (the story's causal order).
                let capture = entries.get(index + 1).filter(|next| {
                    next.step == StoryStep::Captured && next.attempt == entry.attempt
                });
                canvas.delivery(Some(entry), capture);
                index += 1 + usize::from(capture.is_some());
                continue;
            }
            StoryStep::Captured => canvas.delivery(None, Some(entry)),
            StoryStep::ServiceGaveUp => canvas.gave_up(entry),
            StoryStep::Forwarded => canvas.sent_on(entry, "forward", "forwarded to your app"),
            StoryStep::Replayed => canvas.sent_on(entry, "replay", "sent again by the console"),
            StoryStep::ReplayCaptured => canvas.arrived_from_console(entry, "replay-received"),
            StoryStep::RecoveryCaptured => canvas.arrived_from_console(entry, "recovery"),
        }
        index += 1;
    }
    for answer in &setting.answers {
        canvas.answer(answer);
    }
    canvas.finish(story, palette)
}

/// The picture as a PNG at `scale` times its size (2 for slides), with the machine's fonts.
pub fn png(picture_svg: &str, scale: f32) -> Result<Vec<u8>, String> {
    let mut options = resvg::usvg::Options::default();
    options.fontdb_mut().load_system_fonts();
    let tree = resvg::usvg::Tree::from_str(picture_svg, &options)
        .map_err(|e| format!("the picture is not SVG that can be drawn: {e}"))?;
    let size = tree
        .size()
        .to_int_size()
        .scale_by(scale)
        .ok_or_else(|| format!("the picture cannot be drawn at {scale} times its size"))?;
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| "the picture is too large to draw".to_string())?;
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| format!("the PNG could not be encoded: {e}"))
}

/// The drawing as it grows, row by row.
struct Canvas<'a> {
    setting: &'a Setting,
    lanes: Vec<Lane>,
    body: String,
    y: f64,
    /// When the service's last attempt ended (its clock), to draw the wait before the next.
    service_ready_at: Option<DateTime<Utc>>,
    /// When the console's last step happened (this machine's clock).
    console_last_at: Option<DateTime<Utc>>,
}

impl<'a> Canvas<'a> {
    fn new(story: &NotificationStory, setting: &'a Setting) -> Self {
        let mut lanes = vec![Lane::Lender, Lane::Service, Lane::Network, Lane::Listener];
        let to_app = story.entries.iter().any(|e| match e.step {
            StoryStep::Forwarded => true,
            StoryStep::Replayed => !is_listener(setting, e.url.as_deref()),
            StoryStep::ServiceAttempt => !setting.receiver_is_listener,
            _ => false,
        });
        if to_app {
            lanes.push(Lane::App);
        }
        Self {
            setting,
            lanes,
            body: String::new(),
            y: FIRST_ROW,
            service_ready_at: None,
            console_last_at: None,
        }
    }

    fn x(&self, lane: Lane) -> f64 {
        let at = self.lanes.iter().position(|l| *l == lane).unwrap_or(0) as f64;
        // Room for half a note box beside the outer lanes, and the times' column on the left.
        let left = GUTTER + NOTE_MOST / 2.0 + 8.0;
        let right = WIDTH - NOTE_MOST / 2.0 - 10.0;
        let step = (right - left) / (self.lanes.len().max(2) - 1) as f64;
        left + at * step
    }

    fn has(&self, lane: Lane) -> bool {
        self.lanes.contains(&lane)
    }

    /// The room between two neighbouring lanes, for a label.
    fn lane_gap(&self) -> f64 {
        self.x(Lane::Service) - self.x(Lane::Lender)
    }

    fn lender(&mut self, story: &NotificationStory) {
        let at = story
            .queued_at
            .or_else(|| story.entries.first().map(|e| e.at));
        let what = if story.event_type.is_empty() {
            "a change".to_string()
        } else {
            story.event_type.clone()
        };
        self.open_step("lender", &[]);
        self.time(at, "service");
        let (from, to) = (self.x(Lane::Lender), self.x(Lane::Service));
        self.note(Lane::Lender, self.y - 10.0, &what, Tone::Ink);
        self.arrow(
            from,
            to,
            self.y + 30.0,
            Tone::Ink,
            false,
            &format!("queued: event {}", short(&story.event_id)),
        );
        self.close_step();
        self.y += 66.0;
        self.service_ready_at = story.queued_at;
    }

    /// One attempt of the service's and what the listener made of it; either may be missing
    /// (no service record on a production connection; an attempt that never reached the
    /// listener).
    fn delivery(&mut self, attempt: Option<&StoryEntry>, capture: Option<&StoryEntry>) {
        let number = attempt.or(capture).and_then(|e| e.attempt);
        if let (Some(attempt), Some(ready)) = (attempt, self.service_ready_at) {
            self.wait(ready, attempt.at);
        }
        let status = attempt
            .and_then(|a| a.status)
            .or(capture.and_then(|c| c.status));
        let error = attempt.and_then(|a| a.error.clone());
        let timed_out = error.as_deref().is_some_and(|e| e.contains("timed out"));
        let mut attributes = vec![("attempt", number.map(|n| n.to_string()).unwrap_or_default())];
        if let Some(status) = status {
            attributes.push(("status", status.to_string()));
        }
        if let Some(verdict) = capture.and_then(|c| c.verdict) {
            attributes.push(("verdict", verdict.as_str().to_string()));
        }
        if let Some(key) = capture.and_then(|c| c.matched_key) {
            attributes.push(("key", key.as_str().to_string()));
        }
        if let Some(error) = &error {
            attributes.push(("error", error.clone()));
        }
        self.open_step("attempt", &attributes);
        match attempt {
            Some(a) => self.time(Some(a.at), "service"),
            None => self.time(capture.map(|c| c.at), "console"),
        }
        let service = self.x(Lane::Service);
        let network = self.x(Lane::Network);
        let target =
            if capture.is_some() || self.setting.receiver_is_listener || !self.has(Lane::App) {
                Lane::Listener
            } else {
                Lane::App
            };
        let receiver = self.x(target);
        let heading = match number {
            Some(n) if attempt.is_some() => format!("attempt {n} · signed, sent"),
            Some(n) => format!("attempt {n} (as the listener saw it)"),
            None => "sent".to_string(),
        };
        let y = self.y;
        if error.is_some() && !timed_out {
            // It never reached a receiver: the line stops in the network.
            self.arrow(service, network - 10.0, y, Tone::Bad, false, &heading);
            self.cross(network, y);
            let why = error.unwrap_or_default();
            self.label(
                network + 14.0,
                y + 4.0,
                &why,
                Tone::Bad,
                "start",
                self.lane_gap() * 1.6,
            );
            self.close_step();
            self.y += 46.0;
        } else {
            self.arrow(service, receiver, y, Tone::Ink, false, &heading);
            self.tunnel_dot(network, y);
            let mut answer_y = y + 30.0;
            if let Some(capture) = capture {
                let (text, tone) = verdict_text(capture.verdict, capture.matched_key);
                self.note(target, y + 8.0, &text, tone);
                answer_y = y + 50.0;
            }
            if timed_out {
                let seconds = attempt.and_then(|a| a.elapsed_ms).unwrap_or(30_000) as f64 / 1000.0;
                let height = (seconds * PX_PER_SECOND).clamp(40.0, MOST_TO_SCALE);
                self.bar(service, y, y + height);
                let line_y = y + height;
                // No answer came back: a dashed line ending in a cross, no arrowhead.
                let _ = write!(
                    self.body,
                    r#"<line class="msg bad answer" x1="{receiver}" y1="{line_y}" x2="{x2}" y2="{line_y}"/>"#,
                    x2 = service + 18.0,
                );
                self.label(
                    (receiver + service) / 2.0,
                    line_y - 6.0,
                    &format!("no answer in {}: timed out", seconds_text(seconds)),
                    Tone::Bad,
                    "middle",
                    (receiver - service).abs() - 12.0,
                );
                self.cross(service + 12.0, line_y);
                answer_y = line_y;
            } else if let Some(status) = status {
                let took = attempt
                    .and_then(|a| a.elapsed_ms)
                    .map(|ms| format!(" · {ms} ms"))
                    .unwrap_or_default();
                self.arrow(
                    receiver,
                    service,
                    answer_y,
                    Tone::of_status(status),
                    true,
                    &format!("{status} {}{took}", reason(status)),
                );
            }
            self.close_step();
            self.y = answer_y + 34.0;
        }
        if let Some(attempt) = attempt {
            let took = chrono::Duration::milliseconds(attempt.elapsed_ms.unwrap_or(0) as i64);
            self.service_ready_at = Some(attempt.at + took);
        }
        if let Some(capture) = capture {
            self.console_last_at = Some(capture.at);
        }
    }

    /// The service's wait before its next attempt, to scale or with a break.
    fn wait(&mut self, from: DateTime<Utc>, to: DateTime<Utc>) {
        let seconds = (to - from).num_milliseconds() as f64 / 1000.0;
        if seconds < LEAST_WAIT_SECONDS {
            return;
        }
        let x = self.x(Lane::Service);
        let height = seconds * PX_PER_SECOND;
        let broken = height > MOST_TO_SCALE;
        self.open_step("wait", &[("seconds", format!("{seconds:.0}"))]);
        let top = self.y - 18.0;
        let drawn = height.min(MOST_TO_SCALE);
        if broken {
            let middle = top + drawn / 2.0;
            self.line(x, top, x, middle - 6.0, Tone::Muted, "wait");
            self.line(x, middle + 6.0, x, top + drawn, Tone::Muted, "wait");
            // The break: two slanted strokes across the lane.
            self.line(
                x - 9.0,
                middle - 2.0,
                x + 9.0,
                middle - 8.0,
                Tone::Ink,
                "break",
            );
            self.line(
                x - 9.0,
                middle + 8.0,
                x + 9.0,
                middle + 2.0,
                Tone::Ink,
                "break",
            );
        } else {
            self.line(x, top, x, top + drawn, Tone::Muted, "wait");
        }
        let text = format!(
            "waits {}{}",
            seconds_text(seconds),
            if broken { " (not to scale)" } else { "" }
        );
        self.label(
            x + 12.0,
            top + drawn / 2.0 + 4.0,
            &text,
            Tone::Muted,
            "start",
            220.0,
        );
        self.close_step();
        self.y += drawn;
    }

    fn gave_up(&mut self, entry: &StoryEntry) {
        let attempts = entry.attempt.unwrap_or(0);
        self.open_step("gave-up", &[("attempt", attempts.to_string())]);
        self.time(Some(entry.at), "service");
        let text = match &entry.error {
            Some(why) => format!("not sent: {why}"),
            None => format!("gave up after {attempts} attempts: discarded"),
        };
        self.note(Lane::Service, self.y - 12.0, &text, Tone::Bad);
        self.close_step();
        self.y += 44.0;
    }

    /// A request the console sent from a capture: a forward to the user's app, or a replay.
    fn sent_on(&mut self, entry: &StoryEntry, step: &str, heading: &str) {
        self.console_gap(entry.at);
        let mut attributes = Vec::new();
        if let Some(status) = entry.status {
            attributes.push(("status", status.to_string()));
        }
        if let Some(error) = &entry.error {
            attributes.push(("error", error.clone()));
        }
        self.open_step(step, &attributes);
        self.time(Some(entry.at), "console");
        let listener = self.x(Lane::Listener);
        let y = self.y;
        if !self.has(Lane::App) || is_listener(self.setting, entry.url.as_deref()) {
            // Sent again to the listener itself: a loop on its lane.
            self.self_loop(listener, y, heading);
            self.close_step();
            self.y += 40.0;
            self.console_last_at = Some(entry.at);
            return;
        }
        let app = self.x(Lane::App);
        self.arrow(listener, app, y, Tone::Ink, false, heading);
        match (entry.status, &entry.error) {
            (Some(status), _) => {
                let took = entry
                    .elapsed_ms
                    .map(|ms| format!(" · {ms} ms"))
                    .unwrap_or_default();
                self.arrow(
                    app,
                    listener,
                    y + 26.0,
                    Tone::of_status(status),
                    true,
                    &format!("{status} {}{took}", reason(status)),
                );
            }
            (None, Some(error)) => {
                self.cross(app - 10.0, y);
                self.label(
                    listener + 8.0,
                    y + 20.0,
                    error,
                    Tone::Bad,
                    "start",
                    self.lane_gap() - 16.0,
                );
            }
            (None, None) => {}
        }
        self.close_step();
        self.y += 60.0;
        self.console_last_at = Some(entry.at);
    }

    /// A replay or recovery the listener received: the console sent it, not the service.
    fn arrived_from_console(&mut self, entry: &StoryEntry, step: &str) {
        self.console_gap(entry.at);
        let mut attributes = Vec::new();
        if let Some(verdict) = entry.verdict {
            attributes.push(("verdict", verdict.as_str().to_string()));
        }
        if let Some(status) = entry.status {
            attributes.push(("status", status.to_string()));
        }
        self.open_step(step, &attributes);
        self.time(Some(entry.at), "console");
        let heading = if step == "recovery" {
            "recovered: rebuilt and signed by the console"
        } else {
            "a replay arrived"
        };
        let listener = self.x(Lane::Listener);
        let (verdict, tone) = verdict_text(entry.verdict, entry.matched_key);
        let answered = entry.status.map(|s| format!(" → {s}")).unwrap_or_default();
        self.label(
            listener - 10.0,
            self.y - 6.0,
            heading,
            Tone::Ink,
            "end",
            self.lane_gap() * 1.8,
        );
        self.note(
            Lane::Listener,
            self.y,
            &format!("{verdict}{answered}"),
            tone,
        );
        self.close_step();
        self.y += 48.0;
        self.console_last_at = Some(entry.at);
    }

    /// The partner's answer to the service (the console acting for its app), with the fault
    /// that bit on the way when it was sent more than once.
    fn answer(&mut self, answer: &Answer) {
        self.console_gap(answer.at);
        let mut attributes = vec![
            ("attempts", answer.attempts.to_string()),
            ("waited-ms", answer.waited_ms.to_string()),
        ];
        if let Some(status) = answer.status {
            attributes.push(("status", status.to_string()));
        }
        self.open_step("answer", &attributes);
        self.time(Some(answer.at), "console");
        let (listener, service) = (self.x(Lane::Listener), self.x(Lane::Service));
        let y = self.y;
        self.arrow(
            listener,
            service,
            y,
            Tone::Ink,
            false,
            &format!("your app: {}", answer.what),
        );
        let mut next = y + 26.0;
        if answer.attempts > 1 || answer.waited_ms > 0 {
            let waited = if answer.waited_ms > 0 {
                format!(
                    "waited {} as the service asked, ",
                    seconds_text(answer.waited_ms as f64 / 1000.0)
                )
            } else {
                String::new()
            };
            let text = format!("a fault bit: {waited}sent {} times", answer.attempts);
            let room = (listener - service).abs() - 24.0;
            self.label(service + 12.0, y + 20.0, &text, Tone::Bad, "start", room);
            next = y + 44.0;
        }
        match (answer.status, &answer.error) {
            (Some(status), error) => {
                let words = error
                    .as_deref()
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default();
                self.arrow(
                    service,
                    listener,
                    next,
                    Tone::of_status(status),
                    true,
                    &format!("{status} {}{words}", reason(status)),
                );
            }
            (None, Some(error)) => {
                self.cross(listener - 12.0, next);
                self.label(
                    service + 12.0,
                    next + 4.0,
                    error,
                    Tone::Bad,
                    "start",
                    self.lane_gap() * 2.0,
                );
            }
            (None, None) => {}
        }
        self.close_step();
        self.y = next + 34.0;
        self.console_last_at = Some(answer.at);
    }

    /// A long pause between the console's own steps is marked (a recovery an hour later).
    fn console_gap(&mut self, at: DateTime<Utc>) {
        let Some(last) = self.console_last_at else {
            return;
        };
        let seconds = (at - last).num_milliseconds() as f64 / 1000.0;
        if seconds < 60.0 {
            return;
        }
        let x = self.x(Lane::Listener);
        let y = self.y - 14.0;
        self.open_step("later", &[("seconds", format!("{seconds:.0}"))]);
        self.line(x - 9.0, y + 4.0, x + 9.0, y - 2.0, Tone::Ink, "break");
        self.line(x - 9.0, y + 12.0, x + 9.0, y + 6.0, Tone::Ink, "break");
        self.label(
            x + 14.0,
            y + 8.0,
            &format!("{} later", seconds_text(seconds)),
            Tone::Muted,
            "start",
            200.0,
        );
        self.close_step();
        self.y += 26.0;
    }

    fn finish(self, story: &NotificationStory, palette: Palette) -> Picture {
        let height = (self.y + 44.0).ceil();
        let mut svg = String::with_capacity(self.body.len() + 4096);
        let lanes: Vec<&str> = self.lanes.iter().map(|l| l.key()).collect();
        let _ = write!(
            svg,
            r#"<svg xmlns="http://www.w3.org/2000/svg" class="pcp" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img" aria-label="{title}" data-outcome="{outcome}" data-lanes="{lanes}" data-event-id="{event}">"#,
            title = escape(&self.setting.title),
            outcome = escape(&story.outcome),
            lanes = lanes.join(" "),
            event = escape(&story.event_id),
        );
        let _ = write!(svg, "<title>{}</title>", escape(&self.setting.title));
        svg.push_str(&style(palette));
        svg.push_str(r#"<defs>"#);
        for tone in [Tone::Ink, Tone::Ok, Tone::Bad] {
            let _ = write!(
                svg,
                r#"<marker id="pcp-head-{c}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path class="head-{c}" d="M0,0L10,5L0,10z"/></marker>"#,
                c = tone.class()
            );
        }
        svg.push_str("</defs>");
        let _ = write!(
            svg,
            r#"<rect class="bg" x="0" y="0" width="{WIDTH}" height="{height}"/>"#
        );
        let _ = write!(
            svg,
            r#"<text class="heading" x="12" y="24">{}</text>"#,
            escape(&fit(&self.setting.title, WIDTH - 220.0))
        );
        let _ = write!(
            svg,
            r#"<text class="outcome {tone}" x="{x}" y="24" text-anchor="end">{outcome}</text>"#,
            x = WIDTH - 12.0,
            tone = outcome_tone(&story.outcome).class(),
            outcome = escape(&story.outcome),
        );
        for lane in &self.lanes {
            let x = self.x(*lane);
            let (name, note) = self.lane_names(*lane);
            let _ = write!(
                svg,
                r#"<g data-lane="{key}"><line class="life" x1="{x}" y1="{top}" x2="{x}" y2="{bottom}"/><rect class="lane" x="{left}" y="34" width="{LANE_BOX}" height="38" rx="5"/><text class="lane-name" x="{x}" y="51" text-anchor="middle">{name}</text><text class="lane-note" x="{x}" y="65" text-anchor="middle">{note}</text></g>"#,
                key = lane.key(),
                top = TOP + 8.0,
                bottom = height - 16.0,
                left = x - LANE_BOX / 2.0,
                name = escape(name),
                // The note's font is 10 px, the estimate's 11.
                note = escape(&fit(&note, (LANE_BOX - 8.0) * 1.1)),
            );
        }
        svg.push_str(&self.body);
        let _ = write!(
            svg,
            r#"<text class="legend" x="10" y="{y}"><tspan class="service-clock">Blue times: the service's clock</tspan> (a sandbox's can be moved on). Grey times: this machine's clock. Waits and the 30 s timeout to scale, 5 px a second.</text>"#,
            y = height - 12.0,
        );
        svg.push_str("</svg>");
        Picture {
            svg,
            width: WIDTH as u32,
            height: height as u32,
        }
    }

    fn lane_names(&self, lane: Lane) -> (&'static str, String) {
        match lane {
            Lane::Lender => ("Lender", "acts".into()),
            Lane::Service => ("Service", "signs, sends, retries".into()),
            Lane::Network => (
                if self.setting.tunnel_host.is_some() {
                    "Tunnel"
                } else {
                    "Network"
                },
                self.setting
                    .tunnel_host
                    .as_deref()
                    .map(str::to_string)
                    .unwrap_or_else(|| "direct".into()),
            ),
            Lane::Listener => ("Console listener", "verifies, answers".into()),
            Lane::App => ("Your app", "its own receiver".into()),
        }
    }

    // Drawing primitives.

    fn open_step(&mut self, step: &str, attributes: &[(&str, String)]) {
        let _ = write!(self.body, r#"<g class="step" data-step="{step}""#);
        for (name, value) in attributes {
            let _ = write!(self.body, r#" data-{name}="{}""#, escape(value));
        }
        self.body.push('>');
    }

    fn close_step(&mut self) {
        self.body.push_str("</g>");
    }

    /// The row's time in the left column, and whose clock it is.
    fn time(&mut self, at: Option<DateTime<Utc>>, clock: &str) {
        let Some(at) = at else { return };
        let _ = write!(
            self.body,
            r#"<text class="time {clock}-clock" x="10" y="{y}" data-clock="{clock}">{time}</text>"#,
            y = self.y + 4.0,
            time = at.format("%H:%M:%S"),
        );
    }

    fn arrow(&mut self, from: f64, to: f64, y: f64, tone: Tone, answer: bool, label: &str) {
        let class = tone.class();
        let dash = if answer { " answer" } else { "" };
        let _ = write!(
            self.body,
            r#"<line class="msg {class}{dash}" x1="{from}" y1="{y}" x2="{to}" y2="{y}" marker-end="url(#pcp-head-{head})"/>"#,
            head = if tone == Tone::Muted { "ink" } else { class },
        );
        let room = (to - from).abs() - 12.0;
        let middle = (from + to) / 2.0;
        self.label(middle, y - 6.0, label, tone, "middle", room.max(60.0));
    }

    fn label(&mut self, x: f64, y: f64, text: &str, tone: Tone, anchor: &str, room: f64) {
        let shown = fit(text, room);
        let title = if shown == text {
            String::new()
        } else {
            format!("<title>{}</title>", escape(text))
        };
        let _ = write!(
            self.body,
            r#"<text class="label {tone}" x="{x}" y="{y}" text-anchor="{anchor}">{title}{shown}</text>"#,
            tone = tone.class(),
            shown = escape(&shown),
        );
    }

    /// A box on a lane, its text inside.
    fn note(&mut self, lane: Lane, y: f64, text: &str, tone: Tone) {
        let x = self.x(lane);
        let width = (self.lane_gap() - 14.0).min(NOTE_MOST);
        let _ = write!(
            self.body,
            r#"<rect class="note {tone}" x="{left}" y="{y}" width="{width}" height="22" rx="4"/>"#,
            tone = tone.class(),
            left = x - width / 2.0,
        );
        self.label(x, y + 15.0, text, tone, "middle", width - 10.0);
    }

    fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, tone: Tone, class: &str) {
        let _ = write!(
            self.body,
            r#"<line class="{class} {tone}" x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}"/>"#,
            tone = tone.class()
        );
    }

    fn cross(&mut self, x: f64, y: f64) {
        self.line(x - 6.0, y - 6.0, x + 6.0, y + 6.0, Tone::Bad, "cross");
        self.line(x - 6.0, y + 6.0, x + 6.0, y - 6.0, Tone::Bad, "cross");
    }

    /// Where the line passes the tunnel.
    fn tunnel_dot(&mut self, x: f64, y: f64) {
        let _ = write!(
            self.body,
            r#"<circle class="tunnel" cx="{x}" cy="{y}" r="4"/>"#
        );
    }

    /// The service waiting for an answer.
    fn bar(&mut self, x: f64, from: f64, to: f64) {
        let _ = write!(
            self.body,
            r#"<rect class="waiting" x="{left}" y="{from}" width="8" height="{height}"/>"#,
            left = x - 4.0,
            height = to - from,
        );
    }

    fn self_loop(&mut self, x: f64, y: f64, label: &str) {
        let _ = write!(
            self.body,
            r#"<path class="msg ink" fill="none" d="M{x},{y} h36 v18 h-32" marker-end="url(#pcp-head-ink)"/>"#,
        );
        self.label(
            x + 42.0,
            y + 13.0,
            label,
            Tone::Ink,
            "start",
            self.lane_gap() - 50.0,
        );
    }
}

fn is_listener(setting: &Setting, url: Option<&str>) -> bool {
    match (setting.listener_url.as_deref(), url) {
        (Some(listener), Some(url)) => url.starts_with(listener.trim_end_matches('/')),
        _ => false,
    }
}

/// The listener's verdict in words, and its colour.
fn verdict_text(verdict: Option<Verdict>, key: Option<MatchedKey>) -> (String, Tone) {
    match verdict {
        Some(Verdict::Valid) => {
            let key = match key {
                Some(MatchedKey::Previous) => "previous key",
                _ => "current key",
            };
            (format!("✓ valid, {key}"), Tone::Ok)
        }
        Some(other) => (format!("✗ {}", other.as_str().replace('-', " ")), Tone::Bad),
        None => ("received".into(), Tone::Ink),
    }
}

fn outcome_tone(outcome: &str) -> Tone {
    match outcome {
        "delivered" | "acknowledged" | "recovered" => Tone::Ok,
        "discarded" | "refused" => Tone::Bad,
        _ => Tone::Muted,
    }
}

/// A status's reason phrase, where HTTP names one.
fn reason(status: u16) -> &'static str {
    http_reason(status).unwrap_or("")
}

fn http_reason(status: u16) -> Option<&'static str> {
    Some(match status {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        409 => "Conflict",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => return None,
    })
}

/// `20 s`, `2 min 5 s`, `2 h 0 min`.
fn seconds_text(seconds: f64) -> String {
    let whole = seconds.round() as i64;
    match whole {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => {
            let rest = s % 60;
            if rest == 0 {
                format!("{} min", s / 60)
            } else {
                format!("{} min {rest} s", s / 60)
            }
        }
        s => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

/// The first 8 characters of a long id, with "…".
pub fn short(id: &str) -> String {
    if id.chars().count() <= 12 {
        return id.to_string();
    }
    let head: String = id.chars().take(8).collect();
    format!("{head}…")
}

/// The text cut to fit `room` pixels (an estimate), ending in "…" when cut.
fn fit(text: &str, room: f64) -> String {
    let most = (room / CHAR_PX).floor().max(4.0) as usize;
    if text.chars().count() <= most {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(most - 1).collect();
    cut.push('…');
    cut
}

/// The picture's own style sheet: every rule under `.pcp`, so it touches nothing else in the
/// window, and coloured through the theme's variables on screen.
fn style(palette: Palette) -> String {
    let colour = |variable: &str, fallback: &str| match palette {
        Palette::Screen => format!("var(--{variable}, {fallback})"),
        Palette::Print => fallback.to_string(),
    };
    let ink = colour("ink", "#1d2330");
    let muted = colour("muted", "#6b7385");
    let ok = colour("ok", "#1a7f37");
    let bad = colour("bad", "#b42318");
    let panel = colour("panel", "#ffffff");
    let line = colour("line-strong", "#c6ccd6");
    let accent = colour("accent", "#2f5b8f");
    let accent_soft = colour("accent-soft", "#e7eef7");
    format!(
        "<style>\
.pcp text{{font-family:{FONT};font-size:11px;fill:{ink}}}\
.pcp .bg{{fill:{panel}}}\
.pcp .heading{{font-size:14px;font-weight:bold}}\
.pcp .outcome{{font-size:13px;font-weight:bold}}\
.pcp .lane{{fill:{accent_soft};stroke:{accent};stroke-width:1}}\
.pcp .lane-name{{font-weight:bold;font-size:12px}}\
.pcp .lane-note,.pcp .time,.pcp .legend{{fill:{muted};font-size:10px}}\
.pcp .time.service-clock,.pcp .legend .service-clock{{fill:{accent}}}\
.pcp .life{{stroke:{line};stroke-width:1;stroke-dasharray:4 4}}\
.pcp .msg{{stroke-width:1.6;fill:none}}\
.pcp .answer{{stroke-dasharray:6 4}}\
.pcp .ink{{stroke:{ink}}}.pcp .ok{{stroke:{ok}}}.pcp .bad{{stroke:{bad}}}.pcp .muted{{stroke:{muted}}}\
.pcp text.ok,.pcp .outcome.ok{{fill:{ok};stroke:none}}\
.pcp text.bad,.pcp .outcome.bad{{fill:{bad};stroke:none}}\
.pcp text.muted{{fill:{muted};stroke:none}}\
.pcp text.ink{{stroke:none}}\
.pcp .note{{fill:{panel};stroke-width:1.4}}\
.pcp .wait{{stroke-width:2;stroke-dasharray:2 3}}\
.pcp .break,.pcp .cross{{stroke-width:2}}\
.pcp .waiting{{fill:{accent_soft};stroke:{bad};stroke-width:1}}\
.pcp .tunnel{{fill:{accent};stroke:none}}\
.pcp .head-ink{{fill:{ink}}}.pcp .head-ok{{fill:{ok}}}.pcp .head-bad{{fill:{bad}}}\
</style>"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(second: i64) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 27, 10, 0, 0).unwrap() + chrono::Duration::seconds(second)
    }

    fn entry(step: StoryStep, second: i64) -> StoryEntry {
        StoryEntry {
            at: at(second),
            step,
            capture_id: None,
            attempt: None,
            status: None,
            verdict: None,
            matched_key: None,
            error: None,
            url: None,
            elapsed_ms: None,
        }
    }

    fn attempt(number: u32, second: i64, status: Option<u16>, error: Option<&str>) -> StoryEntry {
        StoryEntry {
            attempt: Some(number),
            status,
            error: error.map(str::to_string),
            elapsed_ms: Some(if error.is_some_and(|e| e.contains("timed out")) {
                30_000
            } else {
                12
            }),
            url: Some("https://tunnel.example/hooks".into()),
            ..entry(StoryStep::ServiceAttempt, second)
        }
    }

    fn captured(number: u32, second: i64, status: u16, key: MatchedKey) -> StoryEntry {
        StoryEntry {
            attempt: Some(number),
            status: Some(status),
            verdict: Some(Verdict::Valid),
            matched_key: Some(key),
            capture_id: Some(i64::from(number)),
            ..entry(StoryStep::Captured, second)
        }
    }

    fn story(outcome: &str, entries: Vec<StoryEntry>) -> NotificationStory {
        NotificationStory {
            subscription_id: "sub-1".into(),
            resource_type: "urn:svc:partner:transaction".into(),
            event_type: "transaction.updated".into(),
            event_id: "0f7c9a52-1c1e-4d7b-9a55-2b7f3c9d8e01".into(),
            outcome: outcome.into(),
            queued_at: Some(at(0)),
            entries,
        }
    }

    fn setting() -> Setting {
        Setting {
            title: "transaction.updated <A & B>".into(),
            tunnel_host: Some("tunnel.example".into()),
            receiver_is_listener: true,
            listener_url: Some("http://127.0.0.1:7070/".into()),
            answers: Vec::new(),
        }
    }

    /// The `data-step` values in drawing order.
    fn steps(svg: &str) -> Vec<String> {
        svg.match_indices("data-step=\"")
            .map(|(i, m)| {
                let rest = &svg[i + m.len()..];
                rest[..rest.find('"').unwrap()].to_string()
            })
            .collect()
    }

    #[test]
    fn a_failing_receiver_is_drawn_attempt_by_attempt_with_the_waits_to_scale() {
        let told = story(
            "delivered",
            vec![
                attempt(1, 0, Some(503), None),
                captured(1, 0, 503, MatchedKey::Current),
                attempt(2, 20, None, Some("timed out after 30s")),
                attempt(3, 70, Some(200), None),
                captured(3, 70, 200, MatchedKey::Previous),
            ],
        );
        let picture = draw(&told, &setting(), Palette::Print);
        let svg = &picture.svg;
        assert_eq!(
            steps(svg),
            ["lender", "attempt", "wait", "attempt", "wait", "attempt"]
        );
        assert!(svg.contains(r#"data-lanes="lender service network listener""#));
        assert!(
            svg.contains(r#"data-step="wait" data-seconds="20""#),
            "{svg}"
        );
        // 20 s after the second attempt's 30 s timeout.
        assert!(svg.contains(r#"data-step="wait" data-seconds="20""#));
        assert!(svg.contains("no answer in 30 s"));
        assert!(svg.contains("503 Service Unavailable"));
        assert!(svg.contains("✓ valid, previous key"));
        // Text is escaped and nothing is left to the screen's theme.
        assert!(svg.contains("transaction.updated &lt;A &amp; B&gt;"));
        assert!(!svg.contains("var(--"));
        assert!(picture.height > 400);
        // It parses as SVG and draws.
        let png = png(svg, 2.0).expect("drawn");
        assert_eq!(&png[1..4], b"PNG");
        let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
        assert_eq!(width, picture.width * 2);
    }

    #[test]
    fn a_wait_longer_than_the_scale_is_drawn_with_a_break_and_its_length() {
        let told = story(
            "discarded",
            vec![
                attempt(1, 0, None, Some("connection refused")),
                attempt(2, 7200, None, Some("connection refused")),
                StoryEntry {
                    attempt: Some(2),
                    ..entry(StoryStep::ServiceGaveUp, 7200)
                },
            ],
        );
        let svg = draw(&told, &setting(), Palette::Screen).svg;
        assert_eq!(
            steps(&svg),
            ["lender", "attempt", "wait", "attempt", "gave-up"]
        );
        assert!(svg.contains("waits 2 h 0 min (not to scale)"));
        assert!(svg.contains(r#"class="break ink""#));
        assert!(svg.contains("gave up after 2 attempts: discarded"));
        assert!(svg.contains("var(--bad, #b42318)"));
    }

    #[test]
    fn forwards_go_to_the_app_lane_and_replays_to_the_listener_loop_on_it() {
        let forward = StoryEntry {
            status: Some(500),
            url: Some("http://localhost:3000/hooks".into()),
            elapsed_ms: Some(4),
            ..entry(StoryStep::Forwarded, 1)
        };
        let replay = StoryEntry {
            status: Some(200),
            url: Some("http://127.0.0.1:7070/webhooks".into()),
            ..entry(StoryStep::Replayed, 4000)
        };
        let recovered = StoryEntry {
            status: Some(200),
            verdict: Some(Verdict::InvalidSignature),
            ..entry(StoryStep::RecoveryCaptured, 4001)
        };
        let told = story(
            "acknowledged",
            vec![
                captured(1, 0, 200, MatchedKey::Current),
                forward,
                replay,
                recovered,
            ],
        );
        let mut without_record = told.clone();
        without_record.queued_at = None;
        let svg = draw(&without_record, &setting(), Palette::Print).svg;
        assert_eq!(
            steps(&svg),
            ["lender", "attempt", "forward", "later", "replay", "recovery"]
        );
        assert!(svg.contains(r#"data-lanes="lender service network listener app""#));
        assert!(svg.contains("attempt 1 (as the listener saw it)"));
        assert!(svg.contains("500 Internal Server Error · 4 ms"));
        assert!(svg.contains("✗ invalid signature"));
        assert!(svg.contains("1 h 6 min later"));
    }

    #[test]
    fn the_partner_s_answers_follow_with_the_fault_that_bit_on_the_way() {
        let mut with_answers = setting();
        with_answers.answers = vec![
            Answer {
                at: at(30),
                what: "respond: processing".into(),
                status: Some(200),
                error: None,
                attempts: 2,
                waited_ms: 2000,
            },
            Answer {
                at: at(40),
                what: "respond: completed".into(),
                status: Some(503),
                error: Some("the service is busy".into()),
                attempts: 1,
                waited_ms: 0,
            },
        ];
        let told = story(
            "delivered",
            vec![
                attempt(1, 0, Some(200), None),
                captured(1, 0, 200, MatchedKey::Current),
            ],
        );
        let svg = draw(&told, &with_answers, Palette::Print).svg;
        assert_eq!(steps(&svg), ["lender", "attempt", "answer", "answer"]);
        assert!(
            svg.contains(
                r#"data-step="answer" data-attempts="2" data-waited-ms="2000" data-status="200""#
            ),
            "{svg}"
        );
        assert!(svg.contains("a fault bit: waited 2 s as the service asked, sent 2 times"));
        assert!(svg.contains("503 Service Unavailable: the service is busy"));
    }

    #[test]
    fn long_labels_are_cut_and_keep_their_whole_text_in_a_title() {
        assert_eq!(fit("short", 100.0), "short");
        let cut = fit(&"x".repeat(100), 63.0);
        assert_eq!(cut.chars().count(), 10);
        assert!(cut.ends_with('…'));
        assert_eq!(seconds_text(20.4), "20 s");
        assert_eq!(seconds_text(125.0), "2 min 5 s");
    }
}
