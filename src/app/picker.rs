//! The provider and model picker (Ctrl+P): a provider from the closed list, a model typed or
//! chosen from the models the provider lists, an optional base URL checked as it is typed, and
//! the sampling settings (temperature, max tokens, top_p, seed, parallel tool calls, reasoning
//! effort), all applied to the next run.

use ratatui_textarea::TextArea;

use toolscope_core::provider::{ProviderKind, ReasoningEffort, Sampling};

use super::theme::Theme;
use super::{editor, fuzzy, providers, url};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PickerField {
    Provider,
    Model,
    BaseUrl,
    Temperature,
    MaxTokens,
    TopP,
    Seed,
    Parallel,
    Effort,
}

impl PickerField {
    /// Every field, in Tab order.
    pub const ALL: [PickerField; 9] = [
        PickerField::Provider,
        PickerField::Model,
        PickerField::BaseUrl,
        PickerField::Temperature,
        PickerField::MaxTokens,
        PickerField::TopP,
        PickerField::Seed,
        PickerField::Parallel,
        PickerField::Effort,
    ];

    /// The field's label.
    pub fn label(self) -> &'static str {
        match self {
            PickerField::Provider => "provider",
            PickerField::Model => "model",
            PickerField::BaseUrl => "base URL",
            PickerField::Temperature => "temperature",
            PickerField::MaxTokens => "max tokens",
            PickerField::TopP => "top_p",
            PickerField::Seed => "seed",
            PickerField::Parallel => "parallel calls",
            PickerField::Effort => "reasoning",
        }
    }
}

/// The models of the picked provider, as far as they are known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelList {
    /// Not asked (yet) for this provider and base URL.
    NotAsked,
    Listing {
        provider: ProviderKind,
        base_url: Option<String>,
    },
    Listed {
        provider: ProviderKind,
        base_url: Option<String>,
        names: Vec<String>,
    },
    Failed {
        provider: ProviderKind,
        base_url: Option<String>,
        why: String,
    },
}

pub struct Picker {
    /// The providers offered ([`providers::all`]).
    pub providers: Vec<ProviderKind>,
    /// Index into `providers`.
    pub provider: usize,
    pub model: TextArea<'static>,
    pub base_url: TextArea<'static>,
    pub temperature: TextArea<'static>,
    pub max_tokens: TextArea<'static>,
    pub top_p: TextArea<'static>,
    pub seed: TextArea<'static>,
    /// `None`: the provider's default.
    pub parallel: Option<bool>,
    /// `None`: the provider's default.
    pub effort: Option<ReasoningEffort>,
    pub field: PickerField,
    pub models: ModelList,
    /// The listed model chosen with ↑/↓ (an index into [`Picker::shown_models`]); `None`: the
    /// typed name.
    pub model_choice: Option<usize>,
    /// The provider the model field was filled for (changing provider refills it).
    filled_for: usize,
}

/// A model name to start from when switching to a provider; the field stays editable.
pub fn suggested_model(kind: ProviderKind) -> &'static str {
    providers::resolve(kind).spec().suggested_model
}

/// A one-line field holding `text`, the cursor at its end.
fn field(text: &str) -> TextArea<'static> {
    let mut t = editor::editor(text);
    t.move_cursor(ratatui_textarea::CursorMove::End);
    t
}

fn number<T: ToString>(v: Option<T>) -> TextArea<'static> {
    let mut t = field(&v.map(|v| v.to_string()).unwrap_or_default());
    t.set_placeholder_text("default");
    t
}

/// What the picker applies.
#[derive(Clone, Debug, PartialEq)]
pub struct Chosen {
    pub provider: ProviderKind,
    pub model: String,
    pub base_url: Option<String>,
    pub sampling: Sampling,
}

