//! A PyTorch trace beside Tailor's run of the same script (`tailor compare`): per
//! `[frame/compile]`, whether both compiled, and their recompile reasons, guards, symbols,
//! graph breaks and output sizes, matched one to one.
//!
//! In: a [`TorchTrace`] (`torch_trace::parse` of what `TORCH_TRACE` wrote) and the
//! [`CompileRecord`]s of Tailor's run of the script that made it
//! (`script::ScriptRun::compiles`). Out: a [`Comparison`], whose `Display` is the report
//! and whose JSON is `--json`'s. Invariant: a compile is matched by its id (`0/1`) alone
//! (the n-th `0/1` with the n-th, as ids start again after `torch._dynamo.reset()`);
//! within one, each item is in `both` or in one side's list, never dropped, and what is not
//! compared is counted by kind: guards Tailor does not model (the global state, object
//! identities, the parameters PyTorch lifts as inputs where Tailor's graph holds them as
//! constants, the module attributes it reads) and the records the parser skipped.

use crate::cache::Action;
use crate::script::FrameCall;
use crate::torch_trace::{self, CompileRecord, TorchTrace};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

/// Both accounts of one script's compiles.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// The trace's PyTorch version.
    pub pytorch_version: Option<String>,
    /// Per compile id, in PyTorch's order, then Tailor's compiles PyTorch did not make.
    pub compiles: Vec<CompileComparison>,
    /// Guards not compared, by kind, counted on both sides.
    pub not_compared: BTreeMap<String, usize>,
    /// Trace records the parser did not read, by kind.
    pub skipped_records: BTreeMap<String, usize>,
}

/// One `[frame/compile]` on both sides.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CompileComparison {
    /// `frame/compile`.
    pub id: String,
    /// The function compiled (PyTorch's name where it has the compile).
    pub function: String,
    /// Whether PyTorch compiled it.
    pub pytorch: bool,
    /// Whether Tailor compiled it.
    pub tailor: bool,
    /// Where PyTorch compiled and Tailor did not: what Tailor did with a call of the same
    /// frame and argument sizes, if it made one.
    pub tailor_instead: Option<Instead>,
    /// The sizes of the tensor arguments the compile was made for.
    pub inputs: Matched,
    /// Why it recompiled.
    pub reasons: Matched,
    /// The guards compared (see [`comparable_guard`]).
    pub guards: Matched,
    /// The symbols created, named as PyTorch names them.
    pub symbols: Matched,
    /// The graph break that ended the graph.
    pub graph_break: Matched,
    /// The sizes of what the graph returned.
    pub outputs: Matched,
}

/// What Tailor did with a call PyTorch compiled for: a hit of one of its entries, an eager
/// run (past the recompile limit, or a code skipped), or an error.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Instead {
    /// What the cache did.
    pub action: Action,
    /// The entry hit, as `frame/compile`.
    pub entry: Option<String>,
}

impl fmt::Display for Instead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.action, &self.entry) {
            (Action::Hit, Some(entry)) => write!(f, "hit [{entry}]"),
            (Action::Eager, _) => f.write_str("ran it eagerly"),
            _ => f.write_str("failed"),
        }
    }
}

/// One kind of item of a compile, matched one to one.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Matched {
    /// On both sides.
    pub both: Vec<String>,
    /// PyTorch's only.
    pub only_pytorch: Vec<String>,
    /// Tailor's only.
    pub only_tailor: Vec<String>,
}

impl Matched {
    /// Matches equal items one to one, keeping each side's order.
    fn of(pytorch: Vec<String>, tailor: Vec<String>) -> Matched {
        let mut left = tailor;
        let mut matched = Matched::default();
        for item in pytorch {
            match left.iter().position(|t| *t == item) {
                Some(at) => {
                    left.remove(at);
                    matched.both.push(item);
                }
                None => matched.only_pytorch.push(item),
            }
        }
        matched.only_tailor = left;
        matched
    }

    /// Whether the two sides agree.
    pub fn agrees(&self) -> bool {
        self.only_pytorch.is_empty() && self.only_tailor.is_empty()
    }
}

impl CompileComparison {
    /// Whether both compiled and every item agrees.
    pub fn agrees(&self) -> bool {
        self.pytorch
            && self.tailor
            && [
                &self.inputs,
                &self.reasons,
                &self.guards,
                &self.symbols,
                &self.graph_break,
                &self.outputs,
            ]
            .iter()
            .all(|m| m.agrees())
    }
}

