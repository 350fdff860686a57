//! What the playground remembers from one start to the next: the theme, the provider, model and
//! base URL, the sampling settings (in `settings.toml` in the config directory), and the last
//! tools and prompt (in `last.json` in the data directory). Never a key: the state holds none.
//!
//! Reading happens once at start (the command line reads the files and lays the flags over
//! them); writing is an effect the driver runs, when a setting changes and when the playground
//! quits. This module only turns the state into text and back.
//!
//! Flags are for one run: only the settings the user changed in the playground are written, as
//! edits of the file as it is then (its comments, layout and keys toolscope does not know are
//! kept). A file that could not be read is replaced only when there is something to write, and
//! the driver keeps a `.bak` of it first ([`SettingsWrite::Replace`]).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use toolscope_core::provider::{ProviderKind, Sampling};

use super::layout::Splits;
use super::{App, Setup, editor};

/// Where remembered state is written; `None` keeps it nowhere (tests).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StateFiles {
    /// `settings.toml` in the config directory.
    pub settings: Option<PathBuf>,
    /// `last.json` in the data directory.
    pub last: Option<PathBuf>,
}

/// The settings file. Keys it does not know are named at start and kept when it is written.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
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
    /// The panes' shares of the screen, when resized (Alt+= / Alt+-).
    #[serde(default, skip_serializing_if = "Splits::is_default")]
    pub layout: Splits,
}

impl Settings {
    /// The settings `app` has now.
    pub fn of(app: &App) -> Settings {
        Settings {
            theme: Some(app.theme.clone()),
            provider: Some(app.provider.name().to_string()),
            model: Some(app.model.clone()),
            // Credentials in the URL are never saved: `[redacted]` stands in their place.
            base_url: app
                .base_url
                .as_deref()
                .map(toolscope_core::provider::redact_url),
            sampling: app.sampling.clone(),
            layout: app.splits,
        }
    }

    /// As a TOML table (keys left out when absent).
    fn table(&self) -> toml::Table {
        toml::Table::try_from(self).unwrap_or_default()
    }
}

/// What to do with `settings.toml`.
#[derive(Clone, Debug, PartialEq)]
pub enum SettingsWrite {
    /// Nothing changed: the file stays as it is.
    Keep,
    /// The file (or a new one) with the changes made.
    Edit(String),
    /// The file could not be read: a new one holding the changes replaces it, once a backup of
    /// it was kept.
    Replace(String),
}

/// One setting changed: its path of keys and its new value (none: removed).
type Change = (Vec<String>, Option<toml::Value>);

/// The settings that differ between `base` and `now`, key by key (into tables).
fn changes(path: &[String], base: &toml::Table, now: &toml::Table, out: &mut Vec<Change>) {
    let keys: std::collections::BTreeSet<&String> = base.keys().chain(now.keys()).collect();
    for key in keys {
        let mut at = path.to_vec();
        at.push(key.clone());
        match (base.get(key), now.get(key)) {
            (Some(toml::Value::Table(b)), Some(toml::Value::Table(n))) => changes(&at, b, n, out),
            (Some(toml::Value::Table(b)), None) => changes(&at, b, &toml::Table::new(), out),
            (None, Some(toml::Value::Table(n))) => changes(&at, &toml::Table::new(), n, out),
            (b, n) if b != n => out.push((at, n.cloned())),
            _ => {}
        }
    }
}

/// `value` as an edit-preserving TOML value (`None` for a table, which is never a leaf here).
fn edit_value(value: &toml::Value) -> Option<toml_edit::Value> {
    Some(match value {
        toml::Value::String(s) => s.as_str().into(),
        toml::Value::Integer(i) => (*i).into(),
        toml::Value::Float(f) => (*f).into(),
        toml::Value::Boolean(b) => (*b).into(),
        toml::Value::Datetime(d) => d.to_string().parse::<toml_edit::Value>().ok()?,
        toml::Value::Array(a) => {
            let mut out = toml_edit::Array::new();
            for v in a {
                out.push(edit_value(v)?);
            }
            toml_edit::Value::Array(out)
        }
        toml::Value::Table(_) => return None,
    })
}

/// Makes `change` in `doc`, keeping the comments around a value it replaces.
fn apply(doc: &mut toml_edit::DocumentMut, (path, value): &Change) {
    let Some((leaf, tables)) = path.split_last() else {
        return;
    };
    let mut table: &mut dyn toml_edit::TableLike = doc.as_table_mut();
    for key in tables {
        if value.is_none() && table.get(key).is_none() {
            return;
        }
        let item = table
            .entry(key)
            .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()));
        if item.as_table_like().is_none() {
            // A value where a table is wanted (the file was hand-edited so): the table wins.
            *item = toml_edit::Item::Table(toml_edit::Table::new());
        }
        let Some(t) = item.as_table_like_mut() else {
            return;
        };
        table = t;
    }
    match value.as_ref().and_then(edit_value) {
        None => {
            table.remove(leaf);
        }
        Some(mut new) => match table.get_mut(leaf).and_then(|i| i.as_value_mut()) {
            Some(old) => {
                *new.decor_mut() = old.decor().clone();
                *old = new;
            }
            None => {
                table.insert(leaf, toml_edit::Item::Value(new));
            }
        },
    }
}