impl Picker {
    pub fn new(
        kind: ProviderKind,
        model: &str,
        base_url: Option<&str>,
        sampling: &Sampling,
    ) -> Picker {
        let providers = providers::all();
        let provider = providers.iter().position(|k| *k == kind).unwrap_or(0);
        let mut base = field(base_url.unwrap_or(""));
        base.set_placeholder_text(kind.default_base_url().unwrap_or("built in"));
        Picker {
            providers,
            provider,
            model: field(model),
            base_url: base,
            temperature: number(sampling.temperature),
            max_tokens: number(sampling.max_tokens),
            top_p: number(sampling.top_p),
            seed: number(sampling.seed),
            parallel: sampling.parallel_tool_calls,
            effort: sampling.reasoning_effort,
            field: PickerField::Provider,
            models: ModelList::NotAsked,
            model_choice: None,
            filled_for: provider,
        }
    }

    pub fn kind(&self) -> ProviderKind {
        self.providers[self.provider]
    }

    /// The text area of a text field.
    pub fn editor_mut(&mut self, f: PickerField) -> Option<&mut TextArea<'static>> {
        match f {
            PickerField::Model => Some(&mut self.model),
            PickerField::BaseUrl => Some(&mut self.base_url),
            PickerField::Temperature => Some(&mut self.temperature),
            PickerField::MaxTokens => Some(&mut self.max_tokens),
            PickerField::TopP => Some(&mut self.top_p),
            PickerField::Seed => Some(&mut self.seed),
            PickerField::Provider | PickerField::Parallel | PickerField::Effort => None,
        }
    }

    /// Styles the text areas (only the focused field shows its cursor).
    pub fn restyle(&mut self, theme: &Theme) {
        let on = self.field;
        for f in PickerField::ALL {
            if let Some(t) = self.editor_mut(f) {
                editor::style(t, theme, f == on);
            }
        }
    }

    /// Moves the provider by `step` (wrapping), refilling the model and the base URL hint.
    pub fn step_provider(&mut self, step: isize) {
        let n = self.providers.len() as isize;
        self.provider = (self.provider as isize + step).rem_euclid(n) as usize;
        if self.provider != self.filled_for {
            let kind = self.kind();
            self.model = field(suggested_model(kind));
            self.base_url = field("");
            self.base_url
                .set_placeholder_text(kind.default_base_url().unwrap_or("built in"));
            self.filled_for = self.provider;
            self.models = ModelList::NotAsked;
            self.model_choice = None;
        }
    }

    /// ←/→ on a field of choices.
    pub fn step_choice(&mut self, step: isize) {
        match self.field {
            PickerField::Provider => self.step_provider(step),
            PickerField::Parallel => {
                let all = [None, Some(true), Some(false)];
                let at = all.iter().position(|v| *v == self.parallel).unwrap_or(0) as isize;
                self.parallel = all[(at + step).rem_euclid(3) as usize];
            }
            PickerField::Effort => {
                let mut all = vec![None];
                all.extend(ReasoningEffort::ALL.map(Some));
                let at = all.iter().position(|v| *v == self.effort).unwrap_or(0) as isize;
                self.effort = all[(at + step).rem_euclid(all.len() as isize) as usize];
            }
            _ => {}
        }
    }

    pub fn next_field(&mut self, step: isize) {
        let fields = PickerField::ALL;
        let at = fields.iter().position(|f| *f == self.field).unwrap_or(0) as isize;
        self.field = fields[(at + step).rem_euclid(fields.len() as isize) as usize];
    }

    /// The base URL as typed (`None`: the provider's default).
    pub fn base_url_text(&self) -> Option<String> {
        let base = editor::text_of(&self.base_url).trim().to_string();
        (!base.is_empty()).then_some(base)
    }

    /// What is wrong with the base URL as typed, if anything.
    pub fn base_url_problem(&self) -> Option<String> {
        self.base_url_text().and_then(|u| url::check(&u).err())
    }

    /// The listed models that match what is typed in the model field (all of them when the
    /// field holds one of them exactly or nothing), best match first.
    pub fn shown_models(&self) -> Vec<&str> {
        self.model_rows().into_iter().map(|(n, _)| n).collect()
    }

    /// The listed models the model field's text leaves, fuzzy (its letters in order, the
    /// closest first), each with its matched letters.
    pub fn model_rows(&self) -> Vec<(&str, Vec<usize>)> {
        if self.models_stale() {
            return Vec::new();
        }
        let ModelList::Listed { names, .. } = &self.models else {
            return Vec::new();
        };
        let typed = editor::text_of(&self.model).trim().to_lowercase();
        if names.iter().any(|n| n.to_lowercase() == typed) {
            return names.iter().map(|n| (n.as_str(), Vec::new())).collect();
        }
        fuzzy::filter(&typed, names.iter().map(String::as_str))
            .into_iter()
            .map(|(i, m)| (names[i].as_str(), m.positions))
            .collect()
    }

    /// ↑/↓ in the model field: through the listed models; above the first, back to the typed
    /// name.
    pub fn step_model(&mut self, step: isize) {
        let n = self.shown_models().len() as isize;
        if n == 0 {
            self.model_choice = None;
            return;
        }
        let at = self.model_choice.map_or(-1, |i| i as isize) + step;
        self.model_choice = (at >= 0).then(|| at.min(n - 1) as usize);
    }

    /// Whether what is known of the models is of another provider or base URL than the ones now
    /// in the fields (the URL was edited since): it is not shown, nor chosen from.
    pub fn models_stale(&self) -> bool {
        let asked = self.asked();
        asked.is_some() && asked != Some((self.kind(), self.base_url_text()))
    }

    /// The provider and base URL the models were asked of, if they were.
    fn asked(&self) -> Option<(ProviderKind, Option<String>)> {
        match &self.models {
            ModelList::NotAsked => None,
            ModelList::Listing { provider, base_url }
            | ModelList::Listed {
                provider, base_url, ..
            }
            | ModelList::Failed {
                provider, base_url, ..
            } => Some((*provider, base_url.clone())),
        }
    }

    /// Whether the models of the provider and base URL now picked are to be listed (not asked,
    /// or asked for another provider or URL).
    pub fn wants_listing(&self) -> Option<(ProviderKind, Option<String>)> {
        if self.base_url_problem().is_some() {
            return None;
        }
        let (kind, base) = (self.kind(), self.base_url_text());
        (self.asked() != Some((kind, base.clone()))).then_some((kind, base))
    }

    /// The chosen provider, model, base URL and settings, or the first field that is wrong.
    pub fn chosen(&self) -> Result<Chosen, String> {
        let shown = self.shown_models();
        let model = match self.model_choice.and_then(|i| shown.get(i)) {
            Some(m) => m.to_string(),
            None => editor::text_of(&self.model).trim().to_string(),
        };
        if model.is_empty() {
            return Err("give a model name".into());
        }
        if let Some(p) = self.base_url_problem() {
            return Err(format!("base URL: {p}"));
        }
        let text = |t: &TextArea<'_>| editor::text_of(t).trim().to_string();
        fn parse<T: std::str::FromStr>(
            s: String,
            what: &str,
            ok: impl Fn(&T) -> bool,
        ) -> Result<Option<T>, String> {
            if s.is_empty() {
                return Ok(None);
            }
            match s.parse::<T>() {
                Ok(v) if ok(&v) => Ok(Some(v)),
                _ => Err(format!("{what}: \"{s}\" is not a valid value")),
            }
        }
        let sampling = Sampling {
            temperature: parse(text(&self.temperature), "temperature", |t: &f64| {
                t.is_finite() && *t >= 0.0
            })?,
            max_tokens: parse(text(&self.max_tokens), "max tokens", |n: &u32| *n > 0)?,
            top_p: parse(text(&self.top_p), "top_p", |p: &f64| {
                (0.0..=1.0).contains(p)
            })?,
            seed: parse(text(&self.seed), "seed", |_: &i64| true)?,
            stop: Vec::new(),
            parallel_tool_calls: self.parallel,
            reasoning_effort: self.effort,
            allowed_tools: Vec::new(),
        };
        Ok(Chosen {
            provider: self.kind(),
            model,
            base_url: self.base_url_text(),
            sampling,
        })
    }

    /// What is wrong with field `f` as typed, if anything (shown beside it as it is typed).
    pub fn field_problem(&self, f: PickerField) -> Option<String> {
        match f {
            PickerField::BaseUrl => self.base_url_problem(),
            PickerField::Temperature
            | PickerField::MaxTokens
            | PickerField::TopP
            | PickerField::Seed => {
                let mut probe = Picker::new(self.kind(), "m", None, &Sampling::default());
                let t = |t: &TextArea<'_>| editor::text_of(t);
                match f {
                    PickerField::Temperature => probe.temperature = field(&t(&self.temperature)),
                    PickerField::MaxTokens => probe.max_tokens = field(&t(&self.max_tokens)),
                    PickerField::TopP => probe.top_p = field(&t(&self.top_p)),
                    _ => probe.seed = field(&t(&self.seed)),
                }
                probe.chosen().err()
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_read_and_checked() {
        let mut p = Picker::new(
            ProviderKind::OPENAI,
            "gpt-4o-mini",
            Some("http://localhost:8000/v1"),
            &Sampling::default(),
        );
        assert_eq!(p.base_url.cursor(), (0, "http://localhost:8000/v1".len()));
        p.temperature.insert_str("0.2");
        p.max_tokens.insert_str("256");
        p.field = PickerField::Effort;
        p.step_choice(1);
        p.field = PickerField::Parallel;
        p.step_choice(-1);
        let c = p.chosen().unwrap();
        assert_eq!(c.sampling.temperature, Some(0.2));
        assert_eq!(c.sampling.max_tokens, Some(256));
        assert_eq!(c.sampling.reasoning_effort, Some(ReasoningEffort::Minimal));
        assert_eq!(c.sampling.parallel_tool_calls, Some(false));
        p.top_p.insert_str("3");
        assert!(
            p.field_problem(PickerField::TopP)
                .unwrap()
                .contains("top_p")
        );
        assert!(p.chosen().is_err());
    }

    /// Issue 30: a failure to list the models of a wrong base URL stayed after the URL was
    /// fixed; what is known of another URL's models is neither shown nor chosen from.
    #[test]
    fn what_is_known_of_another_base_url_is_stale() {
        let mut p = Picker::new(
            ProviderKind::OPENAI,
            "m",
            Some("http://127.0.0.1:1/v1"),
            &Sampling::default(),
        );
        let asked = p.wants_listing().unwrap();
        p.models = ModelList::Failed {
            provider: asked.0,
            base_url: asked.1,
            why: "connection refused".into(),
        };
        assert!(!p.models_stale());
        assert_eq!(p.wants_listing(), None);
        // The URL is fixed: the failure is of the old one.
        p.base_url = field("http://127.0.0.1:8080/v1");
        assert!(p.models_stale());
        assert!(p.wants_listing().is_some());
        p.models = ModelList::Listed {
            provider: ProviderKind::OPENAI,
            base_url: Some("http://127.0.0.1:1/v1".into()),
            names: vec!["old".into()],
        };
        assert!(
            p.shown_models().is_empty(),
            "the old URL's models are not offered"
        );
    }

    #[test]
    fn listed_models_filter_as_typed_and_are_chosen_with_arrows() {
        let mut p = Picker::new(ProviderKind::OLLAMA, "", None, &Sampling::default());
        assert_eq!(p.wants_listing(), Some((ProviderKind::OLLAMA, None)));
        p.models = ModelList::Listed {
            provider: ProviderKind::OLLAMA,
            base_url: None,
            names: vec!["llama3.2".into(), "qwen3:8b".into(), "qwen3:32b".into()],
        };
        assert_eq!(p.wants_listing(), None);
        assert_eq!(p.shown_models().len(), 3);
        p.model.insert_str("qwen");
        assert_eq!(p.shown_models(), ["qwen3:8b", "qwen3:32b"]);
        // Fuzzy, the closest first, the matched letters marked.
        p.model = field("q32");
        assert_eq!(
            p.model_rows(),
            [("qwen3:32b", vec![0, 6, 7])],
            "the word start and the run"
        );
        p.model = field("qwen");
        p.step_model(1);
        p.step_model(1);
        assert_eq!(p.chosen().unwrap().model, "qwen3:32b");
        p.step_model(-5);
        assert_eq!(
            p.chosen().unwrap().model,
            "qwen",
            "free entry stays possible"
        );
    }
}
