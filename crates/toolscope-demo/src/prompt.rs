//! Reading a user prompt the way the demo model needs it.
//!
//! The demo model has no language model behind it: it decides from the words of the latest user
//! prompt. This module turns a prompt into what those decisions use: word stems (for matching
//! tools and enum values), capitalised names and lists of them ("Paris and Tokyo"), numbers with
//! their neighbouring words, quoted strings, paths, URLs, e-mail addresses, dates, an arithmetic
//! expression, and the prompt's subject (what a `query` argument should hold).

use std::collections::HashSet;

/// Words that carry no meaning for matching a tool or filling an argument.
const STOPWORDS: &[&str] = &[
    "a", "about", "above", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at",
    "be", "been", "being", "but", "by", "can", "could", "did", "do", "does", "doing", "done",
    "each", "for", "from", "get", "give", "go", "going", "had", "has", "have", "he", "hello",
    "her", "here", "hey", "hi", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its",
    "just", "know", "let", "like", "may", "me", "might", "more", "most", "much", "must", "my",
    "need", "no", "not", "now", "of", "on", "or", "our", "out", "over", "please", "pls", "right",
    "say", "she", "should", "show", "so", "some", "tell", "than", "thank", "thanks", "that", "the",
    "their", "them", "then", "there", "these", "they", "this", "those", "to", "too", "under", "up",
    "us", "very", "want", "was", "we", "were", "what", "when", "where", "which", "who", "whom",
    "whose", "why", "will", "with", "would", "yes", "you", "your",
];

/// Verbs and fillers that open a request ("Search the web for …") and are not its subject.
#[rustfmt::skip]
const COMMAND_WORDS: &[&str] = &[
    "check", "fetch", "find", "look", "lookup", "search", "make", "run", "call", "use", "using",
    "web", "internet", "online", "quick", "quickly", "current", "currently", "latest", "today",
];

/// Words that open a sentence with a capital letter without being names ("Plan a trip", "Book
/// a table"): at the start of a sentence, a capitalised word is a name only when it is none of
/// these and no word of the tools.
#[rustfmt::skip]
const SENTENCE_OPENERS: &[&str] = &[
    "add", "ask", "book", "buy", "calculate", "cancel", "change", "compare", "compute", "convert",
    "create", "delete", "describe", "draft", "explain", "forecast", "help", "list", "open", "order",
    "plan", "read", "recommend", "remind", "remove", "reserve", "schedule", "send", "set", "start",
    "stop", "suggest", "summarise", "summarize", "translate", "try", "update", "write", "weather",
    "ok", "okay", "yo",
];

/// Capitalised words that are not names of places, people or things: days, months, and
/// contractions with a capital letter.
#[rustfmt::skip]
const NOT_NAMES: &[&str] = &[
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "january",
    "february", "march", "april", "june", "july", "august", "september", "october", "november",
    "december", "i'm", "i've", "i'd", "i'll", "don't", "doesn't", "didn't", "can't", "won't",
    "isn't", "aren't", "wasn't", "shouldn't", "wouldn't", "couldn't", "mr", "mrs", "ms", "dr",
];

/// Words that join the items of a list ("Paris and Tokyo", "Rust or Go").
const LIST_JOINERS: &[&str] = &["and", "or", "vs", "versus", "plus"];

/// One word of the prompt.
#[derive(Clone, Debug, PartialEq)]
pub struct Word {
    /// As written.
    pub text: String,
    /// Lower-cased and lightly stemmed.
    pub stem: String,
    /// Byte offsets into the prompt.
    pub start: usize,
    pub end: usize,
    /// The first word of a sentence (so its capital letter says nothing).
    pub sentence_start: bool,
}

/// A number written in the prompt and where.
#[derive(Clone, Debug, PartialEq)]
pub struct NumberAt {
    pub value: f64,
    /// The index of its word in [`Prompt::words`].
    pub word: usize,
}

/// A capitalised name (one or more words, "New York") and the word before it.
#[derive(Clone, Debug, PartialEq)]
pub struct Name {
    pub text: String,
    pub first_word: usize,
    pub last_word: usize,
    /// The stem of the word before the name ("in", "from", "to"), if any.
    pub after: Option<String>,
}

