//! The page's languages: every compiler message id has a text in both of `www/js/i18n.js`'s
//! tables, and a message's English text, filled with its arguments, is the error's or the
//! guard's `Display` without the source position. The representative messages (a syntax
//! error, an unsupported call, a shape mismatch, a dtype PyTorch refuses, a malformed input,
//! a weights file that is not safetensors, every kind of guard provenance) are checked as
//! `id [args]` lines.

use crate::models;
use expect_test::{Expect, expect};
use std::collections::BTreeMap;
use tailor::guard::Provenance;
use tailor::message::{Message, MessageId};
use tailor::shape::{Asker, Origin};
use tailor::{Action, CallMarks, CompileConfig, DynamicMode, spec};

/// One language's `msg.*` entries of `www/js/i18n.js`: id → (parameter names, template).
fn table(lang: &str) -> BTreeMap<String, (Vec<String>, String)> {
    let file = include_str!("../../www/js/i18n.js");
    let start = file
        .find(&format!("\n  {lang}: {{\n"))
        .unwrap_or_else(|| panic!("i18n.js has a {lang} table"));
    let end = start + file[start..].find("\n  },\n").expect("the table ends");
    file[start..end]
        .lines()
        .filter_map(|line| {
            let rest = line.trim().strip_prefix("\"msg.")?;
            let (id, value) = rest.split_once("\": ")?;
            Some((id.to_string(), template(value.trim_end_matches(','))))
        })
        .collect()
}

/// `"text"`, `` `text` `` or `` (a, b) => `text ${a}` ``, as parameter names and template.
fn template(value: &str) -> (Vec<String>, String) {
    let (params, body) = match value.split_once(" => ") {
        Some((params, body)) => (
            params
                .trim_matches(['(', ')'])
                .split(", ")
                .map(str::to_string)
                .collect(),
            body,
        ),
        None => (Vec::new(), value),
    };
    let body = body[1..body.len() - 1]
        .replace("\\`", "`")
        .replace("\\\"", "\"");
    (params, body)
}

/// `id`'s camelCase name, as the page receives it.
fn key(id: MessageId) -> String {
    serde_json::to_value(id)
        .unwrap()
        .as_str()
        .unwrap()
        .to_string()
}

/// The English table's text of `message`, its arguments filled in.
fn english(message: &Message) -> String {
    let en = table("en");
    let (params, body) = en
        .get(&key(message.id))
        .unwrap_or_else(|| panic!("no English text for {:?}", message.id));
    assert_eq!(params.len(), message.args.len(), "{message:?}");
    params
        .iter()
        .zip(&message.args)
        .fold(body.clone(), |text, (param, arg)| {
            text.replace(&format!("${{{param}}}"), arg)
        })
}

/// `display` without its source position (`line 3, col 5: ` in front, or ` at line 3, col
/// 5` after an op), which the page shows on its own.
fn without_span(display: &str) -> String {
    let mut text = display.to_string();
    if let Some(rest) = text.strip_prefix("line ") {
        if let Some((_, after)) = rest.split_once(": ") {
            text = after.to_string();
        }
    }
    if let Some(at) = text.find(" at line ") {
        let tail = &text[at + " at line ".len()..];
        let end = tail.find(':').unwrap_or(tail.len());
        text = format!("{}{}", &text[..at], &tail[end..]);
    }
    text
}

/// `message` as `id [arg | arg]`.
fn line(message: &Message) -> String {
    format!("{} [{}]", key(message.id), message.args.join(" | "))
}

/// `message` as `id [arg | arg]`; its English text must be `display`, position apart.
#[track_caller]
fn check(message: &Message, display: &str, expect: Expect) {
    assert_eq!(english(message), without_span(display));
    expect.assert_eq(&line(message));
}

#[test]
fn every_message_has_a_text_in_both_languages() {
    let (zh, en) = (table("zh"), table("en"));
    for &id in MessageId::ALL {
        let name = key(id);
        let (zh_params, _) = zh
            .get(&name)
            .unwrap_or_else(|| panic!("i18n.js zh lacks msg.{name}"));
        let (en_params, _) = en
            .get(&name)
            .unwrap_or_else(|| panic!("i18n.js en lacks msg.{name}"));
        assert_eq!(
            zh_params.len(),
            en_params.len(),
            "msg.{name}: argument counts"
        );
    }
    let known: Vec<String> = MessageId::ALL.iter().map(|&id| key(id)).collect();
    for name in zh.keys().chain(en.keys()) {
        assert!(
            known.contains(name),
            "i18n.js has msg.{name}, which Rust never sends"
        );
    }
}

