//! Themes are data: TOML files in `themes/`, embedded in the binary, looked up by name in the
//! user's theme directory first, then among the built-in ones.
//!
//! Every theme is read on top of the built-in dark one, so a user theme only needs the keys it
//! changes, and a built-in theme cannot forget a colour. Unknown keys are errors (a typo in a
//! theme should say so, not silently do nothing).
//!
//! The themes are part of the state (the help overlay switches between them, the text areas are
//! styled with them); the `tui` layer paints with the colours they hold.

use std::path::{Path, PathBuf};

use ratatui::style::Color;
use serde::{Deserialize, Deserializer};

/// The built-in themes, in the order the help overlay offers them. The first is the base of
/// every other theme and the default.
pub const BUILT_IN: [(&str, &str); 3] = [
    ("dark", include_str!("../../themes/dark.toml")),
    ("light", include_str!("../../themes/light.toml")),
    (
        "high-contrast",
        include_str!("../../themes/high-contrast.toml"),
    ),
];

macro_rules! colours {
    ($(#[$doc:meta])* $name:ident { $($field:ident),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $(#[serde(deserialize_with = "colour")] pub $field: Color,)*
        }
    };
}

colours!(
    /// Frames, text and state colours shared by every pane.
    UiColours {
        background, text, muted, border, border_focused, title, title_focused, selection_fg,
        selection_bg, cursor_line_bg, accent, error, warning, success, status_fg, status_bg,
        overlay_bg,
    }
);
colours!(
    /// The Raw pane: streamed text, the spans that became calls, reasoning, escapes, wire events.
    RawColours { text, call_fg, call_bg, malformed_fg, malformed_bg, reasoning, escape, wire }
);
colours!(
    /// The Parts pane: one colour per kind of part, and the coercion/violation marks.
    PartColours { text, reasoning, tool_input, tool_call, finish, error, coerced, invalid }
);
colours!(
    /// JSON highlighting (syntect scopes are mapped onto these).
    SyntaxColours { key, string, number, keyword, punctuation, invalid }
);

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Theme {
    pub name: String,
    pub ui: UiColours,
    pub raw: RawColours,
    pub parts: PartColours,
    pub syntax: SyntaxColours,
}

fn colour<'de, D: Deserializer<'de>>(d: D) -> Result<Color, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Index(u8),
        Text(String),
    }
    match Raw::deserialize(d)? {
        Raw::Index(i) => Ok(Color::Indexed(i)),
        Raw::Text(s) => s
            .parse::<Color>()
            .map_err(|_| serde::de::Error::custom(format!("\"{s}\" is not a colour"))),
    }
}

impl Theme {
    /// Reads a theme from TOML text, taking every key it lacks from the base (dark) theme. A
    /// theme without a `name` is called `default_name` (its file's name), so that it never
    /// replaces a built-in theme by accident. An error names the key at fault.
    pub fn from_toml_named(text: &str, default_name: &str) -> Result<Theme, String> {
        let mut base: toml::Table =
            toml::from_str(BUILT_IN[0].1).map_err(|e| format!("built-in theme: {e}"))?;
        let mut over: toml::Table =
            toml::from_str(text).map_err(|e| e.message().trim().to_string())?;
        check_keys(&base, &over, "")?;
        if !over.contains_key("name") {
            over.insert("name".into(), toml::Value::String(default_name.into()));
        }
        merge(&mut base, over);
        toml::Value::Table(base)
            .try_into::<Theme>()
            .map_err(|e| e.message().trim().to_string())
    }

    /// [`Theme::from_toml_named`] for a theme that names itself (a built-in one).
    pub fn from_toml(text: &str) -> Result<Theme, String> {
        Theme::from_toml_named(text, "unnamed")
    }

    pub fn dark() -> Theme {
        Theme::from_toml(BUILT_IN[0].1).expect("the built-in dark theme is valid")
    }
}

