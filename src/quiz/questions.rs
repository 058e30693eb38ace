//! The material's 10 interview questions and 4 misconceptions, as data, and their checking.
//!
//! In: `questions.json` (compiled in, parsed at first use), then a question id and the
//! selected option ids. Out: the questions for the page, and an [`Answer`] that says whether
//! the selection matches the fact-checked key, what the material's own key was, and why.
//! Invariant: the key follows real PyTorch; whenever it differs from the material's key the
//! question's [`FactCheck`] says so (verdict `differs`, a note and sources) — the tests hold
//! the file to this.

use super::demo::Demo;
use super::{Difficulty, QuizError, Text};
use serde::{Deserialize, Serialize};
use std::sync::LazyLock;

/// Where a question comes from in the material.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    /// 面试题: the ten interview questions.
    Interview,
    /// 常见误区: a misconception, given as a statement to judge.
    Misconception,
}

/// How a question is answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QuestionChoice {
    /// 单选题: exactly one option.
    Single,
    /// 多选题: one or more options.
    Multiple,
    /// A statement to judge: exactly one of 正确 / 错误 / 部分正确.
    Judge,
}

/// How the fact-checked key relates to the material's key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Same key, nothing to add.
    Agrees,
    /// Same key, but the material's wording or explanation is imprecise somewhere.
    Nuanced,
    /// The key differs from the material's.
    Differs,
}

/// What real PyTorch says about the material's answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FactCheck {
    /// How the key relates to the material's.
    pub verdict: Verdict,
    /// The material's own key.
    pub material_key: Vec<String>,
    /// What the material got wrong or left out, and why (absent when the verdict is `agrees`).
    #[serde(default)]
    pub note: Option<Text>,
    /// Where the facts come from: PyTorch source files and documentation pages.
    pub sources: Vec<String>,
}

/// One option of a question.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuestionOption {
    /// `A`–`D`, or `true` / `false` / `partly` for a statement to judge.
    pub id: String,
    /// The option's text (the material's wording in Chinese).
    pub text: Text,
}

/// One question or misconception.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Question {
    /// A stable id: `q1`–`q10` for the interview questions, `m1`–`m4` for the misconceptions.
    pub id: String,
    /// Interview question or misconception.
    pub section: Section,
    /// Single choice, multiple choice or a statement to judge.
    pub choice: QuestionChoice,
    /// The material's level; the misconceptions have none.
    pub difficulty: Option<Difficulty>,
    /// The question, or the statement to judge (the material's wording in Chinese).
    pub prompt: Text,
    /// Every option, in the material's order.
    pub options: Vec<QuestionOption>,
    /// The option ids that are right, following real PyTorch.
    pub key: Vec<String>,
    /// Shown after answering: why the key is right, in our words.
    pub explanation: Text,
    /// How the key compares with the material's.
    pub fact_check: FactCheck,
    /// The page section, compilation stage or lab that shows the point (see [`links`]).
    pub link: String,
    /// Calls the page can run through the compiler to show the point.
    pub demo: Option<Demo>,
}

/// A place in the page that questions and exercises point to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    /// A stable id: `section:…`, `stage:…` (the trace's stage ids) or `lab:…`.
    pub id: String,
    /// Its title.
    pub title: Text,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QuizFile {
    links: Vec<Link>,
    questions: Vec<Question>,
}

static QUIZ: LazyLock<QuizFile> = LazyLock::new(|| {
    serde_json::from_str(include_str!("questions.json"))
        .expect("src/quiz/questions.json is valid (checked by the quiz tests)")
});

/// Every question: the ten interview questions, then the four misconceptions.
pub fn questions() -> &'static [Question] {
    &QUIZ.questions
}

/// The question with this id.
pub fn question(id: &str) -> Result<&'static Question, QuizError> {
    questions()
        .iter()
        .find(|q| q.id == id)
        .ok_or_else(|| QuizError::UnknownQuestion(id.to_string()))
}

/// The places in the page that `link` and `show_me` ids refer to.
pub fn links() -> &'static [Link] {
    &QUIZ.links
}

/// The result of answering a question.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Answer {
    /// The question's id.
    pub question: String,
    /// Whether the selection is exactly the key.
    pub correct: bool,
    /// The selection, as option ids in the question's order.
    pub selected: Vec<String>,
    /// The fact-checked key.
    pub key: Vec<String>,
    /// The material's key, and how it compares.
    pub fact_check: FactCheck,
    /// Why the key is right.
    pub explanation: Text,
    /// Where the page shows it.
    pub link: String,
}

/// Checks a selection of option ids (case-insensitive, any order, duplicates ignored).
pub fn check(id: &str, selected: &[&str]) -> Result<Answer, QuizError> {
    let question = question(id)?;
    let mut chosen = Vec::new();
    for given in selected {
        let option = question
            .options
            .iter()
            .find(|o| o.id.eq_ignore_ascii_case(given.trim()))
            .ok_or_else(|| QuizError::UnknownOption {
                question: question.id.clone(),
                option: given.to_string(),
                known: question
                    .options
                    .iter()
                    .map(|o| o.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        if !chosen.contains(&option.id) {
            chosen.push(option.id.clone());
        }
    }
    match question.choice {
        QuestionChoice::Multiple if chosen.is_empty() => {
            return Err(QuizError::NoOption(question.id.clone()));
        }
        QuestionChoice::Single | QuestionChoice::Judge if chosen.len() != 1 => {
            return Err(QuizError::NotOneOption {
                question: question.id.clone(),
                count: chosen.len(),
            });
        }
        _ => {}
    }
    let in_order: Vec<String> = question
        .options
        .iter()
        .filter(|o| chosen.contains(&o.id))
        .map(|o| o.id.clone())
        .collect();
    Ok(Answer {
        question: question.id.clone(),
        correct: in_order == question.key,
        selected: in_order,
        key: question.key.clone(),
        fact_check: question.fact_check.clone(),
        explanation: question.explanation.clone(),
        link: question.link.clone(),
    })
}