#[test]
fn every_provenance_is_a_message_worded_as_its_english() {
    let span = Some(tailor::graph::Span { line: 3, col: 5 });
    let op = Origin {
        what: Asker::Op("linear 'linear_1'".into()),
        span,
    };
    let provenances = [
        Provenance::Unmarked,
        Provenance::FixedSymbol {
            dim: "L['x'].size()[0]".into(),
            value: "8".into(),
        },
        Provenance::DuckSizing {
            dim: "L['y'].size()[0]".into(),
            other: "L['x'].size()[0]".into(),
        },
        Provenance::Solved {
            dim: "L['y'].size()[1]".into(),
            value: "2*L['x'].size()[1]".into(),
        },
        Provenance::Contiguous,
        Provenance::NanSpecialization,
        Provenance::MarkDynamic {
            min: Some(2),
            max: None,
            narrowed: None,
        },
        Provenance::MarkDynamic {
            min: None,
            max: Some(64),
            narrowed: Some(tailor::symbolic::ValueRange::new(Some(4), Some(64))),
        },
        Provenance::ZeroOneSpecialization,
        Provenance::Narrowed(tailor::symbolic::ValueRange::new(Some(3), None)),
        Provenance::Recorded(op.clone()),
        Provenance::Recorded(Origin { span: None, ..op }),
        Provenance::Recorded(Origin {
            what: Asker::SizeCondition("if"),
            span,
        }),
        Provenance::Recorded(Origin {
            what: Asker::FloatCondition {
                construct: "if",
                name: "scale".into(),
            },
            span,
        }),
        Provenance::IntConstant,
        Provenance::IntSymbol,
        Provenance::Bool,
        Provenance::FloatConstant,
        Provenance::FloatSymbol,
        Provenance::TensorMatch,
        Provenance::NoAliasing,
        Provenance::TrainingMode,
        Provenance::ModuleAttribute,
    ];
    let mut lines = Vec::new();
    for provenance in &provenances {
        let message = provenance.message();
        // Provenances print their span as part of the English text, so nothing is stripped.
        assert_eq!(english(&message), provenance.to_string());
        lines.push(line(&message));
    }
    expect![[r#"
        provenanceUnmarked []
        provenanceFixedSymbol [L['x'].size()[0] | 8]
        provenanceDuckSizing [L['y'].size()[0] | L['x'].size()[0]]
        provenanceSolved [L['y'].size()[1] | 2*L['x'].size()[1]]
        provenanceContiguous []
        provenanceNanSpecialization []
        provenanceMarkDynamic [2 | None]
        provenanceMarkDynamicNarrowed [None | 64 | [4, 64]]
        provenanceZeroOne []
        provenanceNarrowed [[3, int_oo]]
        askedByOpAt [linear 'linear_1' | 3 | 5]
        askedByOp [linear 'linear_1']
        askedBySizeConditionAt [if | 3 | 5]
        askedByFloatConditionAt [if | scale | 3 | 5]
        provenanceIntConstant []
        provenanceIntSymbol []
        provenanceBool []
        provenanceFloatConstant []
        provenanceFloatSymbol []
        provenanceTensorMatch []
        provenanceNoAliasing []
        provenanceTrainingMode []
        provenanceModuleAttribute []"#]]
    .assert_eq(&lines.join("\n"));
}

/// The provenance of each guard of `model`'s entry for `shapes` under `dynamic=True` (and
/// each symbol form in words checked against its English).
fn provenances(model: &str, shapes: &str) -> String {
    let mut cache = tailor::load(model, None).unwrap();
    let call = spec::parse_shapes(shapes, &cache.entry_point().inputs).unwrap();
    let config = CompileConfig {
        dynamic: DynamicMode::True,
        ..CompileConfig::default()
    };
    let event = cache.call(0, &config, &call, &CallMarks::default(), &|| 0.0);
    assert_eq!(event.action, Action::Compile, "{event:?}");
    let lines: Vec<String> = cache.entries()[0]
        .guards
        .printed()
        .into_iter()
        .map(|guard| {
            let message = guard.provenance.message();
            assert_eq!(english(&message), guard.provenance.to_string());
            // A symbol form in words is a message too, worded as its English.
            if let Some(symbolic) = guard.symbolic.message() {
                assert_eq!(english(&symbolic), guard.symbolic.to_string());
            }
            line(&message)
        })
        .collect();
    lines.join("\n")
}

/// A compiled entry's guards carry their provenance as data: duck sizing, the default
/// range, a range the branch narrowed, and the op that asked.
#[test]
fn a_compiled_entrys_guards_carry_their_provenance() {
    expect![[r#"
        provenanceUnmarked []
        provenanceUnmarked []
        provenanceContiguous []
        provenanceDuckSizing [L['y'].size()[0] | L['x'].size()[0]]
        provenanceDuckSizing [L['y'].size()[1] | L['x'].size()[1]]
        provenanceContiguous []
        provenanceZeroOne []
        provenanceZeroOne []"#]]
    .assert_eq(&provenances(models::ADD_XY, "x=8,4;y=8,4"));
    expect![[r#"
        provenanceUnmarked []
        provenanceNarrowed [[6, int_oo]]"#]]
    .assert_eq(&provenances(models::BRANCH_GT5, "x=8"));
    expect![[r#"
        provenanceUnmarked []
        askedByOpAt [reshape | 5 | 12]
        provenanceZeroOne []"#]]
    .assert_eq(&provenances(models::VIEW_4, "x=8"));
}

/// The error of loading `source` and calling it with `shapes` (the load's, or the call's).
fn model_error(source: &str, shapes: &str) -> (Message, String) {
    let mut cache = match tailor::load(source, None) {
        Ok(cache) => cache,
        Err(err) => return (err.message(), err.to_string()),
    };
    let call = spec::parse_shapes(shapes, &cache.entry_point().inputs).unwrap();
    let event = cache.call(
        0,
        &CompileConfig::default(),
        &call,
        &CallMarks::default(),
        &|| 0.0,
    );
    assert_eq!(event.action, Action::Error, "{event:?}");
    (
        event
            .error_message
            .clone()
            .expect("an error event carries its message"),
        event.error.clone().expect("and its text"),
    )
}

#[track_caller]
fn check_model(source: &str, shapes: &str, expect: Expect) {
    let (message, display) = model_error(source, shapes);
    check(&message, &display, expect);
}

#[test]
fn a_syntax_error_passes_pythons_words() {
    check_model(
        "def f(x):\n    return x +\n",
        "x=4",
        expect!["syntaxError [Expected an expression]"],
    );
}

#[test]
fn an_unsupported_call_names_the_construct() {
    check_model(
        "import torch\n\n\ndef f(x):\n    return torch.nonzero(x)\n",
        "x=4",
        expect!["unsupportedWithNote [torch.nonzero | it is not in Tailor's PyTorch subset]"],
    );
}

#[test]
fn a_shape_mismatch_keeps_the_op_the_detail_and_both_shapes() {
    check_model(
        models::ADD_XY,
        "x=3,4;y=3,5",
        expect![
            "shapeMismatch [add | the size of tensor a (4) must match the size of tensor b (5) at non-singleton dimension 1 | [3, 4] | [3, 5]]"
        ],
    );
}

#[test]
fn a_view_memory_cannot_give_keeps_the_sizes_and_strides() {
    check_model(
        "def f(x):\n    return x.t().view(-1)\n",
        "x=3,4",
        expect!["notViewable [view | [4, 3] | (1, 4) | (12,)]"],
    );
}

#[test]
fn a_dtype_pytorch_refuses_is_pytorchs_message() {
    let source = "import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.emb = nn.Embedding(10, 4)\n\n    def forward(self, x):\n        return self.emb(x)\n";
    check_model(
        source,
        "x=2,3",
        expect![
            "pythonError [RuntimeError: Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got torch.FloatTensor instead (while checking arguments for embedding)]"
        ],
    );
}

#[test]
fn malformed_inputs_have_one_message_each() {
    let names = ["x".to_string()];
    let mut lines = Vec::new();
    for text in ["x=2,3:int16", "x=2,-3", "x=2,a", "x=int(q)", "x", "x=1;x=2"] {
        let err = tailor::Error::from(spec::parse_shapes(text, &names).unwrap_err());
        let message = err.message();
        assert_eq!(english(&message), err.to_string());
        lines.push(line(&message));
    }
    for text in ["x:a", "x:0:8:4", "x:0:1"] {
        let err = tailor::Error::from(spec::parse_mark(text, &names).unwrap_err());
        let message = err.message();
        assert_eq!(english(&message), err.to_string());
        lines.push(line(&message));
    }
    expect![[r#"
        malformedUnknownDType [x=2,3:int16 | int16]
        malformedNegativeSize [x=2,-3 | -3]
        malformedNotSize [x=2,a | a]
        malformedNotInt [x=int(q) | q]
        malformedNotNameValue [x]
        malformedGivenTwice [x=2 | x]
        malformedMarkNumber [x:a | dim | a]
        malformedMaxBelowMin [x:0:8:4]
        malformedMarkForm [x:0:1]"#]]
    .assert_eq(&lines.join("\n"));
}

#[test]
fn a_weights_file_that_is_not_safetensors_names_the_file() {
    let mut cache = tailor::load(tailor::SIMPLENET_SOURCE, None).unwrap();
    let err = cache.load_state(b"not a safetensors file").unwrap_err();
    check(
        &err.message(),
        &err.to_string(),
        expect!["weightsFormat [weights | header too large]"],
    );
}