/// Every key of `over` must be a key of `base` (the dark theme, which has them all), a table
/// where `base` has a table, and a colour where `base` has one.
fn check_keys(base: &toml::Table, over: &toml::Table, path: &str) -> Result<(), String> {
    for (key, value) in over {
        let full = if path.is_empty() {
            key.clone()
        } else {
            format!("{path}.{key}")
        };
        match (base.get(key), value) {
            (None, _) => {
                let known: Vec<&str> = base.keys().map(String::as_str).collect();
                return Err(format!(
                    "unknown key `{full}` (expected one of: {})",
                    known.join(", ")
                ));
            }
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => check_keys(b, o, &full)?,
            (Some(toml::Value::Table(_)), _) => {
                return Err(format!("`{full}` must be a table ([{full}])"));
            }
            (Some(_), v) if key == "name" => {
                if !v.is_str() {
                    return Err("`name` must be a string".into());
                }
            }
            (Some(_), toml::Value::Integer(i)) if (0..=255).contains(i) => {}
            (Some(_), toml::Value::String(s)) => {
                if s.parse::<Color>().is_err() {
                    return Err(format!(
                        "`{full}`: \"{s}\" is not a colour (a name, #rrggbb or 0–255)"
                    ));
                }
            }
            (Some(_), other) => {
                return Err(format!(
                    "`{full}`: {other} is not a colour (a name, #rrggbb or 0–255)"
                ));
            }
        }
    }
    Ok(())
}

fn merge(base: &mut toml::Table, over: toml::Table) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(key, v);
            }
        }
    }
}

/// Every theme available: the built-in ones, replaced or joined by the user's.
#[derive(Clone, Debug)]
pub struct Themes {
    themes: Vec<Theme>,
}

impl Default for Themes {
    fn default() -> Self {
        Themes::built_in()
    }
}

impl Themes {
    pub fn built_in() -> Themes {
        Themes {
            themes: BUILT_IN
                .iter()
                .map(|(_, text)| Theme::from_toml(text).expect("built-in themes are valid"))
                .collect(),
        }
    }