/// Why a settings text cannot be read, if it cannot; the keys toolscope does not know (as
/// `sampling.NAME` inside the sampling table).
fn read_settings(text: &str) -> Result<(Settings, Vec<String>), String> {
    let settings = toml::from_str::<Settings>(text).map_err(|e| e.message().to_string())?;
    let mut unknown = Vec::new();
    if let Ok(file) = toml::from_str::<toml::Table>(text) {
        unknown_keys("", &file, &settings.table(), &mut unknown);
    }
    Ok((settings, unknown))
}

/// The keys of `file` that reading it as settings did not use: those not in `read` (the
/// settings read, written back), except an empty list (which is written as nothing).
fn unknown_keys(prefix: &str, file: &toml::Table, read: &toml::Table, out: &mut Vec<String>) {
    for (key, value) in file {
        match (value, read.get(key)) {
            (toml::Value::Table(f), Some(toml::Value::Table(r))) => {
                unknown_keys(&format!("{prefix}{key}."), f, r, out)
            }
            (toml::Value::Table(f), None) if prefix.is_empty() && key == "sampling" => {
                unknown_keys("sampling.", f, &toml::Table::new(), out)
            }
            (toml::Value::Array(a), None) if a.is_empty() => {}
            (_, None) => out.push(format!("{prefix}{key}")),
            _ => {}
        }
    }
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
    /// The settings as last remembered (at start: as the playground started, flags included).
    /// Only what differs from them is written.
    pub base: Settings,
    /// `None`: only the settings changed (the last work is written at quit).
    pub last: Option<LastWork>,
}