/// A prompt taken apart.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Prompt {
    pub text: String,
    pub words: Vec<Word>,
    pub names: Vec<Name>,
    /// Groups of two or more names joined by "and", "or" or commas, in order.
    pub lists: Vec<Vec<String>>,
    pub numbers: Vec<NumberAt>,
    pub quoted: Vec<String>,
    pub paths: Vec<String>,
    pub urls: Vec<String>,
    pub emails: Vec<String>,
    pub dates: Vec<String>,
    /// Clock times as `HH:MM`.
    pub times: Vec<String>,
    /// Arithmetic such as `12 * (3 + 4)`, if the prompt holds some.
    pub expression: Option<String>,
    /// What the prompt is about, for query-like arguments.
    pub subject: String,
    /// The fenced blocks (```` ``` ````) of the prompt, byte for byte: the text after the
    /// opening fence's line up to the closing fence, its last newline included. The rest of the
    /// prompt is read without them.
    pub blocks: Vec<String>,
}

impl Prompt {
    /// Takes a prompt apart. `vocabulary` holds the stems of the tools' names and descriptions:
    /// a capitalised word at the start of a sentence counts as a name only when it is not one of
    /// them ("Weather in Paris" names Paris, not Weather).
    pub fn analyse(text: &str, vocabulary: &HashSet<String>) -> Prompt {
        let (rest, blocks) = take_fenced_blocks(text);
        let text = rest.as_str();
        let words = split_words(text);
        let names = find_names(text, &words, vocabulary);
        let lists = find_lists(&words, &names);
        let numbers = find_numbers(&words);
        let quoted = find_quoted(text);
        let Shaped {
            paths,
            urls,
            emails,
            dates,
            times,
        } = find_shaped_tokens(text);
        let expression = find_expression(text);
        let subject = find_subject(text, &words, &quoted);
        Prompt {
            text: text.to_string(),
            words,
            names,
            lists,
            numbers,
            quoted,
            paths,
            urls,
            emails,
            dates,
            times,
            expression,
            subject,
            blocks,
        }
    }

    /// The stems of the words that carry meaning (no stopwords), without repeats.
    pub fn content_stems(&self) -> HashSet<String> {
        self.words
            .iter()
            .filter(|w| !is_stopword(&w.stem))
            .map(|w| w.stem.clone())
            .collect()
    }

    /// True when the prompt holds a word with this stem.
    pub fn mentions(&self, stem: &str) -> bool {
        self.words.iter().any(|w| w.stem == stem)
    }

    /// Content words in order, without repeats, for keyword-like arrays (tags, keywords).
    pub fn keywords(&self) -> Vec<String> {
        let mut seen = HashSet::new();
        self.words
            .iter()
            .filter(|w| !is_stopword(&w.stem) && !is_command_word(&w.stem))
            .filter(|w| !w.text.chars().all(|c| c.is_ascii_digit()))
            .filter(|w| seen.insert(w.stem.clone()))
            .map(|w| w.text.to_lowercase())
            .collect()
    }
}

pub fn is_stopword(stem: &str) -> bool {
    STOPWORDS.contains(&stem)
}

fn is_command_word(stem: &str) -> bool {
    COMMAND_WORDS.contains(&stem)
}

/// Lower-cases a word and strips the commonest English endings, so that "cities" meets "city"
/// and "searching" meets "search". Deliberately light: it only has to make the same word in two
/// places agree, not produce dictionary roots.
pub fn stem(word: &str) -> String {
    let mut w = word.to_lowercase().replace('’', "'");
    for suffix in ["'s", "'"] {
        if let Some(s) = w.strip_suffix(suffix) {
            w = s.to_string();
        }
    }
    let n = w.chars().count();
    if !w.chars().all(|c| c.is_alphabetic()) || n <= 3 {
        return w;
    }
    if let Some(s) = w.strip_suffix("ies") {
        return format!("{s}y");
    }
    for suffix in ["ches", "shes", "sses", "xes", "zes"] {
        if w.ends_with(suffix) {
            return w[..w.len() - 2].to_string();
        }
    }
    if n > 5
        && let Some(s) = w.strip_suffix("ing")
    {
        return s.to_string();
    }
    if n > 4
        && let Some(s) = w.strip_suffix("ed")
    {
        return s.to_string();
    }
    if w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") && !w.ends_with("is") {
        w.pop();
    }
    w
}

/// The words of an identifier or a sentence: `get_weather`, `getWeather`, `get-weather` and
/// "get weather" all give `["get", "weather"]`, stemmed.
pub fn stems_of(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
        if c.is_alphanumeric() || c == '\'' {
            if c.is_uppercase() && prev_lower && !current.is_empty() {
                out.push(stem(&current));
                current.clear();
            }
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
            current.push(c);
        } else {
            if !current.is_empty() {
                out.push(stem(&current));
                current.clear();
            }
            prev_lower = false;
        }
    }
    if !current.is_empty() {
        out.push(stem(&current));
    }
    out
}