    /// The built-in themes plus every `*.toml` in `user_dir` (a user theme with a built-in name
    /// replaces it). Returns the problems found in user files, which do not stop the others.
    pub fn load(user_dir: Option<&Path>) -> (Themes, Vec<String>) {
        let mut themes = Themes::built_in();
        let mut problems = Vec::new();
        let Some(dir) = user_dir else {
            return (themes, problems);
        };
        let Ok(entries) = std::fs::read_dir(dir) else {
            return (themes, problems);
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        paths.sort();
        for path in paths {
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            match std::fs::read_to_string(&path)
                .map_err(|e| e.to_string())
                .and_then(|t| Theme::from_toml_named(&t, &stem))
            {
                Ok(theme) => themes.insert(theme),
                Err(e) => problems.push(format!("{}: {e}", path.display())),
            }
        }
        (themes, problems)
    }

    /// Adds a theme, replacing one of the same name.
    pub fn insert(&mut self, theme: Theme) {
        match self.themes.iter_mut().find(|t| t.name == theme.name) {
            Some(slot) => *slot = theme,
            None => self.themes.push(theme),
        }
    }

    pub fn names(&self) -> Vec<String> {
        self.themes.iter().map(|t| t.name.clone()).collect()
    }

    /// The theme of this name, or the default one.
    pub fn get(&self, name: &str) -> &Theme {
        self.themes
            .iter()
            .find(|t| t.name == name)
            .unwrap_or(&self.themes[0])
    }

    pub fn contains(&self, name: &str) -> bool {
        self.themes.iter().any(|t| t.name == name)
    }
}

/// The colour a terminal draws, in sRGB: named and indexed colours as xterm's default palette
/// draws them (what most terminals start from). `None` for the terminal's own default colour.
pub fn rgb(c: Color) -> Option<(u8, u8, u8)> {
    const ANSI: [(u8, u8, u8); 16] = [
        (0, 0, 0),
        (205, 0, 0),
        (0, 205, 0),
        (205, 205, 0),
        (0, 0, 238),
        (205, 0, 205),
        (0, 205, 205),
        (229, 229, 229),
        (127, 127, 127),
        (255, 0, 0),
        (0, 255, 0),
        (255, 255, 0),
        (92, 92, 255),
        (255, 0, 255),
        (0, 255, 255),
        (255, 255, 255),
    ];
    let index = match c {
        Color::Reset => return None,
        Color::Rgb(r, g, b) => return Some((r, g, b)),
        Color::Black => 0,
        Color::Red => 1,
        Color::Green => 2,
        Color::Yellow => 3,
        Color::Blue => 4,
        Color::Magenta => 5,
        Color::Cyan => 6,
        Color::Gray => 7,
        Color::DarkGray => 8,
        Color::LightRed => 9,
        Color::LightGreen => 10,
        Color::LightYellow => 11,
        Color::LightBlue => 12,
        Color::LightMagenta => 13,
        Color::LightCyan => 14,
        Color::White => 15,
        Color::Indexed(i) => i,
    };
    Some(match index {
        0..=15 => ANSI[index as usize],
        // The 6×6×6 cube.
        16..=231 => {
            let level = |v: u8| if v == 0 { 0 } else { 55 + 40 * v };
            let v = index - 16;
            (level(v / 36), level(v / 6 % 6), level(v % 6))
        }
        // The grey ramp.
        _ => {
            let g = 8 + 10 * (index - 232);
            (g, g, g)
        }
    })
}

/// WCAG 2's contrast ratio of two colours (1 to 21); `None` when either is the terminal's
/// default, which toolscope cannot know.
pub fn contrast(a: Color, b: Color) -> Option<f64> {
    fn luminance((r, g, b): (u8, u8, u8)) -> f64 {
        let lin = |v: u8| {
            let c = f64::from(v) / 255.0;
            if c <= 0.04045 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
    }
    let (la, lb) = (luminance(rgb(a)?), luminance(rgb(b)?));
    let (hi, lo) = if la > lb { (la, lb) } else { (lb, la) };
    Some((hi + 0.05) / (lo + 0.05))
}

impl Theme {
    /// Every pair of colours the panes draw text with, as `(what, text, background)`: each
    /// colour of text on the pane and overlay backgrounds, the status line's
    /// colours on its background, the selection, search matches, and the Raw pane's call and
    /// malformed marks. (A selected row is drawn in the selection's colours whatever its
    /// parts' colours, so those are not paired with the selection background.)
    pub fn text_pairs(&self) -> Vec<(String, Color, Color)> {
        let (u, r, p, x) = (&self.ui, &self.raw, &self.parts, &self.syntax);
        let on_panes = [
            ("ui.text", u.text),
            ("ui.muted", u.muted),
            ("ui.title", u.title),
            ("ui.title_focused", u.title_focused),
            ("ui.accent", u.accent),
            ("ui.error", u.error),
            ("ui.warning", u.warning),
            ("ui.success", u.success),
            ("raw.text", r.text),
            ("raw.reasoning", r.reasoning),
            ("raw.escape", r.escape),
            ("raw.wire", r.wire),
            ("parts.text", p.text),
            ("parts.reasoning", p.reasoning),
            ("parts.tool_input", p.tool_input),
            ("parts.tool_call", p.tool_call),
            ("parts.finish", p.finish),
            ("parts.error", p.error),
            ("parts.coerced", p.coerced),
            ("parts.invalid", p.invalid),
            ("syntax.key", x.key),
            ("syntax.string", x.string),
            ("syntax.number", x.number),
            ("syntax.keyword", x.keyword),
            ("syntax.punctuation", x.punctuation),
            ("syntax.invalid", x.invalid),
        ];
        let backgrounds = [
            ("ui.background", u.background),
            ("ui.overlay_bg", u.overlay_bg),
        ];
        let mut pairs = Vec::new();
        for (bn, bg) in backgrounds {
            for (fname, fg) in on_panes {
                pairs.push((format!("{fname} on {bn}"), fg, bg));
            }
        }
        for (fname, fg) in [
            ("ui.status_fg", u.status_fg),
            ("ui.muted", u.muted),
            ("ui.accent", u.accent),
            ("ui.error", u.error),
            ("ui.warning", u.warning),
            ("ui.success", u.success),
        ] {
            pairs.push((format!("{fname} on ui.status_bg"), fg, u.status_bg));
        }
        pairs.push((
            "ui.selection_fg on ui.selection_bg".into(),
            u.selection_fg,
            u.selection_bg,
        ));
        pairs.push((
            "ui.background on ui.warning (a search match)".into(),
            u.background,
            u.warning,
        ));
        pairs.push(("raw.call_fg on raw.call_bg".into(), r.call_fg, r.call_bg));
        pairs.push((
            "raw.malformed_fg on raw.malformed_bg".into(),
            r.malformed_fg,
            r.malformed_bg,
        ));
        pairs
    }

    /// The pairs of [`Theme::text_pairs`] whose contrast is under WCAG's 4.5:1 for text, with
    /// their ratio.
    pub fn low_contrast(&self) -> Vec<(String, f64)> {
        self.text_pairs()
            .into_iter()
            .filter_map(|(what, fg, bg)| {
                let ratio = contrast(fg, bg)?;
                (ratio < 4.5).then_some((what, ratio))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contrast_follows_wcag() {
        let ratio = |a, b| (contrast(a, b).unwrap() * 100.0).round() / 100.0;
        assert_eq!(ratio(Color::Black, Color::White), 21.0);
        assert_eq!(ratio(Color::White, Color::White), 1.0);
        assert_eq!(ratio(Color::Rgb(0x76, 0x76, 0x76), Color::White), 4.54);
        assert_eq!(rgb(Color::Indexed(196)), Some((255, 0, 0)));
        assert_eq!(rgb(Color::Indexed(244)), Some((128, 128, 128)));
        assert_eq!(contrast(Color::Reset, Color::White), None);
    }

    /// Issue 30: every built-in theme's text is readable: WCAG's 4.5:1 for every pair of
    /// colours the panes draw text with (in high contrast, the status line's hints were light
    /// grey on white, and a selected error row light red on yellow).
    #[test]
    fn every_built_in_theme_passes_the_contrast_check() {
        let (themes, problems) = Themes::load(None);
        assert!(problems.is_empty(), "{problems:?}");
        let mut failures = Vec::new();
        for name in themes.names() {
            let theme = themes.get(&name);
            for (what, ratio) in theme.low_contrast() {
                failures.push(format!("{name}: {what}: {ratio:.2}"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn built_in_themes_parse_and_are_distinct() {
        let themes = Themes::built_in();
        assert_eq!(themes.names(), ["dark", "light", "high-contrast"]);
        assert_ne!(themes.get("dark").ui.text, themes.get("light").ui.text);
        assert_eq!(themes.get("nope").name, "dark");
    }

    #[test]
    fn a_user_theme_needs_only_the_keys_it_changes() {
        let t = Theme::from_toml("name = \"mine\"\n[ui]\ntext = \"#010203\"\n").unwrap();
        assert_eq!(t.ui.text, Color::Rgb(1, 2, 3));
        assert_eq!(t.syntax, Theme::dark().syntax);
        let bad = Theme::from_toml("name = \"x\"\n[ui]\ntxet = \"red\"\n").unwrap_err();
        assert!(bad.starts_with("unknown key `ui.txet`"), "{bad}");
        let bad = Theme::from_toml("name = \"x\"\n[ui]\ntext = \"nocolour\"\n").unwrap_err();
        assert!(bad.starts_with("`ui.text`: \"nocolour\""), "{bad}");
        let unnamed = Theme::from_toml_named("[ui]\ntext = \"red\"\n", "mine").unwrap();
        assert_eq!(unnamed.name, "mine");
    }

    #[test]
    fn user_themes_replace_and_extend() {
        let dir = std::env::temp_dir().join(format!("toolscope-themes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("a.toml"),
            "name = \"light\"\n[ui]\ntext = \"red\"\n",
        )
        .unwrap();
        std::fs::write(dir.join("b.toml"), "name = \"solar\"\n").unwrap();
        std::fs::write(dir.join("c.toml"), "not toml [").unwrap();
        let (themes, problems) = Themes::load(Some(&dir));
        assert_eq!(themes.names(), ["dark", "light", "high-contrast", "solar"]);
        assert_eq!(themes.get("light").ui.text, Color::Red);
        assert_eq!(problems.len(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