impl Remembered {
    /// The settings of `app`, and its work when `with_work`.
    pub fn of(app: &App, with_work: bool) -> Remembered {
        Remembered {
            settings: Settings::of(app),
            base: app.settings_base.clone(),
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

    /// The settings as TOML, whole.
    pub fn settings_toml(&self) -> String {
        toml::to_string(&self.settings).unwrap_or_default()
    }

    /// What to write to the settings file whose text is `existing` (`None`: there is none):
    /// the settings changed since `base`, made as edits of that text. A text that cannot be
    /// read as settings (not UTF-8: `Some(Err(()))`) is replaced by one of the changes alone.
    pub fn settings_write(&self, existing: Option<Result<&str, ()>>) -> SettingsWrite {
        let mut todo = Vec::new();
        changes(&[], &self.base.table(), &self.settings.table(), &mut todo);
        if todo.is_empty() {
            return SettingsWrite::Keep;
        }
        let readable = match existing {
            None => Some(toml_edit::DocumentMut::new()),
            Some(Ok(text)) => match (read_settings(text), text.parse::<toml_edit::DocumentMut>()) {
                (Ok(_), Ok(doc)) => Some(doc),
                _ => None,
            },
            Some(Err(())) => None,
        };
        let (mut doc, replace) = match readable {
            Some(doc) => (doc, false),
            None => (toml_edit::DocumentMut::new(), true),
        };
        for change in &todo {
            apply(&mut doc, change);
        }
        let text = doc.to_string();
        if replace {
            SettingsWrite::Replace(text)
        } else {
            SettingsWrite::Edit(text)
        }
    }

    /// Whether `text` reads as the last work (a file that does not is kept as a backup before
    /// it is replaced).
    pub fn last_readable(text: &str) -> bool {
        serde_json::from_str::<LastWork>(text).is_ok()
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
            match read_settings(text) {
                Ok((s, unknown)) => {
                    out.settings = s;
                    for key in unknown {
                        problems.push(format!(
                            "{name}: unknown key \"{key}\" ignored (kept in the file)"
                        ));
                    }
                }
                Err(e) => problems.push(format!(
                    "{name}: {e} (the file is ignored; a backup is kept if it is replaced)"
                )),
            }
        }
        if let Some((name, text)) = last {
            match serde_json::from_str::<LastWork>(text) {
                Ok(l) => out.last = Some(l),
                Err(e) => problems.push(format!(
                    "{name}: {e} (the file is ignored; a backup is kept when it is replaced)"
                )),
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
        setup.splits = s.layout;
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
        assert_eq!((&back.settings, &back.last), (&r.settings, &r.last));
        let mut setup = Setup::default();
        back.apply(&mut setup, &crate::app::providers::all());
        assert_eq!(setup.theme, "light");
        assert_eq!(setup.sampling.temperature, Some(0.2));
        let (_, problems) = Remembered::parse(Some(("s.toml", "theme = 3")), None);
        assert!(problems[0].starts_with("s.toml: "), "{problems:?}");
    }

    /// A file as a user keeps it: comments, a key of a newer toolscope, their own order.
    const HAND_EDITED: &str = "# my settings\nmodel = \"demo-1\" # the one I use\ntheme = \"dark\"\nfuture_key = 7\n\n[sampling]\n# cooler\ntemperature = 0.3\ntemprature = 0.1\nstop = []\n";

    /// An app started as the command line would start it: the file read, then flags laid over.
    fn started_with_flags() -> App {
        let (state, problems) = Remembered::parse(Some(("settings.toml", HAND_EDITED)), None);
        assert_eq!(
            problems,
            [
                "settings.toml: unknown key \"future_key\" ignored (kept in the file)",
                "settings.toml: unknown key \"sampling.temprature\" ignored (kept in the file)"
            ]
        );
        let mut setup = Setup::default();
        state.apply(&mut setup, &crate::app::providers::all());
        // `--theme light --model flag-model --base-url …` for this run only.
        setup.theme = "light".into();
        setup.model = "flag-model".into();
        setup.base_url = Some("http://127.0.0.1:9/v1".into());
        App::new(setup, Themes::built_in())
    }

    /// Issue 25, point 8: flags are for one run. Quitting without a change in the playground
    /// writes nothing; a change writes that setting alone, as an edit that keeps the comments
    /// and the keys toolscope does not know.
    #[test]
    fn only_what_changed_in_the_app_is_written_over_the_hand_edited_file() {
        let mut app = started_with_flags();
        let r = Remembered::of(&app, true);
        assert_eq!(r.settings_write(Some(Ok(HAND_EDITED))), SettingsWrite::Keep);

        app.theme = "high-contrast".into();
        app.sampling.max_tokens = Some(99);
        let r = Remembered::of(&app, true);
        let SettingsWrite::Edit(text) = r.settings_write(Some(Ok(HAND_EDITED))) else {
            panic!("an edit")
        };
        assert_eq!(
            text,
            "# my settings\nmodel = \"demo-1\" # the one I use\ntheme = \"high-contrast\"\nfuture_key = 7\n\n[sampling]\n# cooler\ntemperature = 0.3\ntemprature = 0.1\nstop = []\nmaxTokens = 99\n"
        );
        // With no file yet, the changes alone make it.
        let SettingsWrite::Edit(fresh) = r.settings_write(None) else {
            panic!("an edit")
        };
        assert_eq!(
            fresh,
            "theme = \"high-contrast\"\n\n[sampling]\nmaxTokens = 99\n"
        );
    }

    /// A setting changed and changed back is written back too (the base moves on with each
    /// write); a setting cleared in the app is removed from the file.
    #[test]
    fn a_setting_changed_back_or_cleared_is_written() {
        let mut app = started_with_flags();
        app.state.settings = Some("settings.toml".into());
        let mut fx = Vec::new();
        app.theme = "high-contrast".into();
        crate::app::runs::remember(&mut app, false, &mut fx);
        assert_eq!(app.settings_base.theme.as_deref(), Some("high-contrast"));
        app.theme = "light".into();
        app.sampling.temperature = None;
        let r = Remembered::of(&app, false);
        let SettingsWrite::Edit(text) =
            r.settings_write(Some(Ok(&HAND_EDITED.replace("dark", "high-contrast"))))
        else {
            panic!("an edit")
        };
        assert!(text.contains("theme = \"light\""), "{text}");
        assert!(!text.contains("temperature"), "{text}");
        assert!(text.contains("# the one I use"), "{text}");
    }

    /// A file that could not be read is replaced (by the changes alone) only when something
    /// changed, and then as a replacement the driver backs the file up for.
    #[test]
    fn an_unreadable_file_is_replaced_only_with_a_change_and_said_so() {
        let mut app = started_with_flags();
        let broken = "theme = [unclosed";
        let (_, problems) = Remembered::parse(Some(("s.toml", broken)), None);
        assert!(problems[0].contains("a backup is kept"), "{problems:?}");
        let r = Remembered::of(&app, false);
        assert_eq!(r.settings_write(Some(Ok(broken))), SettingsWrite::Keep);
        app.theme = "high-contrast".into();
        let r = Remembered::of(&app, false);
        let want = SettingsWrite::Replace("theme = \"high-contrast\"\n".into());
        assert_eq!(r.settings_write(Some(Ok(broken))), want);
        assert_eq!(r.settings_write(Some(Ok("theme = 3"))), want);
        assert_eq!(r.settings_write(Some(Err(()))), want);
        assert!(!Remembered::last_readable("{\"tools\": 3}"));
        assert!(Remembered::last_readable("{\"tools\": \"[]\"}"));
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