fn split_words(text: &str) -> Vec<Word> {
    let mut words = Vec::new();
    let mut sentence_start = true;
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        // A full stop ends a sentence only before a space or the end ("main.rs" is one token).
        let ends_sentence = matches!(c, '!' | '?' | '\n')
            || (c == '.' && chars.peek().is_none_or(|(_, n)| n.is_whitespace()));
        if ends_sentence {
            sentence_start = true;
            continue;
        }
        let starts_number = c.is_ascii_digit()
            || (c == '-'
                && chars.peek().is_some_and(|(_, n)| n.is_ascii_digit())
                && !text[..start].ends_with(|p: char| p.is_alphanumeric()));
        if !c.is_alphanumeric() && !starts_number {
            continue;
        }
        let mut end = start + c.len_utf8();
        while let Some(&(i, n)) = chars.peek() {
            let inner_mark = matches!(n, '\'' | '’' | '.' | ',')
                && text[i + n.len_utf8()..]
                    .chars()
                    .next()
                    .is_some_and(|after| after.is_alphanumeric());
            // A decimal point or thousands comma stays inside a number; an apostrophe stays
            // inside a word ("what's"). A full stop between two words ends the sentence instead.
            let keep = n.is_alphanumeric()
                || (inner_mark && starts_number && matches!(n, '.' | ','))
                || (inner_mark && !starts_number && matches!(n, '\'' | '’'));
            if !keep {
                break;
            }
            end = i + n.len_utf8();
            chars.next();
        }
        let word = &text[start..end];
        words.push(Word {
            text: word.to_string(),
            stem: stem(word),
            start,
            end,
            sentence_start,
        });
        sentence_start = false;
    }
    words
}

fn is_capitalised(word: &str) -> bool {
    let mut chars = word.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    first.is_uppercase() && word.chars().any(|c| c.is_alphabetic())
}

fn find_names(text: &str, words: &[Word], vocabulary: &HashSet<String>) -> Vec<Name> {
    let counts_as_name = |w: &Word| {
        if !is_capitalised(&w.text)
            || w.text == "I"
            || NOT_NAMES.contains(&w.text.to_lowercase().replace('’', "'").as_str())
            || is_stopword(&w.stem)
            || is_command_word(&w.stem)
        {
            return false;
        }
        !w.sentence_start
            || !(vocabulary.contains(&w.stem) || SENTENCE_OPENERS.contains(&w.stem.as_str()))
    };
    let mut names: Vec<Name> = Vec::new();
    let mut i = 0;
    while i < words.len() {
        if !counts_as_name(&words[i]) {
            i += 1;
            continue;
        }
        // Capitalised words separated by single spaces form one name ("New York").
        let mut last = i;
        while last + 1 < words.len()
            && is_capitalised(&words[last + 1].text)
            && !is_stopword(&words[last + 1].stem)
            && &text[words[last].end..words[last + 1].start] == " "
        {
            last += 1;
        }
        let text_of_name = text[words[i].start..words[last].end].to_string();
        if !names.iter().any(|n| n.text == text_of_name) {
            names.push(Name {
                text: text_of_name,
                first_word: i,
                last_word: last,
                after: i.checked_sub(1).map(|p| words[p].stem.clone()),
            });
        }
        i = last + 1;
    }
    names
}

fn find_lists(words: &[Word], names: &[Name]) -> Vec<Vec<String>> {
    let mut lists: Vec<Vec<String>> = Vec::new();
    let mut current: Vec<String> = Vec::new();
    for (k, name) in names.iter().enumerate() {
        let joined = k > 0 && {
            let prev = &names[k - 1];
            let between = &words[prev.last_word + 1..name.first_word];
            between.len() <= 2
                && between
                    .iter()
                    .all(|w| LIST_JOINERS.contains(&w.stem.as_str()))
        };
        if !joined {
            if current.len() >= 2 {
                lists.push(std::mem::take(&mut current));
            }
            current.clear();
        }
        current.push(name.text.clone());
    }
    if current.len() >= 2 {
        lists.push(current);
    }
    lists
}

