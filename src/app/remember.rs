//! What the playground remembers from one start to the next: the theme, the provider, model and
//! base URL, the sampling settings (in `settings.toml` in the config directory), and the last
//! tools and prompt (in `last.json` in the data directory). Never a key: the state holds none.
//!
//! Reading happens once at start (the command line reads the files and lays the flags over
//! them); writing is an effect the driver runs, when a setting changes and when the playground
//! quits. This module only turns the state into text and back.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use toolscope_core::provider::{ProviderKind, Sampling};

use super::{App, Setup, editor};

/// Where remembered state is written; `None` keeps it nowhere (tests).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StateFiles {
    /// `settings.toml` in the config directory.
    pub settings: Option<PathBuf>,
    /// `last.json` in the data directory.
    pub last: Option<PathBuf>,
}

/// The settings file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    pub sampling: Sampling,
}

/// The last tools and prompt.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct LastWork {
    pub tools: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools_path: Option<PathBuf>,
    pub system: String,
    pub message: String,
}

/// Everything remembered.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Remembered {
    pub settings: Settings,
    /// `None`: only the settings changed (the last work is written at quit).
    pub last: Option<LastWork>,
}

impl Remembered {
    /// The settings of `app`, and its work when `with_work`.
    pub fn of(app: &App, with_work: bool) -> Remembered {
        Remembered {
            settings: Settings {
                theme: Some(app.theme.clone()),
                provider: Some(app.provider.name().to_string()),
                model: Some(app.model.clone()),
                // Credentials in the URL are never saved: `[redacted]` stands in their place.
                base_url: app
                    .base_url
                    .as_deref()
                    .map(toolscope_core::provider::redact_url),
                sampling: app.sampling.clone(),
            },
            last: with_work.then(|| LastWork {
                tools: match &app.tools_to_remember {
                    Some(t) if !app.tools.is_edited() => t.clone(),
                    _ => app.tools.text(),
                },
                tools_path: app.tools.path.clone(),
                system: editor::text_of(&app.prompt.system),
                message: editor::text_of(&app.prompt.composer),
            }),
        }
    }

    /// The settings as TOML.
    pub fn settings_toml(&self) -> String {
        toml::to_string(&self.settings).unwrap_or_default()
    }

    /// The last work as JSON.
    pub fn last_json(&self) -> Option<String> {
        self.last
            .as_ref()
            .and_then(|l| serde_json::to_string_pretty(l).ok())
    }

    /// Reads the two files' texts (either may be missing). A file that cannot be read is named
    /// in the problems and ignored.
    pub fn parse(
        settings: Option<(&str, &str)>,
        last: Option<(&str, &str)>,
    ) -> (Remembered, Vec<String>) {
        let mut out = Remembered::default();
        let mut problems = Vec::new();
        if let Some((name, text)) = settings {
            match toml::from_str::<Settings>(text) {
                Ok(s) => out.settings = s,
                Err(e) => problems.push(format!("{name}: {}", e.message())),
            }
        }
        if let Some((name, text)) = last {
            match serde_json::from_str::<LastWork>(text) {
                Ok(l) => out.last = Some(l),
                Err(e) => problems.push(format!("{name}: {e}")),
            }
        }
        (out, problems)
    }

    /// Lays the remembered state onto `setup` (the command line's flags go on top afterwards).
    /// `providers` is the application's provider table.
    pub fn apply(self, setup: &mut Setup, providers: &[ProviderKind]) {
        let s = self.settings;
        if let Some(t) = s.theme {
            setup.theme = t;
        }
        if let Some(p) = s
            .provider
            .and_then(|n| providers.iter().find(|k| k.name() == n))
        {
            setup.provider = *p;
            setup.model = s
                .model
                .unwrap_or_else(|| p.spec().suggested_model.to_string());
            setup.base_url = s.base_url;
        }
        setup.sampling = s.sampling;
        if let Some(l) = self.last {
            if !l.tools.trim().is_empty() {
                setup.tools = l.tools;
                setup.tools_path = l.tools_path;
            }
            setup.system = l.system;
            setup.prompt = l.message;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::theme::Themes;

    /// The empty tools an MCP start shows are not the user's: the tools they replaced are
    /// remembered, until the user edits the pane.
    #[test]
    fn tools_put_there_for_mcp_servers_are_not_remembered_unless_edited() {
        let setup = Setup {
            tools: "[]".into(),
            tools_to_remember: Some(crate::app::tools::EXAMPLE_TOOLS.into()),
            ..Setup::default()
        };
        let mut app = App::new(setup, Themes::built_in());
        let last = |app: &App| Remembered::of(app, true).last.unwrap().tools;
        assert_eq!(last(&app), crate::app::tools::EXAMPLE_TOOLS);
        app.tools.editor.insert_str(" ");
        assert_eq!(last(&app), " []");
    }

    #[test]
    fn the_state_round_trips_and_holds_no_key() {
        let mut app = App::new(Setup::default(), Themes::built_in());
        app.theme = "light".into();
        app.sampling.temperature = Some(0.2);
        app.sampling.reasoning_effort = Some(toolscope_core::provider::ReasoningEffort::Low);
        let r = Remembered::of(&app, true);
        let toml = r.settings_toml();
        assert!(toml.contains("theme = \"light\""), "{toml}");
        assert!(!toml.to_lowercase().contains("key"), "{toml}");
        let json = r.last_json().unwrap();
        let (back, problems) =
            Remembered::parse(Some(("settings.toml", &toml)), Some(("last.json", &json)));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(back, r);
        let mut setup = Setup::default();
        back.apply(&mut setup, &crate::app::providers::all());
        assert_eq!(setup.theme, "light");
        assert_eq!(setup.sampling.temperature, Some(0.2));
        let (_, problems) = Remembered::parse(Some(("s.toml", "theme = 3")), None);
        assert!(problems[0].starts_with("s.toml: "), "{problems:?}");
    }

    #[test]
    fn credentials_in_the_base_url_are_never_saved() {
        let mut app = App::new(Setup::default(), Themes::built_in());
        app.base_url =
            Some("http://bob:pa55-secret-word@gpu.lan:8000/v1?token=TK-secret-42".into());
        let toml = Remembered::of(&app, true).settings_toml();
        assert!(
            !toml.contains("pa55-secret-word") && !toml.contains("TK-secret-42"),
            "{toml}"
        );
        assert!(
            toml.contains("http://[redacted]@gpu.lan:8000/v1?token=[redacted]"),
            "{toml}"
        );
    }
}