/// Sets Tailor's compiles (and its frames' calls, for what it did where it did not compile)
/// beside the trace's.
pub fn compare<'a>(
    trace: &'a TorchTrace,
    tailor: &'a [CompileRecord],
    calls: &[FrameCall],
) -> Comparison {
    let mut not_compared = BTreeMap::new();
    let mut guards = |record: Option<&CompileRecord>| -> Vec<String> {
        let mut kept = Vec::new();
        for guard in record.map_or(&[][..], |r| &r.guards[..]) {
            match comparable_guard(guard) {
                Ok(guard) => kept.push(guard),
                Err(kind) => *not_compared.entry(kind).or_default() += 1,
            }
        }
        kept
    };
    // A compile is its id and how many compiles before it had the same one: after
    // `torch._dynamo.reset()` ids start again from 0/0, on both sides.
    let keys = |records: &[CompileRecord]| -> Vec<(u32, u32, usize)> {
        records
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let earlier = records[..i]
                    .iter()
                    .filter(|c| (c.frame, c.compile) == (r.frame, r.compile))
                    .count();
                (r.frame, r.compile, earlier)
            })
            .collect()
    };
    let (their_keys, our_keys) = (keys(&trace.compiles), keys(tailor));
    let mut ids = their_keys.clone();
    ids.extend(our_keys.iter().filter(|key| !their_keys.contains(key)));
    let mut compiles = Vec::new();
    for id in ids {
        let find = |keys: &[(u32, u32, usize)], records: &'a [CompileRecord]| {
            keys.iter()
                .position(|key| *key == id)
                .map(|at| &records[at])
        };
        let theirs = find(&their_keys, &trace.compiles);
        let ours = find(&our_keys, tailor);
        let field = |get: &dyn Fn(&CompileRecord) -> Vec<String>| {
            Matched::of(
                theirs.map(get).unwrap_or_default(),
                ours.map(get).unwrap_or_default(),
            )
        };
        compiles.push(CompileComparison {
            id: format!("{}/{}", id.0, id.1),
            function: theirs
                .or(ours)
                .map(|c| c.function.clone())
                .unwrap_or_default(),
            pytorch: theirs.is_some(),
            tailor: ours.is_some(),
            tailor_instead: match (theirs, ours) {
                (Some(theirs), None) => instead(theirs, calls),
                _ => None,
            },
            inputs: field(&|c| c.inputs.clone()),
            reasons: field(&|c| c.recompile_reasons.clone()),
            guards: Matched::of(guards(theirs), guards(ours)),
            symbols: field(&|c| c.symbols.clone()),
            graph_break: field(&|c| c.graph_break.iter().map(|b| short_paths(b)).collect()),
            outputs: field(&|c| c.outputs.clone()),
        });
    }
    Comparison {
        pytorch_version: trace.version.clone(),
        compiles,
        not_compared,
        skipped_records: trace.skipped.clone(),
    }
}

/// What Tailor did with the first call of `compile`'s frame whose argument sizes are the
/// compile's, where it did not compile.
fn instead(compile: &CompileRecord, calls: &[FrameCall]) -> Option<Instead> {
    let sorted = |inputs: &[String]| {
        let mut inputs = inputs.to_vec();
        inputs.sort();
        inputs
    };
    let wanted = sorted(&compile.inputs);
    let call = calls.iter().find(|call| {
        call.frame == compile.frame
            && call.action != Action::Compile
            && sorted(&call.inputs) == wanted
    })?;
    Some(Instead {
        action: call.action,
        entry: call.entry.map(|entry| format!("{}/{entry}", call.frame)),
    })
}