fn find_numbers(words: &[Word]) -> Vec<NumberAt> {
    words
        .iter()
        .enumerate()
        .filter_map(|(i, w)| {
            let plain: String = w.text.chars().filter(|c| *c != ',').collect();
            let value: f64 = plain.parse().ok()?;
            value.is_finite().then_some(NumberAt { value, word: i })
        })
        .collect()
}

/// The prompt without its fenced blocks (each left as one space), and the blocks. A fence left
/// open runs to the end of the prompt.
fn take_fenced_blocks(text: &str) -> (String, Vec<String>) {
    const FENCE: &str = "```";
    let mut rest = String::with_capacity(text.len());
    let mut blocks = Vec::new();
    let mut from = 0;
    while let Some(open) = text[from..].find(FENCE).map(|i| from + i) {
        // The language tag runs to the end of the fence's line.
        let Some(line_end) = text[open..].find('\n').map(|i| open + i) else {
            break;
        };
        let start = line_end + 1;
        let (block_end, after) = if text[start..].starts_with(FENCE) {
            (start, start + FENCE.len())
        } else {
            match text[start..].find("\n```").map(|i| start + i) {
                Some(close) => (close + 1, close + 1 + FENCE.len()),
                None => (text.len(), text.len()),
            }
        };
        rest.push_str(&text[from..open]);
        rest.push(' ');
        blocks.push(text[start..block_end].to_string());
        from = after;
    }
    rest.push_str(&text[from..]);
    (rest, blocks)
}

fn find_quoted(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (open, close) in [('"', '"'), ('“', '”'), ('\'', '\''), ('`', '`')] {
        let mut rest = text;
        while let Some(a) = rest.find(open) {
            let after = &rest[a + open.len_utf8()..];
            // A quote opens a quotation only at the start of a word, not in "what's".
            if rest[..a]
                .chars()
                .next_back()
                .is_some_and(|p| p.is_alphanumeric())
            {
                rest = after;
                continue;
            }
            let Some(b) = after.find(close) else {
                break;
            };
            let inner = after[..b].trim();
            if !inner.is_empty() && inner.len() <= 200 {
                out.push(inner.to_string());
            }
            rest = &after[b + close.len_utf8()..];
        }
    }
    out
}

/// Tokens recognised by their shape.
#[derive(Default)]
struct Shaped {
    paths: Vec<String>,
    urls: Vec<String>,
    emails: Vec<String>,
    dates: Vec<String>,
    times: Vec<String>,
}

/// Paths, URLs, e-mail addresses, ISO dates and clock times: whitespace-separated tokens
/// recognised by their shape.
fn find_shaped_tokens(text: &str) -> Shaped {
    let mut found = Shaped::default();
    let mut previous: Option<&str> = None;
    for raw in text.split_whitespace() {
        let token = raw
            .trim_start_matches(['(', '"', '\'', '`', '“', '<'])
            .trim_end_matches(['.', ',', ';', ':', '!', '?', ')', '"', '\'', '`', '”', '>']);
        if token.is_empty() {
            continue;
        }
        // "7 pm": the number was the token before.
        let split_time = matches!(token.to_lowercase().as_str(), "am" | "pm" | "a.m" | "p.m")
            .then(|| previous.and_then(|n| clock_time(&format!("{n}{token}"))))
            .flatten();
        if let Some(t) = split_time {
            // "7:30 pm": the "7:30" read alone a moment ago was the first half of this one.
            if previous.and_then(clock_time).is_some() {
                found.times.pop();
            }
            found.times.push(t);
        } else if let Some(t) = clock_time(token) {
            found.times.push(t);
        } else if token.contains("://") {
            found.urls.push(token.to_string());
        } else if token.contains('@') && token.contains('.') && !token.starts_with('@') {
            found.emails.push(token.to_string());
        } else if is_iso_date(token) {
            found.dates.push(token.to_string());
        } else if looks_like_path(token) {
            found.paths.push(token.to_string());
        }
        previous = Some(token);
    }
    found
}

/// `19:30`, `7pm`, `7:30pm` and `7p.m` as 24-hour `HH:MM`.
fn clock_time(token: &str) -> Option<String> {
    let lower = token.to_lowercase().replace('.', "");
    let (clock, offset) = match (lower.strip_suffix("pm"), lower.strip_suffix("am")) {
        (Some(c), _) => (c.to_string(), Some(12)),
        (_, Some(c)) => (c.to_string(), Some(0)),
        _ => (lower.clone(), None),
    };
    let (h, m) = match clock.split_once(':') {
        Some((h, m)) => (h.parse::<u32>().ok()?, m.parse::<u32>().ok()?),
        None if offset.is_some() => (clock.parse::<u32>().ok()?, 0),
        None => return None,
    };
    if m >= 60 || clock.split_once(':').is_some_and(|(_, m)| m.len() != 2) {
        return None;
    }
    let h = match offset {
        Some(add) if (1..=12).contains(&h) => h % 12 + add,
        Some(_) => return None,
        None if h < 24 => h,
        None => return None,
    };
    Some(format!("{h:02}:{m:02}"))
}

