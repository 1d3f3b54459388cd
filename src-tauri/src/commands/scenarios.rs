//! The Demo screen's scenarios: list them, start one, play its next step, stop. Thin adapters
//! over `services::scenarios`.
use partner_console_core::bridge::{ScenarioList, ScenarioPlayView, ScenarioStartForm};
use partner_console_core::services::scenarios;
use partner_console_core::Console;
use partner_console_core::Result;
use tauri::State;

#[tauri::command]
pub async fn list_scenarios(state: State<'_, Console>) -> Result<ScenarioList> {
    Ok(scenarios::list(&state).await)
}

#[tauri::command]
pub async fn scenario_start(
    state: State<'_, Console>,
    form: ScenarioStartForm,
) -> Result<ScenarioPlayView> {
    scenarios::start(&state, form).await
}

#[tauri::command]
pub async fn scenario_next(state: State<'_, Console>) -> Result<ScenarioPlayView> {
    scenarios::next(&state).await
}

#[tauri::command]
pub async fn scenario_current(state: State<'_, Console>) -> Result<Option<ScenarioPlayView>> {
    Ok(scenarios::current(&state).await)
}

#[tauri::command]
pub async fn scenario_stop(state: State<'_, Console>) -> Result<()> {
    scenarios::stop(&state).await;
    Ok(())
}
