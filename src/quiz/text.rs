//! Bilingual text and the message templates of the exercises.
//!
//! In: a template key from `messages.json` and named values. Out: a [`Text`] with the values
//! filled into both languages. Invariant: every sentence the exercises show comes from
//! `messages.json` (so translators edit data, not code), and every `{name}` placeholder of a
//! used template is filled (the tests check both).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// The same text in Chinese (the material's language, shown by default) and English.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Text {
    /// Chinese.
    pub zh: String,
    /// English.
    pub en: String,
}

impl Text {
    /// Text that reads the same in both languages (a formula, a number, a guard).
    pub(crate) fn same(text: impl Into<String>) -> Text {
        let text = text.into();
        Text {
            zh: text.clone(),
            en: text,
        }
    }

    /// The parts one after another, `zh_sep`/`en_sep` between them.
    pub(crate) fn join(parts: &[Text], zh_sep: &str, en_sep: &str) -> Text {
        Text {
            zh: parts
                .iter()
                .map(|t| t.zh.as_str())
                .collect::<Vec<_>>()
                .join(zh_sep),
            en: parts
                .iter()
                .map(|t| t.en.as_str())
                .collect::<Vec<_>>()
                .join(en_sep),
        }
    }
}

/// Every template, parsed once from the file compiled into the crate.
pub(crate) static MESSAGES: LazyLock<BTreeMap<String, Text>> = LazyLock::new(|| {
    serde_json::from_str(include_str!("messages.json"))
        .expect("src/quiz/messages.json is valid (checked by the quiz tests)")
});

/// The template `key` with each `{name}` replaced by its value (the same in both languages).
pub(crate) fn msg(key: &str, args: &[(&str, &str)]) -> Text {
    let args: Vec<(&str, Text)> = args.iter().map(|(n, v)| (*n, Text::same(*v))).collect();
    fill(key, &args)
}

/// The template `key` with each `{name}` replaced by its value in the matching language.
pub(crate) fn fill(key: &str, args: &[(&str, Text)]) -> Text {
    let template = MESSAGES
        .get(key)
        .unwrap_or_else(|| panic!("message '{key}' is missing from messages.json"));
    let fill_one = |text: &str, pick: &dyn Fn(&Text) -> &str| {
        args.iter().fold(text.to_string(), |acc, (name, value)| {
            acc.replace(&format!("{{{name}}}"), pick(value))
        })
    };
    Text {
        zh: fill_one(&template.zh, &|t| &t.zh),
        en: fill_one(&template.en, &|t| &t.en),
    }
}