fn is_iso_date(token: &str) -> bool {
    let b = token.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

fn looks_like_path(token: &str) -> bool {
    if token.starts_with('/')
        || token.starts_with("./")
        || token.starts_with("~/")
        || token.contains('/')
    {
        return token.chars().any(|c| c.is_alphanumeric());
    }
    // `notes.txt`, `main.rs`: a name, a dot, and a short extension.
    match token.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty()
                && (1..=5).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && ext.chars().any(|c| c.is_ascii_alphabetic())
                && stem
                    .chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
        }
        None => false,
    }
}

/// The longest run of digits, operators, parentheses and spaces that holds at least one
/// operator between two numbers ("What is 12 * (3 + 4)?" gives `12 * (3 + 4)`).
fn find_expression(text: &str) -> Option<String> {
    let is_expr_char = |c: char| c.is_ascii_digit() || " .+-*/^%()×÷".contains(c);
    let mut best: Option<String> = None;
    let mut start: Option<usize> = None;
    let mut consider = |run: &str| {
        let run = run.trim().trim_end_matches('.').trim();
        let has_op = run.contains(['+', '*', '/', '^', '%', '×', '÷'])
            || run.trim_start_matches('-').contains('-');
        let digits = run.chars().filter(|c| c.is_ascii_digit()).count();
        if has_op
            && digits >= 2
            && !is_iso_date(run)
            && best.as_ref().is_none_or(|b| run.len() > b.len())
        {
            best = Some(run.to_string());
        }
    };
    for (i, c) in text.char_indices() {
        match (is_expr_char(c), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                consider(&text[s..i]);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        consider(&text[s..]);
    }
    best
}

/// What a query-like argument should hold: a quoted string if there is one, else the words
/// after the first "for"/"about", else the first sentence without its opening request words.
fn find_subject(text: &str, words: &[Word], quoted: &[String]) -> String {
    if let Some(q) = quoted.first() {
        return q.clone();
    }
    let first_sentence_end = words
        .iter()
        .skip(1)
        .position(|w| w.sentence_start)
        .map_or(words.len(), |p| p + 1);
    let sentence = &words[..first_sentence_end];
    let marker = sentence
        .iter()
        .position(|w| matches!(w.stem.as_str(), "for" | "about" | "regarding"))
        .filter(|&p| p + 1 < sentence.len());
    let from = match marker {
        Some(p) => p + 1,
        None => sentence
            .iter()
            .position(|w| !is_stopword(&w.stem) && !is_command_word(&w.stem))
            .unwrap_or(0),
    };
    let mut tail = &sentence[from.min(sentence.len())..];
    while let [first, rest @ ..] = tail {
        if matches!(
            first.stem.as_str(),
            "the" | "a" | "an" | "some" | "me" | "my"
        ) {
            tail = rest;
        } else {
            break;
        }
    }
    let subject = match (tail.first(), tail.last()) {
        (Some(a), Some(b)) => text[a.start..b.end].to_string(),
        _ => text.trim().trim_end_matches(['?', '.', '!']).to_string(),
    };
    shorten(&subject, 80)
}

/// At most `max` characters, cut at a word boundary.
pub fn shorten(text: &str, max: usize) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.chars().count() <= max {
        return text;
    }
    let cut: String = text.chars().take(max).collect();
    match cut.rfind(' ') {
        Some(i) if i > 0 => format!("{}…", &cut[..i]),
        _ => format!("{cut}…"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn analyse(text: &str) -> Prompt {
        let vocab: HashSet<String> = ["weather", "search", "book", "file"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        Prompt::analyse(text, &vocab)
    }

    #[test]
    fn stems_meet_across_forms() {
        let cases = [
            ("cities", "city"),
            ("searching", "search"),
            ("searches", "search"),
            ("files", "file"),
            ("booked", "book"),
            ("What's", "what"),
            ("Paris", "paris"),
            ("towns", "town"),
            ("class", "class"),
            ("status", "status"),
            ("days", "day"),
            ("42", "42"),
        ];
        for (word, want) in cases {
            assert_eq!(stem(word), want, "{word}");
        }
        assert_eq!(stems_of("get_weather"), ["get", "weather"]);
        assert_eq!(
            stems_of("getWeatherForecast"),
            ["get", "weather", "forecast"]
        );
        assert_eq!(stems_of("max-results"), ["max", "result"]);
    }

    #[test]
    fn names_skip_sentence_starts_that_are_tool_words() {
        let names = |t: &str| {
            analyse(t)
                .names
                .into_iter()
                .map(|n| n.text)
                .collect::<Vec<_>>()
        };
        assert_eq!(names("Weather in Paris?"), ["Paris"]);
        assert_eq!(
            names("What's the weather in New York and Tokyo?"),
            ["New York", "Tokyo"]
        );
        assert_eq!(names("Paris weather please"), ["Paris"]);
        assert_eq!(
            names("I want to fly from Berlin to Rome."),
            ["Berlin", "Rome"]
        );
        assert!(names("search the web for rust tutorials").is_empty());
        assert_eq!(
            names("Don't worry, I'm in Oslo on Monday and Tuesday"),
            ["Oslo"]
        );
    }

    #[test]
    fn lists_need_joining_words() {
        assert_eq!(
            analyse("weather in Paris and Tokyo").lists,
            [["Paris", "Tokyo"]]
        );
        assert_eq!(
            analyse("weather in Paris, Tokyo or Lima").lists,
            [["Paris", "Tokyo", "Lima"]]
        );
        assert!(analyse("fly from Berlin to Rome").lists.is_empty());
    }

    #[test]
    fn numbers_paths_urls_and_expressions() {
        let p = analyse("Forecast for 3 days, 21.5 degrees, -4 below, 1,000 items");
        let values: Vec<f64> = p.numbers.iter().map(|n| n.value).collect();
        assert_eq!(values, [3.0, 21.5, -4.0, 1000.0]);
        assert_eq!(p.words[p.numbers[0].word + 1].stem, "day");

        let p = analyse(
            "Read src/main.rs and notes.txt, then open https://example.org/a?b=1. Mail bob@example.com by 2025-03-01.",
        );
        assert_eq!(p.paths, ["src/main.rs", "notes.txt"]);
        assert_eq!(p.urls, ["https://example.org/a?b=1"]);
        assert_eq!(p.emails, ["bob@example.com"]);
        assert_eq!(p.dates, ["2025-03-01"]);

        let p = analyse("Dinner at 7pm, or 7:30 p.m., not 19:45 or 25:00 or 3:7");
        assert_eq!(p.times, ["19:00", "19:30", "19:45"]);
        assert_eq!(analyse("at 12am and 12pm").times, ["00:00", "12:00"]);

        assert_eq!(
            analyse("What is 12 * (3 + 4)?").expression.as_deref(),
            Some("12 * (3 + 4)")
        );
        assert_eq!(analyse("Call me at 5").expression, None);
    }

    #[test]
    fn subjects() {
        let cases = [
            (
                "Search the web for rust async tutorials",
                "rust async tutorials",
            ),
            ("Tell me about the Eiffel Tower.", "Eiffel Tower"),
            ("Find 'exact phrase' please", "exact phrase"),
            ("What is the capital of France?", "capital of France"),
            ("hello", "hello"),
        ];
        for (prompt, want) in cases {
            assert_eq!(analyse(prompt).subject, want, "{prompt}");
        }
        assert_eq!(analyse("").subject, "");
    }

    #[test]
    fn fenced_blocks_are_kept_byte_for_byte_and_read_apart() {
        let text =
            "Save this as ./a.py:\n```python\n    if x:\n        y = '</parameter>'\n\n```\nthanks";
        let p = analyse(text);
        assert_eq!(p.blocks, ["    if x:\n        y = '</parameter>'\n\n"]);
        assert_eq!(p.paths, ["./a.py"]);
        assert!(!p.text.contains("parameter"));
        let p = analyse("a\n```\n```\nb ```\nopen");
        assert_eq!(p.blocks, ["", "open"]);
    }

    #[test]
    fn odd_input_does_not_panic() {
        for text in [
            "",
            "'",
            "\"",
            "-",
            "--1",
            "é’s",
            "1.",
            ".1",
            "a'",
            "((((",
            "日本 東京",
            "\u{0}",
        ] {
            let _ = analyse(text);
        }
        assert_eq!(shorten("one two three four", 9), "one two…");
    }
}