/// A guard line (`KIND: text`, as the guard tree prints it, or a bare shape guard as
/// Tailor's guard set lists it) in the form both sides are compared in, or the kind it is
/// counted under when it is not compared. Compared: the arguments' tensor matches
/// (`TENSOR_MATCH L['x'] float32 size=[None, 64] stride=[64, 1]`), their value guards
/// (`EQUALS_MATCH`, `TYPE_MATCH`, `TRUE_MATCH`, `FALSE_MATCH`) and the shape guards on their
/// sizes (`2 <= L['x'].size()[0]`). Guards on `L['self']` (parameters and module
/// attributes), on globals and on the interpreter's state are counted, not compared.
pub fn comparable_guard(line: &str) -> Result<String, String> {
    let line = torch_trace::without_comment(line.trim());
    let Some((kind, text)) = line.split_once(": ").filter(|(kind, _)| is_kind(kind)) else {
        // Tailor lists its shape guards bare.
        return argument_guard(line).ok_or_else(|| "LAMBDA_GUARD".to_string());
    };
    let counted = || Err(kind.to_string());
    match kind {
        "TENSOR_MATCH" => {
            let inner = text
                .strip_prefix("check_tensor(")
                .and_then(|t| t.strip_suffix(')'))
                .ok_or_else(|| kind.to_string())?;
            let parts = split_top_level(inner);
            let source = parts.first().copied().unwrap_or_default();
            if argument_guard(source).is_none() {
                return counted();
            }
            let dtype = parts
                .iter()
                .find_map(|p| p.strip_prefix("torch."))
                .or_else(|| {
                    parts
                        .iter()
                        .find(|p| ["float32", "int64", "int32", "bool"].contains(p))
                        .copied()
                })
                .unwrap_or("?");
            let keep = |name: &str| {
                parts
                    .iter()
                    .find(|p| p.starts_with(name))
                    .copied()
                    .unwrap_or_default()
            };
            Ok(format!(
                "TENSOR_MATCH {source} {dtype} {} {}",
                keep("size="),
                keep("stride=")
            ))
        }
        "LAMBDA_GUARD" => argument_guard(text).ok_or_else(|| kind.to_string()),
        "EQUALS_MATCH" | "TRUE_MATCH" | "FALSE_MATCH" => match argument_guard(text) {
            Some(text) => Ok(format!("{kind} {text}")),
            None => counted(),
        },
        "TYPE_MATCH" => {
            let source = text
                .strip_prefix("___check_type_id(")
                .and_then(|t| t.split(", ").next())
                .unwrap_or(text);
            let class = text
                .rsplit_once("type=<class '")
                .map_or("", |(_, rest)| rest.trim_end_matches("'>"));
            match argument_guard(source) {
                Some(source) => Ok(format!("{kind} {source} {class}")),
                None => counted(),
            }
        }
        _ => Err(kind.to_string()),
    }
}

