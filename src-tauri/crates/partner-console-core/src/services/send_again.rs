//! "Send again" in the inspector: every capture of the current filter, or the selection, sent
//! to a receiver (`partner_listener::bulk`, as `partner listen replay` sends them), paced, as a
//! job the window watches and can stop. Each send's record is kept beside its capture, so the
//! capture's detail and its transaction's Notifications show what the receiver answered; the
//! outcomes come back for the window to list and copy.
use crate::bridge::SendAgainForm;
use crate::console::Console;
use crate::error::{AppError, Result};
use crate::services::jobs::Job;
use partner_listener::bulk::{self, Expectation, Resign, SendPlan, SendReport};
use partner_listener::CaptureFilter;

/// The most captures one run sends.
pub const MOST_SENT: u64 = 10_000;
/// The most sends in flight the window may ask for.
const MOST_IN_FLIGHT: u32 = 32;

pub async fn send_again(app: &Console, form: SendAgainForm) -> Result<SendReport> {
    let state = app.state();
    crate::services::captures::local_only(state, "Send again")?;
    let store = state.captures()?;
    if form.concurrency == 0 || form.concurrency > MOST_IN_FLIGHT {
        return Err(AppError::invalid(format!(
            "Send 1 to {MOST_IN_FLIGHT} at a time."
        )));
    }
    if let Some(rate) = form.per_second {
        if !(rate.is_finite() && rate > 0.0) {
            return Err(AppError::invalid(
                "The rate is sends per second, above 0 (or none for no limit).",
            ));
        }
    }
    let target =
        crate::services::listener::target_or_listener(state, form.target.as_deref(), "The")?;
    let filter = match form.ids.filter(|ids| !ids.is_empty()) {
        Some(ids) => CaptureFilter {
            ids,
            ..CaptureFilter::default()
        },
        None => form.filter.clone().tidied(),
    };
    let captures = crate::services::captures::read(store.clone(), move |store| {
        let found = store.query(&filter, 0, MOST_SENT)?;
        Ok((found.items, found.total))
    })
    .await?;
    let (mut captures, matched) = captures;
    if matched > MOST_SENT {
        return Err(AppError::invalid(format!(
            "{matched} captures are shown: send at most {MOST_SENT} at once (narrow the filter)."
        )));
    }
    // Oldest first, as they arrived.
    captures.reverse();
    let plan = SendPlan {
        target,
        concurrency: form.concurrency as usize,
        per_second: form.per_second,
        expect: Expectation::delivered(),
    };
    let resign = if form.resign {
        let subscriptions: Vec<String> = captures
            .iter()
            .filter_map(|c| c.subscription_id.clone())
            .collect();
        Some(crate::services::keys::current_keys(state, subscriptions).await?)
    } else {
        None
    };
    let resign = match &resign {
        Some(keys) => Resign::FromKeys(keys),
        None => Resign::Never,
    };
    let job = Job::start(app, &form.job_id);
    let total = captures.len() as u64;
    job.progress(0, Some(total));
    let http = partner_listener::outbound::http_client();
    Ok(bulk::send_all(
        &http,
        &plan,
        &captures,
        &resign,
        Some(&store),
        &job.stop,
        |done, _| job.progress(done as u64, Some(total)),
    )
    .await)
}