/// Whether `text` is a guard kind (`TENSOR_MATCH`): capitals, digits and underscores.
fn is_kind(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// `text` when it reads a call's argument (`L['x']`), not `L['self']` or a global.
fn argument_guard(text: &str) -> Option<String> {
    (text.contains("L['") && !text.contains("L['self']")).then(|| text.trim().to_string())
}

/// The comma-separated parts of `text` outside brackets and parentheses, trimmed.
fn split_top_level(text: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(text[start..].trim());
    parts
}

/// A graph break's text with each `at DIR/file.py:17` shortened to `at file.py:17`: the
/// trace names the script by its absolute path, Tailor by the path it was given.
fn short_paths(text: &str) -> String {
    text.lines()
        .map(|line| match line.split_once(" at ") {
            Some((head, place)) if place.contains(".py:") => {
                let file = place.rsplit('/').next().unwrap_or(place);
                format!("{head} at {file}")
            }
            _ => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl Comparison {
    /// How many compiles agree in full, out of how many either side made.
    pub fn compiles_agreeing(&self) -> (usize, usize) {
        let agreeing = self.compiles.iter().filter(|c| c.agrees()).count();
        (agreeing, self.compiles.len())
    }

    /// Whether PyTorch compiled and Tailor's run of the file compiled nothing: the file is
    /// a model without the script's `torch.compile` calls.
    pub fn tailor_compiled_nothing(&self) -> bool {
        !self.compiles.is_empty() && self.compiles.iter().all(|c| !c.tailor)
    }

    /// How many compared guards are on both sides, out of how many there are.
    pub fn guards_agreeing(&self) -> (usize, usize) {
        self.compiles.iter().fold((0, 0), |(both, all), c| {
            let g = &c.guards;
            (
                both + g.both.len(),
                all + g.both.len() + g.only_pytorch.len() + g.only_tailor.len(),
            )
        })
    }
}

impl fmt::Display for Comparison {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let version = self.pytorch_version.as_deref().unwrap_or("unknown version");
        let count =
            |side: fn(&CompileComparison) -> bool| self.compiles.iter().filter(|c| side(c)).count();
        writeln!(
            f,
            "PyTorch ({version}) compiled {} times, Tailor {} times.",
            count(|c| c.pytorch),
            count(|c| c.tailor)
        )?;
        for compile in &self.compiles {
            let state = match (compile.pytorch, compile.tailor) {
                (true, true) if compile.agrees() => "both compiled, and agree",
                (true, true) => "both compiled; they differ",
                (true, false) => "PyTorch compiled, Tailor did not",
                (false, true) => "Tailor compiled, PyTorch did not",
                (false, false) => "neither",
            };
            writeln!(f, "\n[{}] {}: {state}", compile.id, compile.function)?;
            if let Some(instead) = &compile.tailor_instead {
                writeln!(f, "  Tailor, for the same arguments: {instead}")?;
            }
            let items = [
                ("arguments", &compile.inputs),
                ("recompile reasons", &compile.reasons),
                ("guards", &compile.guards),
                ("symbols", &compile.symbols),
                ("graph break", &compile.graph_break),
                ("output sizes", &compile.outputs),
            ];
            for (name, matched) in items {
                if matched.both.is_empty() && matched.agrees() {
                    continue;
                }
                writeln!(f, "  {name}: {} on both sides", matched.both.len())?;
                for (side, list) in [
                    ("PyTorch only", &matched.only_pytorch),
                    ("Tailor only", &matched.only_tailor),
                ] {
                    for item in list {
                        let item = item.replace('\n', "\n      ");
                        writeln!(f, "    {side}: {item}")?;
                    }
                }
            }
        }
        if self.tailor_compiled_nothing() {
            writeln!(
                f,
                "\nTailor's run compiled nothing: give it the script that ran under TORCH_TRACE, with its torch.compile calls, not only the model."
            )?;
        }
        let (agreeing, all) = self.compiles_agreeing();
        let (guards_both, guards_all) = self.guards_agreeing();
        writeln!(
            f,
            "\nSummary: {agreeing} of {all} compiles agree in full; {guards_both} of {guards_all} compared guards are on both sides."
        )?;
        if !self.not_compared.is_empty() {
            let kinds: Vec<String> = self
                .not_compared
                .iter()
                .map(|(kind, n)| format!("{kind} {n}"))
                .collect();
            writeln!(
                f,
                "Guards not compared (not modelled by Tailor): {}.",
                kinds.join(", ")
            )?;
        }
        if !self.skipped_records.is_empty() {
            let total: usize = self.skipped_records.values().sum();
            writeln!(
                f,
                "Trace records not read: {total} of {} kinds.",
                self.skipped_records.len()
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guards_are_compared_in_one_form_from_either_side() {
        let pytorch = "TENSOR_MATCH: check_tensor(L['x'], Tensor, DispatchKeySet(CPU, BackendSelect), torch.float32, device=None, requires_grad=False, size=[None, 64], stride=[64, 1])  # return F.linear(";
        let tailor =
            "TENSOR_MATCH: check_tensor(L['x'], Tensor, float32, size=[None, 64], stride=[64, 1])";
        assert_eq!(comparable_guard(pytorch), comparable_guard(tailor));
        assert_eq!(
            comparable_guard("LAMBDA_GUARD: 2 <= L['x'].size()[0]  # x"),
            Ok("2 <= L['x'].size()[0]".to_string())
        );
        assert_eq!(
            comparable_guard("2 <= L['x'].size()[0]"),
            Ok("2 <= L['x'].size()[0]".to_string())
        );
        assert!(comparable_guard("ID_MATCH: ___check_obj_id(G['F'], 1)").is_err());
        assert!(
            comparable_guard(
                "TENSOR_MATCH: check_tensor(L['self']._modules['fc']._parameters['weight'], Parameter, torch.float32, size=[4, 4], stride=[4, 1])"
            )
            .is_err()
        );
    }

    #[test]
    fn a_run_that_compiled_nothing_asks_for_the_script() {
        let trace = TorchTrace {
            compiles: vec![CompileRecord {
                function: "forward".into(),
                ..CompileRecord::default()
            }],
            ..TorchTrace::default()
        };
        let comparison = compare(&trace, &[], &[]);
        assert!(comparison.tailor_compiled_nothing());
        assert!(comparison.to_string().contains("give it the script"));
        let both = compare(&trace, &trace.compiles, &[]);
        assert!(!both.tailor_compiled_nothing());
        assert!(!both.to_string().contains("give it the script"));
    }

    #[test]
    fn items_are_matched_one_to_one() {
        let m = Matched::of(
            vec!["a".into(), "b".into(), "b".into()],
            vec!["b".into(), "c".into()],
        );
        assert_eq!(m.both, ["b"]);
        assert_eq!(m.only_pytorch, ["a", "b"]);
        assert_eq!(m.only_tailor, ["c"]);
    }
}
