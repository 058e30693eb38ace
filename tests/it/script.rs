//! Script mode (`tailor script`): whole scripts run as Python, their `torch.compile`
//! wrappers compiled by Tailor and run on the CPU backend.
//!
//! The material's demo runs verbatim (`demos/material_demo.py`) and must log
//! the `TORCH_LOGS=recompiles` lines real PyTorch 2.15 logged for it under its default
//! back end, Inductor (`scripts/pytorch/check_script.py` recorded them in
//! `tests/data/pytorch/material_demo.inductor.txt`: 6 compiles), and print what it printed;
//! with `backend="eager"` it must log `material_demo.eager.txt`'s 8 compiles. Why they
//! differ, AOTAutograd's stamps on the tensors, is `propagated.py` against
//! `propagated.txt`. The other
//! tests are scripts a learner writes: eager calls next to compiled ones, marks, errors, and
//! printed tensors (`tests/data/scripts/printing.py`, whose output under PyTorch is
//! `tests/data/pytorch/printing.txt`), and the values of the ops PyTorch decomposes
//! (`activations.py`: leaky_relu, hardswish, clamp, where, tril, scaled_dot_product_attention,
//! …, against `tests/data/pytorch/activations.txt`; `reshuffles.py`: pixel_shuffle,
//! interpolate, pad, instance/group norm, expand, repeat, stack, pow, against
//! `reshuffles.txt`; `pads.py`: constant pads of symbolic amounts, against `pads.txt`;
//! `interpolate.py`: linear and bilinear interpolation, against `interpolate.txt`;
//! `nearest.py`: nearest interpolation to a size, against `nearest.txt`;
//! `unfold.py`: F.unfold and F.fold, against `unfold.txt`; `regex.py`: the `re` module,
//! against `regex.txt`; `indexing.py`: indexing by tensors, against `indexing.txt`;
//! `unary.py`: sin, cos, erf, roundings and sign, against `unary.txt`; `attention.py`:
//! `nn.MultiheadAttention`, against `attention.txt`; `attention_functional.py`:
//! `F.multi_head_attention_forward`, against `attention_functional.txt`; `encoder_layer.py`:
//! `nn.TransformerEncoderLayer`, against `encoder_layer.txt` to the last digit's rounding;
//! `products.py`: bmm, baddbmm, outer, norms, normalize; `einsum.py`: torch.einsum;
//! `tensor_methods.py`: methods under PyTorch's other names and short decompositions;
//! `functional_more.py`: more of torch.nn written over the primitives;
//! `activations2.py`: softplus, ELU, SELU, Mish, GLU, PReLU and more; `grids.py`:
//! linspace, meshgrid, logsumexp; `factories.py`: arange with float bounds, float or negative
//! steps, PyTorch's errors, and the cosine windows; `hooks.py`: forward hooks and weight_norm; `size_ratios.py`: a size divided by an int,
//! against `size_ratios.eager.txt`; `adaptive.py`: global, 1-d and adaptive pools to any size; `embedding.py`:
//! nn.Embedding's options; `methods.py`: movedim, narrow, unbind, remainder, lerp and more;
//! `small_ops.py`: constants, full_like, mm, roll, repeat_interleave, definition-time fills
//! and contextlib, with its recompiles and shape guards against `small_ops.eager.txt`;
//! `in_place.py`: in-place ops and index assignment, likewise against `in_place.eager.txt`;
//! `model_helpers.py`: `math`, `torch.autograd.Function`, `torch.jit`, ceil-mode pools and
//! the other helpers model files use, likewise); `rnn.py`: the recurrent layers and
//! their cells, against `rnn.txt`, and an LSTM's graph break, against `rnn.eager.txt`).
//! `pool_lengths.py`: which pools specialise a length, against `pool_lengths.eager.txt`;
//! `sorting.py`: sort, argsort, topk, kthvalue and median, against `sorting.eager.txt`;
//! `volumes.py`: 3-d convolutions, pools and norms, against `volumes.eager.txt`;
//! `transformers.py`: the transformer modules, against `transformers.eager.txt`; `windows.py`:
//! `Tensor.unfold`, against `windows.eager.txt`; `einops_registry.py`: einops' backend
//! registry, against `einops_registry.eager.txt`; `complex_rope.py`: complex tensors, against
//! `complex_rope.eager.txt`; `scan_idioms.py`: a second scan's idioms, against
//! `scan_idioms.eager.txt`; `fourier.py`: torch.fft, against `fourier.eager.txt`;
//! `linalg_qr.py`: torch.linalg's QR and norms;
//! `backends.py`: which wrappers share entries; `attention_node.py`: attention's guards.
//! `int_args.py` passes Python ints and bools to compiled code and must log PyTorch's
//! recompile reasons (`tests/data/pytorch/int_args.eager.txt`), their source comments aside.

use crate::mentions;
use std::rc::Rc;
use std::time::Instant;
use tailor::config::Logs;
use tailor::frontend::Stream;
use tailor::script::{self, ScriptOptions, ScriptRun};
use tailor::session::executor::Backend;
use tailor::{Action, SymbolNaming};

const DEMO: &str = "demos/material_demo.py";

fn run_script(source: &str, logs: &str) -> ScriptRun {
    run_script_at(DEMO, source, logs)
}

/// `run_script` for a script whose logs name its own `path`.
fn run_script_at(path: &str, source: &str, logs: &str) -> ScriptRun {
    run_script_named(path, source, logs, SymbolNaming::Tailor)
}

/// `run_script_at` with the `dynamic` log's symbols named by `naming`.
fn run_script_named(path: &str, source: &str, logs: &str, naming: SymbolNaming) -> ScriptRun {
    let start = Instant::now();
    let options = ScriptOptions {
        logs: logs.parse::<Logs>().expect("known logs"),
        path: path.to_string(),
        backend: Rc::new(Backend::cpu()),
        clock: Rc::new(move || start.elapsed().as_secs_f64() * 1e3),
        symbol_names: naming,
    };
    script::run(source, options)
}

/// Runs `tests/data/scripts/{name}.py` and compares its output with what PyTorch printed
/// for it (`tests/data/pytorch/{name}.txt`).
#[track_caller]
fn assert_prints_what_pytorch_printed(name: &str) {
    let run = run_script(&data(&format!("tests/data/scripts/{name}.py")), "");
    assert!(run.error.is_none(), "{name}.py: {:?}", run.error);
    assert_eq!(
        run.text(&[Stream::Stdout]),
        data(&format!("tests/data/pytorch/{name}.txt")),
        "{name}.py"
    );
}

/// `assert_prints_what_pytorch_printed` for a script whose values go through long float
/// computations (matrix products summed in another order than PyTorch's): the printed text
/// is the same apart from its numbers, and each number is within 2e-4 of PyTorch's
/// (relative, for numbers above 1), a difference of rounding in the last printed digit.
#[track_caller]
fn assert_prints_close_to_what_pytorch_printed(name: &str) {
    let run = run_script(&data(&format!("tests/data/scripts/{name}.py")), "");
    assert!(run.error.is_none(), "{name}.py: {:?}", run.error);
    let expected = data(&format!("tests/data/pytorch/{name}.txt"));
    let actual = run.text(&[Stream::Stdout]);
    let (actual_text, actual_numbers) = numbers_apart(&actual);
    let (expected_text, expected_numbers) = numbers_apart(&expected);
    assert_eq!(
        actual_text, expected_text,
        "{name}.py: the text around the numbers"
    );
    for (i, (a, e)) in actual_numbers.iter().zip(&expected_numbers).enumerate() {
        assert!(
            (a - e).abs() <= 2e-4 * e.abs().max(1.0),
            "{name}.py: number {i} is {a}, PyTorch printed {e}\n{actual}"
        );
    }
}

/// The text with each number replaced by `#`, and the numbers in order.
fn numbers_apart(text: &str) -> (String, Vec<f64>) {
    let chars: Vec<char> = text.chars().collect();
    let (mut skeleton, mut numbers) = (String::new(), Vec::new());
    let mut i = 0;
    while i < chars.len() {
        let starts_number = chars[i].is_ascii_digit()
            || (chars[i] == '-' && chars.get(i + 1).is_some_and(char::is_ascii_digit));
        let inside_word = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if !starts_number || inside_word {
            skeleton.push(chars[i]);
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        while i < chars.len()
            && (chars[i].is_ascii_digit()
                || chars[i] == '.'
                || chars[i] == 'e'
                || (matches!(chars[i], '+' | '-') && chars[i - 1] == 'e'))
        {
            i += 1;
        }
        let token: String = chars[start..i].iter().collect();
        match token.parse::<f64>() {
            Ok(value) => {
                skeleton.push('#');
                numbers.push(value);
            }
            Err(_) => skeleton.push_str(&token),
        }
    }
    (skeleton, numbers)
}

fn data(path: &str) -> String {
    std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR")))
        .expect("test data exists")
}

/// A log line with what differs between runs written out of it: the backend objects' ids
/// in a `BACKEND_MATCH` reason (PyTorch's addresses, Tailor's wrapper numbers), which the
/// record writes `0x…`.
fn normalized(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find("(id=0x") {
        let (before, after) = rest.split_at(at + "(id=0x".len());
        out.push_str(before);
        out.push('…');
        rest = after.trim_start_matches(|c: char| c.is_ascii_hexdigit() || c == '…');
    }
    out.push_str(rest);
    out
}

/// The numbers of printed timings, which differ from run to run, as the record writes them.
fn without_numbers(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            let mut number = c.to_string();
            while let Some(&next) = chars.peek() {
                if next.is_ascii_digit() || next == '.' {
                    number.push(next);
                    chars.next();
                } else {
                    break;
                }
            }
            out.push_str(if number.contains('.') { "N" } else { &number });
        } else {
            out.push(c);
        }
    }
    out
}

/// Runs `source` (the demo, or a variant of it) and checks its recompile lines and prints
/// against `record`; returns the run.
#[track_caller]
fn assert_logs_as_recorded(source: &str, record: &str) -> ScriptRun {
    let recorded = data(record);
    let (logs, printed) = recorded
        .split_once("---- stdout\n")
        .expect("the record has both parts");
    let run = run_script(source, "recompiles");
    assert!(run.error.is_none(), "{:?}", run.error);
    let ours: Vec<String> = run.text(&[Stream::Log]).lines().map(normalized).collect();
    let theirs: Vec<String> = logs.lines().map(normalized).collect();
    assert_eq!(ours, theirs);
    assert_eq!(without_numbers(&run.text(&[Stream::Stdout])), printed);
    assert!(
        run.calls
            .iter()
            .all(|c| c.event.action != Action::Compile || c.run_ms >= 0.0)
    );
    run
}

/// The number of compiles wrapper `wrapper` made in `run`.
fn compiles(run: &ScriptRun, wrapper: usize) -> usize {
    run.calls
        .iter()
        .filter(|c| c.wrapper == wrapper && c.event.action == Action::Compile)
        .count()
}

/// The demo as written uses the default back end, Inductor, which runs each graph through
/// AOTAutograd: with gradients on, the dynamic entry's run saves `x` for backward and
/// stamps its batch dim dynamic, so in the last loop the static wrapper compiles that same
/// `x` with a symbol for the batch (`[0/5]`), and batches 7 and 11 hit that entry. One
/// code object, two wrappers: 1 dynamic entry and 5 static ones, as PyTorch.
#[test]
fn the_material_demo_logs_what_pytorch_logs_and_prints_what_it_prints() {
    let run = assert_logs_as_recorded(&data(DEMO), "tests/data/pytorch/material_demo.inductor.txt");
    assert_eq!(run.entries, vec![6]);
    assert_eq!((compiles(&run, 0), compiles(&run, 1)), (1, 5));
    let last_static = run
        .calls
        .iter()
        .rev()
        .find(|c| c.wrapper == 1)
        .expect("calls");
    assert_eq!(last_static.event.action, Action::Hit, "batch 11 hits [0/5]");
}

/// With `backend="eager"` no AOTAutograd stamps the tensors, and the static wrapper
/// compiles each new batch: 1 dynamic entry and 7 static ones fill the limit of 8.
#[test]
fn under_the_eager_backend_the_material_demo_compiles_eight_times() {
    let source = data(DEMO)
        .replace("dynamic=True)", "backend=\"eager\", dynamic=True)")
        .replace("dynamic=False)", "backend=\"eager\", dynamic=False)");
    let run = assert_logs_as_recorded(&source, "tests/data/pytorch/material_demo.eager.txt");
    assert_eq!(run.entries, vec![8]);
    assert_eq!((compiles(&run, 0), compiles(&run, 1)), (1, 7));
}

/// What each back end stamps on the tensors a compiled call returned and saved for
/// backward (`x._dynamo_propagated_dynamic_indices`), with gradients on and off, for the
/// ops whose backward reads their input, and what a static wrapper then does with a
/// stamped tensor, against PyTorch's prints (`tests/data/pytorch/propagated.txt`).
#[test]
fn compiled_calls_stamp_the_tensors_pytorchs_back_ends_stamp() {
    assert_prints_what_pytorch_printed("propagated");
}

/// A recompile log line without what only PyTorch can print: the `  # source  # file:line
/// in fn (internal origin)` comment after a guard, and the user stack trace lines.
fn without_comment(line: &str) -> Option<String> {
    if line.contains("User stack trace:") || line.contains("-   File ") || line.contains("-     ") {
        return None;
    }
    Some(match line.find("  # ") {
        Some(at) => line[..at].trim_end().to_string(),
        None => line.to_string(),
    })
}

#[test]
fn int_and_bool_arguments_log_pytorchs_recompile_reasons() {
    let recorded = data("tests/data/pytorch/int_args.eager.txt");
    let (logs, printed) = recorded
        .split_once("---- stdout\n")
        .expect("the record has both parts");
    const PATH: &str = "tests/data/scripts/int_args.py";
    let run = run_script_at(PATH, &data(PATH), "recompiles");
    assert!(run.error.is_none(), "{:?}", run.error);
    let ours: Vec<String> = run
        .text(&[Stream::Log])
        .lines()
        .filter_map(without_comment)
        .collect();
    let theirs: Vec<String> = logs.lines().filter_map(without_comment).collect();
    assert_eq!(ours, theirs);
    assert_eq!(
        without_numbers(&run.text(&[Stream::Stdout])),
        without_numbers(printed)
    );
    // Repeat: times 1, then a symbol that `range` specialises (2, then 3); head: n 2, then
    // a symbol, then double True, then n = 1 (a slice of one element is its own entry).
    assert_eq!(run.entries, vec![3, 4]);
}

/// Tensor methods under PyTorch's other names (`eq`, `greater`, `divide` with a rounding
/// mode, `negative`, …) and short decompositions (`flip`, `rot90`, `diff`, `select`,
/// `nan_to_num`, `isclose`, `logit`, `sinc`, `count_nonzero`, `mv`, `addmm`), each also as
/// `torch.X(t, …)`, eagerly and compiled under `dynamic=True`, print what PyTorch prints
/// (`tests/data/pytorch/tensor_methods.txt`).
#[test]
fn tensor_methods_under_pytorchs_other_names_compute_what_pytorch_computes() {
    assert_prints_what_pytorch_printed("tensor_methods");
}

/// torch.nn functions and modules written over the primitives (threshold, softmin,
/// the shrinks, cosine similarity, pairwise distance, the feature dropouts, one_hot,
/// channel shuffle, local response norm, Unflatten, Bilinear, the in-place activations,
/// five losses), names PyTorch has and Tailor lacks loading as stand-ins, and a compiled
/// block of them print what PyTorch prints (`tests/data/pytorch/functional_more.txt`).
#[test]
fn more_of_torch_nn_computes_what_pytorch_computes() {
    assert_prints_close_to_what_pytorch_printed("functional_more");
}

/// Idioms of published model files that a scan of files Tailor had not seen met: pools
/// counting only the input, a window as big as the map (specialised: a new size
/// recompiles), convolutions padded by mode or `'same'`, autocast that does nothing on a CPU,
/// legacy tensor types, `broadcast_tensors`, unpacking a tensor and a named tuple in
/// `forward`, print what PyTorch prints (`model_idioms.txt`) and recompile where it does
/// (`model_idioms.eager.txt`).
#[test]
fn idioms_of_published_model_files_compute_and_compile_as_pytorch() {
    assert_prints_close_to_what_pytorch_printed("model_idioms");
    assert_logs_what_pytorch_logged("model_idioms", "recompiles", |line| line.starts_with('['));
}

#[test]
fn tensors_print_as_pytorch_prints_them() {
    assert_prints_what_pytorch_printed("printing");
}

#[test]
fn activations_masks_and_attention_compute_what_pytorch_computes() {
    assert_prints_what_pytorch_printed("activations");
}

/// Pixel shuffles, nearest upsampling, the four paddings, instance and group norms,
/// expand/repeat/stack, powers and variances, eagerly and compiled (the kernels), print
/// what PyTorch prints (`tests/data/pytorch/reshuffles.txt`).
#[test]
fn reshuffles_pads_and_norms_compute_what_pytorch_computes() {
    assert_prints_what_pytorch_printed("reshuffles");
}

/// Constant pads eagerly (negative pads crop, a fill value, three dims) and compiled
/// under `dynamic=True` with symbolic amounts of either sign (U-Net's pad to the skip
/// connection, a symbolic crop) print what PyTorch prints (`tests/data/pytorch/pads.txt`).
#[test]
fn constant_pads_of_symbolic_amounts_compute_what_pytorch_computes() {
    assert_prints_what_pytorch_printed("pads");
}

/// `F.unfold` and `F.fold` (kernels, dilations, paddings and strides of both dims, an
/// unbatched input, `nn.Unfold` and `nn.Fold`) eagerly and compiled under `dynamic=True`
/// (PiT's patch embedding) print what PyTorch prints (`tests/data/pytorch/unfold.txt`).
#[test]
fn unfold_and_fold_compute_what_pytorch_computes() {
    assert_prints_what_pytorch_printed("unfold");
}

/// `re` (CPython's, frozen in over the VM's native `_sre`): the splits, matches,
/// substitutions and flags model files parse their config strings with print what CPython
/// prints (`tests/data/pytorch/regex.txt`).
#[test]
fn regular_expressions_match_what_cpython_matches() {
    assert_prints_what_pytorch_printed("regex");
}

/// Indexing by integer tensors (one or several, broadcast, negative, beside ints, slices,
/// `None` and `...`; an index list of several ints), eagerly and compiled under
/// `dynamic=True` (SAM's parameter table read at relative coordinates, CLIP's row per batch
/// element at a computed position), prints what PyTorch prints
/// (`tests/data/pytorch/indexing.txt`).
#[test]
fn indexing_by_tensors_computes_what_pytorch_computes() {
    assert_prints_what_pytorch_printed("indexing");
}

/// Linear and bilinear interpolation (scale factors, sizes, aligned corners, shrinking)
/// eagerly and compiled under `dynamic=True` to symbolic sizes print what PyTorch prints
/// (`tests/data/pytorch/interpolate.txt`).
#[test]
fn bilinear_interpolation_computes_what_pytorch_computes() {
    assert_prints_what_pytorch_printed("interpolate");
}

/// Nearest interpolation to a `size=` (eager, `nn.Upsample`, and compiled under
/// `dynamic=True` to a skip connection's symbolic size) reads the positions PyTorch's
/// float32 scale reads, where exact integer arithmetic would not (2 to 82 positions)
/// (`tests/data/pytorch/nearest.txt`).
#[test]
fn nearest_interpolation_to_a_size_reads_what_pytorch_reads() {
    assert_prints_what_pytorch_printed("nearest");
}

/// sin, cos, erf, the roundings and sign, eagerly and compiled (a hand-written erf GELU,
/// the Transformer's sinusoidal positions for a symbolic length), print what PyTorch prints
/// (`tests/data/pytorch/unary.txt`).
#[test]
fn trigonometry_erf_and_roundings_compute_what_pytorch_computes() {
    assert_prints_what_pytorch_printed("unary");
}

/// `nn.MultiheadAttention` (batch-first self-attention with averaged and per-head weights,
/// cross-attention, sequence-first with other key and value widths; compiled under
/// `dynamic=True` for two sequence lengths, its packed projection's chunks as the linear
/// biases) prints what PyTorch prints (`tests/data/pytorch/attention.txt`).
#[test]
fn multihead_attention_computes_what_pytorch_computes() {
    assert_prints_what_pytorch_printed("attention");
}

/// `F.multi_head_attention_forward` as CLIP's `AttentionPool2d` calls it (separate
/// projections, an output projection to another width, no weights), with packed
/// projections, a float mask and per-head weights, and compiled under `dynamic=True`,
/// prints what PyTorch prints to the last digit's rounding (PyTorch's path without weights
/// is `scaled_dot_product_attention`, its sums in another order;
/// `tests/data/pytorch/attention_functional.txt`).
#[test]
fn multi_head_attention_forward_computes_what_pytorch_computes() {
    assert_prints_close_to_what_pytorch_printed("attention_functional");
}

/// Attention masks as PyTorch applies them (`tests/data/scripts/attention_masks.py`):
/// `nn.MultiheadAttention`'s bool `attn_mask` (True is not attended), its
/// `key_padding_mask` per batch row and a float mask added, and
/// `F.scaled_dot_product_attention`'s bool mask (True is attended), float mask and
/// `is_causal` (`tests/data/pytorch/attention_masks.txt`).
#[test]
fn attention_masks_compute_what_pytorch_computes() {
    assert_prints_close_to_what_pytorch_printed("attention_masks");
}

#[test]
fn printed_numbers_are_told_from_the_text_around_them() {
    let (text, numbers) = numbers_apart("tensor([[ 1.4883e-03, -2.0000]], x1) shape (3, 4)\n");
    assert_eq!(text, "tensor([[ #, #]], x1) shape (#, #)\n");
    assert_eq!(numbers, [1.4883e-3, -2.0, 3.0, 4.0]);
}

/// `torch.bmm`, `baddbmm`, `outer`, norms and `F.normalize`, eagerly and compiled (cosine
/// attention scores for symbolic lengths), print what PyTorch prints
/// (`tests/data/pytorch/products.txt`).
#[test]
fn batched_products_and_norms_compute_what_pytorch_computes() {
    assert_prints_close_to_what_pytorch_printed("products");
}

/// `torch.einsum` (batched products, attention scores, transposes, full and partial sums,
/// outer products, ellipses, three operands, an implicit output), eagerly and compiled for
/// symbolic lengths, prints what PyTorch prints (`tests/data/pytorch/einsum.txt`).
#[test]
fn einsum_computes_what_pytorch_computes() {
    assert_prints_close_to_what_pytorch_printed("einsum");
}

/// Softplus, LogSigmoid, ELU, CELU, SELU, Mish, Softsign, Tanhshrink, GLU, PReLU and
/// GELU's tanh form, eagerly and compiled, print what PyTorch prints to its last digit's
/// rounding: exp(x) - 1 and log(1 + x) stand for expm1 and log1p, which WGSL lacks
/// (`tests/data/pytorch/activations2.txt`).
#[test]
fn more_activations_compute_what_pytorch_computes() {
    assert_prints_close_to_what_pytorch_printed("activations2");
}

/// A size divided by an int (`tests/data/scripts/size_ratios.py`: EnCodec's padding to
/// whole frames, `math.ceil((length - kernel) / stride + 1)`, and a comparison of a half)
/// stays a size where PyTorch keeps a SymFloat: the calls recompile where PyTorch's do, for
/// the same entries, with PyTorch's outputs (`size_ratios.eager.txt`). The one difference is
/// a failed guard's text: Tailor states it over the size (`2 <= x.size()[0] <= 6`) where
/// PyTorch prints the ratio (`(x.size()[0] / 2) <= 3.0`), the same sizes either way.
#[test]
fn sizes_divided_by_ints_recompile_where_pytorch_does() {
    let recorded = data("tests/data/pytorch/size_ratios.eager.txt");
    let (theirs, printed) = recorded
        .split_once("---- stdout\n")
        .expect("the record has both parts");
    let path = "tests/data/scripts/size_ratios.py";
    let run = run_script_at(path, &data(path), "recompiles");
    assert!(run.error.is_none(), "{:?}", run.error);
    let ours = run.text(&[Stream::Log]);
    // Each failure reason as the entry it names; the ratio's guard compared on its own.
    let lines = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|line| line.contains("[__recompiles]"))
            .filter_map(without_comment)
            .map(|line| match line.split_once("    - ") {
                Some((head, reason)) if !reason.contains("size mismatch") => {
                    format!(
                        "{head}    - {}",
                        reason.split(':').next().unwrap_or_default()
                    )
                }
                _ => line,
            })
            .collect()
    };
    assert_eq!(lines(&ours), lines(theirs));
    assert!(ours.contains("- 0/0: 2 <= x.size()[0] <= 6"), "{ours}");
    assert!(
        theirs.contains("- 0/0: (x.size()[0] / 2) <= 3.0"),
        "{theirs}"
    );
    assert_eq!(
        without_numbers(&run.text(&[Stream::Stdout])),
        without_numbers(printed)
    );
}

/// Forward hooks (a pre-hook replacing the arguments, a hook replacing the output, a removed
/// one) and weight normalisation (`torch.nn.utils.weight_norm`'s pre-hook, `dim=None`,
/// `remove_weight_norm`, and `parametrizations.weight_norm`), eagerly and compiled, print
/// what PyTorch prints (`tests/data/pytorch/hooks.txt`).
#[test]
fn hooks_and_weight_norm_compute_what_pytorch_computes() {
    assert_prints_what_pytorch_printed("hooks");
}

/// `torch.arange` with float bounds or steps gives PyTorch's float32 values (an integer dtype
/// steps in truncated integers, as PyTorch's kernel does), a negative step counts down, and
/// a step that cannot reach the end raises PyTorch's error
/// (`tests/data/pytorch/factories.txt`).
#[test]
fn ranges_with_float_or_negative_steps_compute_what_pytorch_computes() {
    assert_prints_what_pytorch_printed("factories");
}

/// `torch.linspace` (PyTorch's two-ended values), `meshgrid` in both indexings and
/// `logsumexp`, eagerly and compiled for a symbolic length, print what PyTorch prints
/// (`tests/data/pytorch/grids.txt`).
#[test]
fn linspace_meshgrid_and_logsumexp_compute_what_pytorch_computes() {
    assert_prints_close_to_what_pytorch_printed("grids");
}

/// Adaptive max pooling to 1 (2-d and 1-d) and 1-d adaptive average pooling, eagerly and in
/// a compiled squeeze-and-excitation gate for a symbolic image size, print what PyTorch
/// prints (`tests/data/pytorch/adaptive.txt`).
#[test]
fn global_pools_compute_what_pytorch_computes() {
    assert_prints_close_to_what_pytorch_printed("adaptive");
}

/// `nn.Embedding`'s `padding_idx` (a zero row, negative indices counted from the end),
/// `_weight`, and `F.embedding`'s keyword arguments, print what PyTorch prints
/// (`tests/data/pytorch/embedding.txt`).
#[test]
fn embedding_options_compute_what_pytorch_computes() {
    assert_prints_what_pytorch_printed("embedding");
}

/// Tensor methods model files use (unflatten, view_as, movedim, swapaxes, narrow, unbind,
/// new_full, reciprocal, floor_divide, remainder, fmod, lerp, addcmul, addcdiv, addmm),
/// eagerly and compiled for symbolic sizes, print what PyTorch prints
/// (`tests/data/pytorch/methods.txt`).
#[test]
fn tensor_methods_compute_what_pytorch_computes() {
    assert_prints_close_to_what_pytorch_printed("methods");
}

/// Small things real model files do (`tests/data/scripts/small_ops.py`): `torch.inf`, `pi`
/// and `e`, `is_cuda`, `full_like`, factories given `size=`, `mm`, `roll`,
/// `repeat_interleave`, `nn.init.trunc_normal_`, in-place fills of module state where it is
/// defined, and a `contextlib.contextmanager`, eagerly and compiled (a module under automatic
/// dynamic, a function under `dynamic=True`), print what PyTorch prints
/// (`tests/data/pytorch/small_ops.txt`) and log its recompiles and shape guards
/// (`small_ops.eager.txt`): a roll or a repeat asks nothing of a symbolic size.
#[test]
fn small_ops_compute_and_guard_what_pytorch_does() {
    assert_prints_close_to_what_pytorch_printed("small_ops");
    assert_logs_what_pytorch_logged("small_ops", "recompiles,guards", |line| {
        line.contains("[__recompiles]") || is_shape_guard(line)
    });
}

/// einops (`tests/data/scripts/rearranging.py`, Tailor's own `py/einops`): `rearrange`,
/// `reduce` (mean, sum, max, min, prod), `repeat` and `parse_shape` with groups, `...`, `1`
/// and `()` and keyword lengths, the `Rearrange`/`Reduce` layers, and the `torch.eye` and
/// `torch.finfo` of vit-pytorch's LSA mask, eagerly and compiled (a small ViT under
/// automatic dynamic, LeViT's and CvT's patterns under `dynamic=True`), print what PyTorch
/// 2.15 with einops 0.8.2 prints (`tests/data/pytorch/rearranging.txt`) and log its
/// recompiles and shape guards (`rearranging.eager.txt`): a split `(h 2)` of a symbolic size
/// asks `h % 2 == 0` as PyTorch's trace through einops does, and `(x y)` split by a symbolic
/// `y` asks nothing.
#[test]
fn einops_patterns_compute_and_guard_what_pytorch_does() {
    assert_prints_close_to_what_pytorch_printed("rearranging");
    assert_logs_what_pytorch_logged("rearranging", "recompiles,guards", |line| {
        line.contains("[__recompiles]") || is_shape_guard(line)
    });
}

/// numpy while a model is built (`tests/data/scripts/numpy_tables.py`, Tailor's own
/// `py/numpy`): constants, scalar types, math on numbers and shapes (`np.log`, `np.prod`),
/// arrays printed as numpy prints them (their float32 values within the last digit),
/// ufuncs, indexing and reductions, `torch.from_numpy`/`torch.tensor` of arrays, Whisper's
/// sinusoids and `-np.inf` mask, and numpy constants and ufuncs in a compiled `forward`,
/// print what PyTorch 2.15 with numpy 2 prints (`tests/data/pytorch/numpy_tables.txt`)
/// and log its recompiles and shape guards (`numpy_tables.eager.txt`).
#[test]
fn numpy_at_definition_time_computes_and_guards_what_pytorch_does() {
    assert_prints_close_to_what_pytorch_printed("numpy_tables");
    assert_logs_what_pytorch_logged("numpy_tables", "recompiles,guards", |line| {
        line.contains("[__recompiles]") || is_shape_guard(line)
    });
}

/// In-place ops, functionalized (`tests/data/scripts/in_place.py`): index assignment with
/// ints, strided slices, `...` and masks, `fill_`/`zero_`/`copy_`/`mul_`/`masked_fill_` and
/// the rest, where a model builds its tables (a sinusoidal position table) and inside a
/// compiled `forward` and a time loop writing each step into a buffer of its own; `//` and
/// `%` on tensors; PyTorch's errors for an in-place result of another dtype or shape. It
/// prints what PyTorch prints (`tests/data/pytorch/in_place.txt`) and logs its recompiles and
/// shape guards (`in_place.eager.txt`): a write asks nothing of a symbolic size.
#[test]
fn in_place_writes_compute_and_guard_what_pytorch_does() {
    assert_prints_close_to_what_pytorch_printed("in_place");
    assert_logs_what_pytorch_logged("in_place", "recompiles,guards", |line| {
        line.contains("[__recompiles]") || is_shape_guard(line)
    });
}

/// What real model files reach for while they are built and run
/// (`tests/data/scripts/model_helpers.py`): `math` beyond `sqrt` (`log2`, `prod`, `gcd`,
/// `erf`, …), `torch.nn.modules.utils`' tuples, `finfo`/`iinfo`, `cumsum` and
/// `logcumsumexp`, NumPy's `keepdims`, ceil-mode pools (an average pool whose last windows
/// overhang divides by what they cover), a `torch.autograd.Function`, `torch.jit`'s
/// decorators, `ModuleList.insert` and item assignment, `reset_parameters`, `RMSNorm`,
/// `L1Loss`/`MSELoss`, `ParameterList` and `requires_grad`, eagerly and compiled over three
/// batch sizes: it prints what PyTorch prints (`model_helpers.txt`) and logs its recompiles
/// and shape guards (`model_helpers.eager.txt`).
#[test]
fn model_helpers_compute_and_guard_what_pytorch_does() {
    assert_prints_close_to_what_pytorch_printed("model_helpers");
    assert_logs_what_pytorch_logged("model_helpers", "recompiles,guards", |line| {
        line.contains("[__recompiles]") || is_shape_guard(line)
    });
}

/// `nn.TransformerEncoderLayer` (batch first, norm first with GELU; compiled under
/// `dynamic=True` for two batch sizes and lengths) prints what PyTorch prints, to the last
/// digit's rounding (`tests/data/pytorch/encoder_layer.txt`).
#[test]
fn transformer_encoder_layer_computes_what_pytorch_computes() {
    assert_prints_close_to_what_pytorch_printed("encoder_layer");
}

/// Transposed convolutions (strided, padded, grouped, dilated, 1-d), eagerly and
/// compiled with the weight an input under `dynamic=True` (its sizes specialised), print
/// what PyTorch prints (`tests/data/pytorch/conv_transpose.txt`).
#[test]
fn transposed_convolutions_compute_what_pytorch_computes() {
    assert_prints_what_pytorch_printed("conv_transpose");
}

#[test]
fn without_logs_a_script_prints_only_its_own_output() {
    let run = run_script(&data(DEMO), "");
    assert!(run.error.is_none(), "{:?}", run.error);
    assert_eq!(run.text(&[Stream::Log]), "");
    assert!(
        run.text(&[Stream::Stdout])
            .ends_with("多种 batch size 下输出形状均正确\n")
    );
}

const NET: &str = "import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return torch.relu(self.fc(x))


net = Net()
";

#[test]
fn eager_calls_and_compiled_calls_give_the_same_values() {
    let source = format!(
        "{NET}compiled = torch.compile(net, dynamic=True)
x = torch.randn(5, 4)
eager = net(x)
fast = compiled(x)
print(tuple(fast.shape), tuple(eager.shape))
print(float(((eager - fast) * (eager - fast)).sum()) < 1e-10)
print(float(eager.sum() * 0) == 0.0)
"
    );
    let run = run_script(&source, "");
    assert!(run.error.is_none(), "{:?}", run.error);
    assert_eq!(run.text(&[Stream::Stdout]), "(5, 3) (5, 3)\nTrue\nTrue\n");
    assert_eq!(run.calls.len(), 1);
}

/// A model called eagerly before `torch.compile` names its parameters keeps the values
/// that call saw: the compiled call computes the same numbers.
#[test]
fn an_eager_call_before_compiling_sees_the_compiled_parameters() {
    let source = "import torch
import torch.nn as nn

m = nn.Sequential(nn.Conv2d(2, 4, 3, groups=2), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(),
                  nn.Linear(16, 3)).eval()
x = torch.randn(2, 2, 4, 4)
eager = m(x)
fast = torch.compile(m)(x)
print(float(((eager - fast) * (eager - fast)).sum()) < 1e-10, float(eager.abs().sum()) > 0)
";
    let run = run_script(source, "");
    assert!(run.error.is_none(), "{:?}", run.error);
    assert_eq!(run.text(&[Stream::Stdout]), "True True\n");
}

#[test]
fn nanogpt_generates_in_a_script_through_its_compiled_forward() {
    let model = data("tests/data/models/nanogpt.py");
    let source = format!(
        "{model}
model = NanoGPT().eval()
compiled = torch.compile(model, dynamic=True)
idx = torch.zeros(1, 4, dtype=torch.long)
for _ in range(3):
    logits, loss = compiled(idx)
    assert loss is None
    print(tuple(logits.shape))
    idx = torch.cat([idx, torch.zeros(1, 1, dtype=torch.long)], dim=1)
"
    );
    let run = run_script(&source, "");
    assert!(run.error.is_none(), "{:?}", run.error);
    let printed = run.text(&[Stream::Stdout]);
    assert!(
        printed.starts_with("number of parameters: 0.12M\n"),
        "{printed}"
    );
    assert!(
        printed.ends_with("(1, 1, 256)\n(1, 1, 256)\n(1, 1, 256)\n"),
        "{printed}"
    );
    // One dynamic entry serves the growing sequence.
    assert_eq!(run.entries, vec![1]);
}

#[test]
fn mark_dynamic_in_a_script_wins_over_dynamic_false() {
    let source = format!(
        "{NET}compiled = torch.compile(net, dynamic=False)
for n in [8, 9, 10]:
    x = torch.randn(n, 4)
    torch._dynamo.mark_dynamic(x, 0)
    compiled(x)
"
    );
    let run = run_script(&source, "guards");
    assert!(run.error.is_none(), "{:?}", run.error);
    assert_eq!(run.entries, vec![1]);
    let log = run.text(&[Stream::Log]);
    assert!(log.contains("[0/0] [__guards] GUARDS:"), "{log}");
    assert!(log.contains("size=[None, 4]"), "{log}");
}

#[test]
fn a_compile_error_stops_the_script_at_the_line_in_forward() {
    let source = format!(
        "{NET}compiled = torch.compile(net)
compiled(torch.randn(2, 5))
print('not reached')
"
    );
    let run = run_script(&source, "");
    let error = run
        .error
        .as_ref()
        .expect("a wrong feature size fails")
        .to_string();
    assert!(mentions(&error, "11:27"), "{error}");
    assert_eq!(run.text(&[Stream::Stdout]), "");
}

#[test]
fn a_python_error_in_the_script_names_its_line() {
    let run = run_script(&format!("{NET}print('before')\nnet.missing\n"), "");
    let error = run.error.as_ref().expect("an AttributeError").to_string();
    assert!(mentions(&error, "16:1"), "{error}");
    assert!(error.contains("missing"), "{error}");
    assert_eq!(run.text(&[Stream::Stdout]), "before\n");
}

#[test]
fn an_endless_loop_after_a_compiled_call_is_stopped() {
    let source = format!(
        "{NET}compiled = torch.compile(net)
compiled(torch.randn(2, 4))
while True:
    pass
"
    );
    let run = run_script(&source, "");
    let error = run
        .error
        .as_ref()
        .expect("the step budget stops it")
        .to_string();
    assert!(error.contains("lines of Python"), "{error}");
    // The budget runs out on the loop's condition or on its body, as the count falls.
    assert!(
        mentions(&error, "17:7") || mentions(&error, "18:5"),
        "{error}"
    );
}

#[test]
fn set_logs_and_reset_in_the_script_log_as_pytorch_does() {
    let source = format!(
        "{NET}compiled = torch.compile(net)
torch._logging.set_logs(recompiles=True)
compiled(torch.randn(2, 4))
compiled(torch.randn(3, 4))
torch._dynamo.reset()
compiled(torch.randn(4, 4))
compiled(torch.randn(5, 4))
"
    );
    let run = run_script(&source, "");
    assert!(run.error.is_none(), "{:?}", run.error);
    // What PyTorch 2.15 logs for the same script (backend="eager").
    let expected = format!(
        "[0/1] [__recompiles] Recompiling function forward in {DEMO}:10
[0/1] [__recompiles]     triggered by the following guard failure(s):
[0/1] [__recompiles]     - 0/0: tensor 'x' size mismatch at index 0. expected 2, actual 3
[0/1] [__recompiles] Recompiling function forward in {DEMO}:10
[0/1] [__recompiles]     triggered by the following guard failure(s):
[0/1] [__recompiles]     - 0/0: tensor 'x' size mismatch at index 0. expected 4, actual 5
"
    );
    assert_eq!(run.text(&[Stream::Log]), expected);
}

#[test]
fn unknown_logs_are_refused_by_name() {
    let err = "recompiles,graph_code".parse::<Logs>().unwrap_err();
    assert!(err.contains("unknown log 'graph_code'"), "{err}");
}

/// PyTorch 2.8+ names a symbol by a hash of its source; with `--symbol-names pytorch` the
/// `dynamic` log creates the symbols PyTorch 2.15 created for the same script (recorded by
/// scripts/pytorch/check_symbols.py), under the same names, collisions and int arguments
/// included.
#[test]
fn pytorch_symbol_names_are_the_ones_pytorch_creates() {
    let source = data("tests/data/scripts/symbol_names.py");
    let run = run_script_named("symbol_names.py", &source, "dynamic", SymbolNaming::PyTorch);
    assert!(run.error.is_none(), "{:?}", run.error);
    let created = |text: &str| -> Vec<String> {
        text.lines()
            .filter_map(|line| {
                let (prefix, event) = line.split_once(" create_symbol ")?;
                let (name_and_hint, source) = event.split_once(" for ")?;
                let source = source.split_whitespace().next()?;
                Some(format!(
                    "{prefix} create_symbol {name_and_hint} for {source}"
                ))
            })
            .collect()
    };
    let recorded = data("tests/data/pytorch/symbol_names.txt");
    let (pytorch_log, pytorch_stdout) = recorded
        .split_once("---- stdout\n")
        .expect("the record has a stdout part");
    assert_eq!(created(&run.text(&[Stream::Log])), created(pytorch_log));
    assert_eq!(run.text(&[Stream::Stdout]), pytorch_stdout);

    let numbered = run_script_named("symbol_names.py", &source, "dynamic", SymbolNaming::Tailor);
    let first: Vec<String> = created(&numbered.text(&[Stream::Log]))
        .into_iter()
        .take(3)
        .collect();
    assert_eq!(
        first,
        [
            "[0/0] create_symbol s0 = 3 for L['x'].size()[0]",
            "[0/0] create_symbol s1 = 4 for L['x'].size()[1]",
            "[0/0] create_symbol s2 = 5 for L['y'].size()[1]",
        ]
    );
}

/// Graph breaks (`tests/data/scripts/graph_breaks.py`: a print in a module's forward, a
/// branch on a tensor's value both ways, an int read by `.item()`) make the graphs,
/// resume functions and recompiles PyTorch 2.15 made for it: its `[__recompiles]` lines
/// and the place and reason of each `[__graph_breaks]` entry
/// (`tests/data/pytorch/graph_breaks.eager.txt`), and it prints what PyTorch printed.
#[test]
fn graph_breaks_make_pytorchs_graphs_and_resume_functions() {
    // What both print of a break: where it is and its reason's first line (PyTorch adds
    // hints, its own stack and the user's).
    assert_logs_what_pytorch_logged("graph_breaks", "recompiles,graph_breaks", |line| {
        line.contains("[__recompiles]")
            || line.contains("[__graph_breaks] Graph break")
            || line.contains("[__graph_breaks] Graph Break Reason:")
    });
}

/// `nn.RNN`, `nn.GRU`, `nn.LSTM` (layers, directions, batch first, initial states, no
/// bias, unbatched) and their cells compute what PyTorch computes
/// (`tests/data/pytorch/rnn.txt`), and inside a compiled forward an LSTM is the graph break
/// Dynamo's default `allow_rnn=False` makes, with its reason (`rnn.eager.txt`), the LSTM's
/// output and state flowing into the graph after it.
#[test]
fn recurrent_layers_compute_and_break_as_pytorch_does() {
    assert_prints_close_to_what_pytorch_printed("rnn");
    assert_logs_what_pytorch_logged("rnn", "recompiles,graph_breaks", |line| {
        line.contains("[__recompiles]")
            || line.contains("[__graph_breaks] Graph break")
            || line.contains("[__graph_breaks] Graph Break Reason:")
            || line.contains("[__graph_breaks]   Explanation:")
    });
}

/// Graph breaks inside functions forward calls (`tests/data/scripts/nested_breaks.py`: a
/// helper's `.item()`, a submodule's `print`): forward's graph ends at each call, and its
/// resume functions are named after the call's line, as in PyTorch's record
/// (`nested_breaks.eager.txt`); the values are PyTorch's. Dynamo compiles each called
/// function as a frame of its own (PyTorch's frames 1, 2, 4 and 5: `helper`, its resume
/// function, `Inner.forward` and its resume function), which Tailor runs eagerly: its
/// frames are PyTorch's 0, 3 and 6, numbered 0, 1 and 2, and their lines are PyTorch's.
#[test]
fn a_break_inside_a_called_function_ends_forwards_graph_at_the_call() {
    assert_prints_close_to_what_pytorch_printed("nested_breaks");
    assert_forwards_frames_log_what_pytorch_logged(
        "nested_breaks",
        &[("0", "0"), ("3", "1"), ("6", "2")],
    );
}

/// Runs `tests/data/scripts/{name}.py` with the recompile and graph-break logs and compares
/// their lines (the recompiles and their reasons, each break and its reason) with PyTorch's
/// record of the frames `frames` maps to Tailor's (`(pytorch, tailor)` frame numbers):
/// the frames Dynamo compiles for a function forward calls, which Tailor runs eagerly, are
/// left out of the record, and the others renumbered.
#[track_caller]
fn assert_forwards_frames_log_what_pytorch_logged(name: &str, frames: &[(&str, &str)]) {
    let kept = |line: &str| {
        line.contains("[__recompiles] Recompiling")
            || line.contains("[__recompiles]     - ")
            || line.contains("[__graph_breaks] Graph break")
            || line.contains("[__graph_breaks] Graph Break Reason:")
    };
    let recorded = data(&format!("tests/data/pytorch/{name}.eager.txt"));
    let (theirs, _) = recorded.split_once("---- stdout\n").expect("both parts");
    let forwards: Vec<String> = theirs
        .lines()
        .filter(|line| kept(line))
        .filter_map(|line| {
            let (frame, rest) = line.strip_prefix('[')?.split_once('/')?;
            let (_, ours) = frames.iter().find(|(pytorch, _)| *pytorch == frame)?;
            // A reason names the frame's entries by id too.
            let rest = rest.replace(&format!("- {frame}/"), &format!("- {ours}/"));
            Some(format!("[{ours}/{rest}"))
        })
        .collect();
    let path = format!("tests/data/scripts/{name}.py");
    let run = run_script_at(&path, &data(&path), "recompiles,graph_breaks");
    assert!(run.error.is_none(), "{:?}", run.error);
    let ours: Vec<String> = run
        .text(&[Stream::Log])
        .lines()
        .filter(|line| kept(line))
        .map(str::to_string)
        .collect();
    assert_eq!(ours, forwards);
}

/// Runs `tests/data/scripts/{name}.py` with `logs` and compares the log lines `kept`
/// selects (their source comments and user stacks aside) and what it printed (numbers
/// aside) with PyTorch's record of the same script (`tests/data/pytorch/{name}.eager.txt`).
#[track_caller]
fn assert_logs_what_pytorch_logged(name: &str, logs: &str, kept: fn(&str) -> bool) {
    let recorded = data(&format!("tests/data/pytorch/{name}.eager.txt"));
    let (theirs, printed) = recorded
        .split_once("---- stdout\n")
        .expect("the record has both parts");
    let path = format!("tests/data/scripts/{name}.py");
    let run = run_script_at(&path, &data(&path), logs);
    assert!(run.error.is_none(), "{:?}", run.error);
    // PyTorch's guard tree prints a shape guard as a `LAMBDA_GUARD` leaf; Tailor as itself.
    let lines = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|line| kept(line))
            .filter_map(without_comment)
            .map(|line| normalized(&line.replacen("+- LAMBDA_GUARD: ", "", 1)))
            .collect()
    };
    assert_eq!(lines(&run.text(&[Stream::Log])), lines(theirs));
    assert_eq!(
        without_numbers(&run.text(&[Stream::Stdout])),
        without_numbers(printed)
    );
}

/// A call through graph breaks returns what the same Python computes eagerly: each
/// graph's kernels run on what Python held at its break (the script asserts it).
#[test]
fn a_call_through_graph_breaks_computes_what_python_computes() {
    let source = r#"
import torch
import torch.nn as nn

class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x).relu()
        if h.sum() > 1.0:
            h = h * 2
        k = int(h.shape[0])
        print("rows", k)
        return h[:, :2] + k

torch.manual_seed(0)
model = Gate()
compiled = torch.compile(model, dynamic=True)
for b in [2, 3, 7, 1]:
    x = torch.randn(b, 4)
    assert (compiled(x) - model(x)).abs().amax().item() < 1e-5
    assert (compiled(-x) - model(-x)).abs().amax().item() < 1e-5
"#;
    let run = run_script_at("gate.py", source, "");
    assert!(run.error.is_none(), "{:?}", run.error);
    assert_eq!(run.text(&[Stream::Stdout]).lines().count(), 16);
    let breaks: usize = run.calls.iter().map(|call| call.event.breaks.len()).sum();
    assert_eq!(breaks, 16, "two breaks in each of 8 calls");
}

/// `reshape` and `view` of contiguous, transposed and permuted tensors and of `contiguous()`
/// (`tests/data/scripts/reshape_strides.py`) log the shape guards and recompiles PyTorch
/// 2.15 logged (`tests/data/pytorch/reshape_strides.eager.txt`): `view(-1, 4)` guards each
/// step of PyTorch's view algorithm (`((t.size()[0]*t.size()[1]) // 4) != t.size()[0]`, …),
/// whose failure at (3, 4) recompiles; a transpose flattened, a permute merged in memory and
/// a copy ask nothing their ranges do not answer.
#[test]
fn reshape_and_view_log_pytorchs_guards() {
    assert_logs_what_pytorch_logged("reshape_strides", "recompiles,guards", |line| {
        line.contains("[__recompiles]") || is_shape_guard(line)
    });
}

/// A `[__guards]` line that is a shape guard: PyTorch's `LAMBDA_GUARD` leaves on sizes,
/// Tailor's lines that are not a tensor's or the header.
fn is_shape_guard(line: &str) -> bool {
    let Some((_, guard)) = line.split_once("[__guards] ") else {
        return false;
    };
    let guard = guard.strip_prefix("+- LAMBDA_GUARD: ").unwrap_or(guard);
    guard.starts_with("L[")
        || guard.starts_with('(')
        || guard.starts_with(|c: char| c.is_ascii_digit())
}

/// `view` of a transposed tensor raises the error PyTorch's fake tensors raise under
/// `torch.compile`, at the call's line:col; `reshape` of it copies.
#[test]
fn view_of_a_transposed_tensor_is_pytorchs_error_at_its_line() {
    let source = "import torch\n\ndef f(t):\n    return t.t().view(-1)\n\ntorch.compile(f, dynamic=True)(torch.randn(6, 8))\n";
    let run = run_script(source, "");
    let error = run.error.as_ref().expect("view cannot view").to_string();
    assert!(mentions(&error, "4:12"), "{error}");
    assert!(
        error.contains("Cannot view a tensor with shape torch.Size([s1, s0]) and strides (1, s1) as a tensor with shape (s0*s1,)!"),
        "{error}"
    );
    let run = run_script(&source.replace(".view(", ".reshape("), "");
    assert!(run.error.is_none(), "{:?}", run.error);
}

/// Under `dynamic=True`, max_pool1d specialises the length (PyTorch's CPU kernel reads it as
/// an int: a recompile per length) while avg_pool1d, the 2-d pools and the global pool keep
/// it symbolic (`tests/data/scripts/pool_lengths.py` against `pool_lengths.eager.txt`).
#[test]
fn pools_specialise_the_lengths_pytorch_specialises() {
    assert_logs_what_pytorch_logged("pool_lengths", "recompiles", |line| {
        line.contains("[__recompiles]")
    });
}

/// Wrappers made alike (the same back end or callable, mode, options and `dynamic=`) share
/// entries, and a wrapper unlike them recompiles with PyTorch's `BACKEND_MATCH` reason,
/// naming a callable back end by its `__name__` (`backends.py` against
/// `backends.eager.txt`).
#[test]
fn wrappers_made_alike_share_entries_as_pytorchs_do() {
    assert_logs_what_pytorch_logged("backends", "recompiles", |line| {
        line.contains("[__recompiles]")
    });
}

/// `sort`, `argsort`, `msort`, `topk`, `kthvalue` and `median` (`sorting.py`): PyTorch's
/// stable order with NaN above every number, eagerly and compiled for symbolic lengths, print
/// what PyTorch prints and guard what it guards (`sorting.eager.txt`): a sort asks nothing of
/// a symbolic length, a top-k of 3 asks `3 <= n` as PyTorch's `topk_meta` does.
#[test]
fn sorting_computes_and_guards_what_pytorch_does() {
    assert_prints_what_pytorch_printed("sorting");
    assert_logs_what_pytorch_logged("sorting", "recompiles,guards", |line| {
        line.contains("[__recompiles]") || (is_shape_guard(line) && !line.contains("stride()"))
    });
}

/// Volumes (`volumes.py`): `conv3d` (one node, as the 1-d and 2-d convolutions: strides,
/// padding, `'same'`, dilation, groups, unbatched), `max_pool3d`/`avg_pool3d` (2-d pools of
/// the depth taps' planes, reduced over the taps), the 3-d adaptive pools, `BatchNorm3d` and
/// `InstanceNorm3d`, eagerly and in a video block compiled under `dynamic=True` and then
/// automatic dynamic, print what PyTorch prints and recompile where it does
/// (`volumes.eager.txt`): a 3-d convolution derives its lengths without the 0/1
/// specialisation of the 2-d one, and an entry of another wrapper names its first failing
/// guard before its back end.
#[test]
fn volumes_compute_and_recompile_as_pytorch() {
    assert_prints_close_to_what_pytorch_printed("volumes");
    assert_logs_what_pytorch_logged("volumes", "recompiles", |line| line.starts_with('['));
}

/// A convolution whose weights are a view (a plane of a stored kernel, a transposed one)
/// computes what Python computes: the view is copied by a kernel of its own before the
/// convolution reads it as stored (it stopped with "convolution weights must be computed by
/// an earlier kernel" before).
#[test]
fn a_convolution_over_viewed_weights_computes_what_python_computes() {
    let source = r#"
import torch
import torch.nn as nn
import torch.nn.functional as F


class Planes(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.cos(torch.arange(4 * 3 * 2 * 3 * 3).float().view(4, 3, 2, 3, 3)))

    def forward(self, x):
        w = self.w
        return F.conv2d(x, w[:, :, 1], padding=1) + F.conv2d(x, w[:, :, 0].transpose(2, 3), padding=1)


planes = Planes()
x = torch.sin(torch.arange(2 * 3 * 6 * 5).float().view(2, 3, 6, 5))
for dynamic in (False, True):
    compiled = torch.compile(planes, dynamic=dynamic)
    assert (compiled(x) - planes(x)).abs().amax().item() < 1e-4
"#;
    let run = run_script_at("planes.py", source, "");
    assert!(run.error.is_none(), "{:?}", run.error);
}

/// The transformer family (`transformers.py`): `nn.TransformerEncoder` (copies of one
/// layer, the causal-mask detection), `TransformerDecoderLayer`/`TransformerDecoder`
/// (pre-norm, GELU, memory padding), `nn.Transformer`, unbatched attention, and a
/// tutorial's classifier compiled under `dynamic=True` and automatic dynamic, print what
/// PyTorch prints and recompile where it does (`transformers.eager.txt`).
#[test]
fn transformer_modules_compute_and_recompile_as_pytorch() {
    assert_prints_close_to_what_pytorch_printed("transformers");
    assert_logs_what_pytorch_logged("transformers", "recompiles", |line| line.starts_with('['));
}

/// `Tensor.unfold` (`windows.py`): windows along a dim as a new last dim, eagerly and as an
/// STFT's frames compiled for a symbolic length, print what PyTorch prints and recompile
/// where it does (`windows.eager.txt`).
#[test]
fn tensor_unfold_computes_and_recompiles_as_pytorch() {
    assert_prints_close_to_what_pytorch_printed("windows");
    assert_logs_what_pytorch_logged("windows", "recompiles", |line| line.starts_with('['));
}

/// einops' backend registry (`einops_registry.py`): a trace that applies einops to a
/// Parameter registers its type, and the entry guards the registry's length as Dynamo
/// guards the dict's keys, so the same input's next call recompiles with PyTorch's reason
/// (`len(G['__import_einops_dot__backends']._type2backend) != 1`) and the third hits.
#[test]
fn einops_registry_recompiles_as_pytorch() {
    assert_prints_what_pytorch_printed("einops_registry");
    assert_logs_what_pytorch_logged("einops_registry", "recompiles", |line| {
        line.starts_with('[')
    });
}

/// Complex tensors as LLaMA's rotary embedding uses them (`complex_rope.py`): `torch.polar`,
/// `view_as_complex`/`view_as_real`, complex products, `conj`, `exp` of `1j * t`, slices and
/// views of a complex table kept as a plain attribute, printed as PyTorch prints complex
/// numbers, eagerly and compiled under `dynamic=True` and automatic dynamic, recompiling
/// where PyTorch does (`complex_rope.eager.txt`): a later argument's guard is checked after
/// an earlier-named one's, by the length of the name as Dynamo installs them.
#[test]
fn complex_rotary_embeddings_compute_and_recompile_as_pytorch() {
    assert_prints_close_to_what_pytorch_printed("complex_rope");
    assert_logs_what_pytorch_logged("complex_rope", "recompiles", |line| line.starts_with('['));
}

/// Idioms a second scan of unseen files met (`scan_idioms.py`): `os.path` in a default
/// argument, `inspect.isfunction`, `torch.distributed.is_initialized()`, the legacy
/// `torch.Tensor(n, d)` constructor, `np.cumsum` and `np.long`, a constant tensor of repeats,
/// `arange` counting down from a size, einops' `pack`/`unpack`, `len(x)` kept symbolic and
/// `(n / 4).is_integer()`, eagerly and compiled under `dynamic=True`, print what PyTorch
/// prints and recompile where it does (`scan_idioms.eager.txt`: each new length, as PyTorch
/// specialises the ratio; its guard reads `(x.size()[1] / 4) == 2.0` where Tailor's reads
/// the length, so only the recompiles are compared).
#[test]
fn idioms_of_unseen_files_compute_and_recompile_as_pytorch() {
    assert_prints_close_to_what_pytorch_printed("scan_idioms");
    assert_logs_what_pytorch_logged("scan_idioms", "recompiles", |line| {
        line.contains("Recompiling function")
    });
}

/// `torch.fft` (`fourier.py`): `fft`/`ifft`/`rfft`/`irfft`, the 2-d and n-d forms, the
/// norms and the frequency tables, eagerly and in FNet's token mixing and mega's long
/// convolution compiled under `dynamic=True`, print what PyTorch prints and recompile where
/// it does (`fourier.eager.txt`: not at all, a symbolic length staying symbolic).
#[test]
fn fourier_transforms_compute_and_recompile_as_pytorch() {
    assert_prints_close_to_what_pytorch_printed("fourier");
    assert_logs_what_pytorch_logged("fourier", "recompiles", |line| line.starts_with('['));
}

/// `torch.linalg` (`linalg_qr.py`): `qr` in every mode as LAPACK computes it, signs and
/// negative zeros included (performer's orthogonal random features), and the norms, print
/// what PyTorch prints.
#[test]
fn linear_algebra_computes_what_pytorch_computes() {
    assert_prints_what_pytorch_printed("linalg_qr");
}

/// `F.scaled_dot_product_attention` is one node whose only shape guards are its inputs'
/// (`attention_node.py` against `attention_node.eager.txt`): the head size stays a symbol,
/// and nothing inside it is lifted or guarded; lowering decomposes it. (The stride guards
/// are left out of the comparison: PyTorch orders a product's factors by its hashed
/// symbol names, which Tailor's printing does not follow.)
#[test]
fn attention_is_one_node_with_pytorchs_guards() {
    assert_logs_what_pytorch_logged("attention_node", "recompiles,guards", |line| {
        line.contains("[__recompiles]") || (is_shape_guard(line) && !line.contains("stride()"))
    });
    let source = "import torch\nimport torch.nn.functional as F\n\nclass A(torch.nn.Module):\n    def forward(self, q, k, v):\n        return F.scaled_dot_product_attention(q, k, v, is_causal=True)\n";
    let options = tailor::Options {
        config: tailor::CompileConfig {
            dynamic: tailor::DynamicMode::True,
            ..tailor::CompileConfig::default()
        },
        ..tailor::Options::default()
    };
    let trace = tailor::explain(source, "q=2,3,8,16;k=2,3,8,16;v=2,3,8,16", &options)
        .expect("attention compiles")
        .to_string();
    let graph = trace
        .split("== Captured graph (FX) ==")
        .nth(1)
        .and_then(|rest| rest.split("\n== ").next())
        .expect("the graph stage");
    assert_eq!(
        graph.matches("= scaled_dot_product_attention(").count(),
        1,
        "{graph}"
    );
    assert_eq!(
        graph.lines().filter(|line| line.contains(" = ")).count(),
        4,
        "the inputs and the one node: {graph}"
    );
    assert!(!graph.contains("const"), "{graph}");
    assert!(
        trace.contains("scaled_dot_product_attention lowered as its ops"),
        "{trace}"
    );
}

/// Functions that branch on sizes, slice by them or return their input, over shape
/// sequences under every mode, recompile when PyTorch's do, each time failing the same
/// entries in the same order (`size_branches.py` against `size_branches.eager.txt`): duck
/// sizing never shares an automatic-dynamic symbol, and a trace that records no op skips
/// the code for good. The failing guards' words are left out: a few are PyTorch's in
/// another equivalent form (`(x.size()[0] // 2) == 1` is Tailor's `2 <= x.size()[0] <= 3`).
#[test]
fn size_branches_recompile_as_pytorchs_do() {
    const NAME: &str = "size_branches";
    let recorded = data(&format!("tests/data/pytorch/{NAME}.eager.txt"));
    let (theirs, printed) = recorded.split_once("---- stdout\n").expect("both parts");
    let path = format!("tests/data/scripts/{NAME}.py");
    let run = run_script_at(&path, &data(&path), "recompiles");
    assert!(run.error.is_none(), "{:?}", run.error);
    let failing = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|line| line.contains("[__recompiles]"))
            .map(|line| match line.find(": ") {
                Some(at) if line.contains("] [__recompiles]     - ") => line[..at].to_string(),
                _ => line.to_string(),
            })
            .collect()
    };
    assert_eq!(failing(&run.text(&[Stream::Log])), failing(theirs));
    assert_eq!(run.text(&[Stream::Stdout]), printed);
}

/// `mark_dynamic(min=, max=)` under ops that guard the marked size: Tailor raises
/// `ConstraintViolationError` where PyTorch does (a branch, a window, a view's divisibility,
/// a specialised length) and compiles where it compiles (`marked_ranges.py` against
/// `marked_ranges.txt`). One case is known to differ, and the test says so until it is
/// mended: PyTorch guards `x.size()[1] != 8` when `x[:, :8] + 1` asks whether the slice is
/// contiguous, a question Tailor's elementwise ops do not ask.
#[test]
fn marked_ranges_raise_where_pytorchs_do() {
    let run = run_script_at(
        "tests/data/scripts/marked_ranges.py",
        &data("tests/data/scripts/marked_ranges.py"),
        "",
    );
    assert!(run.error.is_none(), "{:?}", run.error);
    let ours = run.text(&[Stream::Stdout]);
    let theirs = data("tests/data/pytorch/marked_ranges.txt");
    for (ours, theirs) in ours.lines().zip(theirs.lines()) {
        if theirs.starts_with("slice-min8 ") {
            assert_eq!(
                (ours, theirs),
                ("slice-min8 compiles (2, 8)", "slice-min8 raises")
            );
        } else {
            assert_eq!(ours, theirs);
        }
    }
    assert_eq!(ours.lines().count(), theirs.lines().count());
}

/// An op refused inside a compiled call says where once: `line 4, col 12: …`, not the place
/// twice.
#[test]
fn an_error_inside_a_compiled_call_names_its_place_once() {
    let source = "import torch\nimport torch.nn.functional as F\ndef f(t):\n    return F.max_pool2d(t, 2, return_indices=True)[0]\n\ntorch.compile(f)(torch.randn(1, 2, 8, 8))\n";
    let error = run_script(source, "").error.expect("refused").to_string();
    assert_eq!(error.matches("line 4, col 12").count(), 1, "{error}");
    assert!(
        error.contains("return_indices=True is not supported"),
        "{error}"
    );
}

/// Python float arguments (`tests/data/scripts/float_args.py`: a scale, a branch on the
/// float, under every mode, and a float read by `.item()` across a graph break) log the
/// `[__recompiles]` lines PyTorch 2.15 logged (`tests/data/pytorch/float_args.eager.txt`):
/// a constant first (`f == 2.0`), then a symbolic float whose comparison is a guard
/// (`f > 1.0`), symbolic from the start under `dynamic=True`.
#[test]
fn float_arguments_log_pytorchs_recompile_reasons() {
    assert_logs_what_pytorch_logged("float_args", "recompiles", |line| {
        line.contains("[__recompiles]")
    });
}

/// Module attributes the trace read (`tests/data/scripts/training.py`: `self.training` in
/// the user's `forward`, BatchNorm's and Dropout's `training`, an int attribute that is read
/// and one that is not) log the `[__recompiles]` lines PyTorch 2.15 logged
/// (`tests/data/pytorch/training.eager.txt`): `eval()`, `train()` and a new value of a read
/// attribute recompile, an unread one does not, and each reason is the first failure in
/// the order Dynamo's guard tree has re-sorted itself into (what failed before first).
#[test]
fn module_attributes_log_pytorchs_recompile_reasons() {
    assert_logs_what_pytorch_logged("training", "recompiles", |line| {
        line.contains("[__recompiles]")
    });
}

/// Tensors carry PyTorch's dtypes (`tests/data/scripts/dtypes.py`): int64 from `arange` and
/// int lists, bool from comparisons, promotion with Python numbers, casts, masks with `~`,
/// `&` and `where`, how they print, `item()`'s Python type, PyTorch's errors for float ids,
/// float conditions and masks; compiled, an int64 output and a bool sum, and a new input
/// dtype recompiles with Dynamo's `dtype mismatch` reason
/// (`tests/data/pytorch/dtypes.eager.txt`).
#[test]
fn dtypes_promote_print_and_recompile_as_pytorch() {
    assert_logs_what_pytorch_logged("dtypes", "recompiles", |line| {
        line.contains("[__recompiles]")
    });
}

/// Training mode computes what PyTorch computes in training: BatchNorm normalises with
/// the batch's statistics (per channel mean 0, variance 1 before the affine), Dropout zeroes
/// about `p` of the elements and scales the rest by `1/(1-p)`, eval mode uses the running
/// statistics; a training BatchNorm over one value per channel raises PyTorch's ValueError.
#[test]
fn training_mode_normalises_with_batch_statistics_and_drops_out() {
    let source = r#"
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.bn(x))

model = Net()
compiled = torch.compile(model, dynamic=True)
x = torch.randn(4, 3, 5, 5) * 3 + 2
dropped = compiled(x)
kept = (dropped != 0).float()
assert 0.4 < kept.mean().item() < 0.6, kept.mean().item()
model.drop.eval()
y = compiled(x)
assert (y - model(x)).abs().amax().item() < 1e-4
assert ((dropped - 2 * y) * kept).abs().amax().item() < 1e-4
assert y.mean(dim=(0, 2, 3)).abs().amax().item() < 1e-4
assert ((y * y).mean(dim=(0, 2, 3)) - 1).abs().amax().item() < 1e-3
model.eval()
y = compiled(x)
assert (y - x / (1 + 1e-5) ** 0.5).abs().amax().item() < 1e-4
one = nn.BatchNorm1d(8)
torch.compile(one)(torch.randn(1, 8))
"#;
    let run = run_script_at("train.py", source, "");
    let error = run.error.expect("one value per channel in training raises");
    assert!(
        error.to_string().contains(
            "ValueError: Expected more than 1 value per channel when training, got input size torch.Size([1, 8])"
        ),
        "{error}"
    );
    assert_eq!(run.calls.len(), 4, "the failing call is the fourth");
}

/// `copy.deepcopy` clones a layer as PyTorch does (the Annotated Transformer's `clones`):
/// distinct parameters that start with the original's values, under their own
/// `state_dict` names, each captured as its own parameter.
#[test]
fn deepcopy_clones_a_layer_with_its_values() {
    let source = r#"
import copy
import torch
import torch.nn as nn

def clones(module, n):
    return nn.ModuleList([copy.deepcopy(module) for _ in range(n)])

class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = clones(nn.Linear(4, 4), 3)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x).relu()
        return x

model = Stack()
a, b = model.layers[0].weight, model.layers[2].weight
assert a is not b
assert (a - b).abs().amax().item() == 0
assert list(model.state_dict()) == [f"layers.{i}.{p}" for i in range(3) for p in ("weight", "bias")]
x = torch.randn(2, 4)
assert (torch.compile(model)(x) - model(x)).abs().amax().item() < 1e-6
"#;
    let run = run_script_at("clones.py", source, "");
    assert!(run.error.is_none(), "{:?}", run.error);
    let mut cache = tailor::load(source, Some("Stack")).expect("loads");
    let call = tailor::spec::parse_shapes("x=2,4", &["x".to_string()]).unwrap();
    let config = tailor::CompileConfig::default();
    cache.call(0, &config, &call, &tailor::CallMarks::default(), &|| 0.0);
    let graph = cache.entries()[0].graph.to_string();
    for i in 0..3 {
        assert!(
            graph.contains(&format!("param layers.{i}.weight")),
            "{graph}"
        );
    }
}

/// What a compiled call with a float computes is what Python computes, for constant and
/// symbolic floats, and for `.item()`'s float across a graph break with the same shapes
/// and other values (a baked constant there would be stale).
#[test]
fn float_arguments_and_item_floats_compute_what_python_computes() {
    let source = r#"
import torch

def scale(x, f):
    if f > 1.0:
        return x * f + 1
    return x - f

def mean_scaled(x):
    s = x.sum().item()
    return x * s

for mode in [None, True, False]:
    torch._dynamo.reset()
    g = torch.compile(scale, dynamic=mode)
    h = torch.compile(mean_scaled, dynamic=mode)
    for v in [2.0, 3.5, 0.5, 0.25, 3.5]:
        x = torch.randn(3, 2)
        assert (g(x, v) - scale(x, v)).abs().amax().item() < 1e-5
        assert (h(x) - mean_scaled(x)).abs().amax().item() < 1e-4
"#;
    let run = run_script_at("floats.py", source, "");
    assert!(run.error.is_none(), "{:?}", run.error);
    assert_eq!(run.calls.len(), 30);
}

/// A call of a function with graph breaks past the recompile limit, which PyTorch runs
/// eagerly through its breaks, is refused with a message at the break, never run as its
/// first graph alone.
#[test]
fn a_breaking_function_past_the_recompile_limit_is_refused_by_name() {
    let source = r#"
import torch

def f(x):
    y = x * 2
    print("rows", y.shape[0])
    return y + 1

g = torch.compile(f, dynamic=False, recompile_limit=1)
g(torch.ones(2))
g(torch.ones(3))
"#;
    let run = run_script_at("limit.py", source, "");
    let error = run.error.expect("the second call is refused").to_string();
    assert!(
        error.contains("line 6, col 5") && error.contains("past the recompile limit"),
        "{error}"
    );
}

/// Tensors a compiled function reads without receiving them
/// (`tests/data/scripts/lifted.py`: module-level tensors, a module's plain tensor attribute
/// made by a factory or computed in `__init__`,
/// a global's size read in a reshape, each under `dynamic=None` and `dynamic=True`) are
/// lifted as Dynamo lifts them (`tests/data/pytorch/lifted.eager.txt`): a `TENSOR_MATCH` and
/// a marking guard each, a place in `NO_TENSOR_ALIASING`, and under `dynamic=True` symbols
/// duck-sized with the arguments' (`G['W'].size()[0] == L['x'].size()[1]`), with their
/// stride and range guards. Every compile's guards are PyTorch's (in Dynamo's tree they
/// sit in another order), and so are the recompiles.
#[test]
fn lifted_tensors_are_guarded_as_pytorch_guards_them() {
    let recorded = data("tests/data/pytorch/lifted.eager.txt");
    let (theirs, printed) = recorded
        .split_once("---- stdout\n")
        .expect("the record has both parts");
    let path = "tests/data/scripts/lifted.py";
    let run = run_script_at(path, &data(path), "recompiles,guards");
    assert!(run.error.is_none(), "{:?}", run.error);
    let ours = run.text(&[Stream::Log]);
    let recompiles = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|line| line.contains("[__recompiles]"))
            .filter_map(without_comment)
            .collect()
    };
    assert_eq!(recompiles(&ours), recompiles(theirs));
    // Each compile's guards as a sorted block, in compile order.
    let blocks = |text: &str, guard: fn(&str) -> Option<String>| -> Vec<Vec<String>> {
        let mut blocks: Vec<Vec<String>> = Vec::new();
        for line in text.lines() {
            let Some((_, rest)) = line.split_once(" [__guards] ") else {
                continue;
            };
            if rest.starts_with("GUARDS:") {
                blocks.push(Vec::new());
            }
            if let (Some(block), Some(guard)) = (blocks.last_mut(), guard(rest)) {
                block.push(guard);
            }
        }
        for block in &mut blocks {
            block.sort();
        }
        blocks
    };
    let pytorch_guard = |rest: &str| -> Option<String> {
        let rest = rest.trim_start_matches(['|', ' ', '+', '-']);
        let rest = without_comment(rest)?.trim_end().to_string();
        let kept = rest.starts_with("TENSOR_MATCH")
            || rest.starts_with("NO_TENSOR_ALIASING:")
            || rest.contains("'_dynamo_dynamic_indices'")
            || (rest.starts_with("LAMBDA_GUARD: ") && !rest.contains("top_saved_tensors_hooks"));
        kept.then(|| {
            let rest = rest.trim_start_matches("LAMBDA_GUARD: ");
            // Tailor's TENSOR_MATCH names what it models: dtype, sizes and strides.
            let rest = match (rest.find("DispatchKeySet("), rest.find("torch.")) {
                (Some(start), Some(end)) => format!("{}{}", &rest[..start], &rest[end..]),
                _ => rest.to_string(),
            };
            rest.replace("device=None, requires_grad=False, ", "")
        })
    };
    let tailor_guard = |rest: &str| (!rest.starts_with("GUARDS:")).then(|| rest.to_string());
    let (ours, theirs) = (blocks(&ours, tailor_guard), blocks(theirs, pytorch_guard));
    assert_eq!(ours.len(), 12, "twelve compiles");
    assert_eq!(ours, theirs);
    assert_eq!(
        without_numbers(&run.text(&[Stream::Stdout])),
        without_numbers(printed)
    );
}

/// `.tolist()` inside forward is a graph break with PyTorch's reason for the tensor's dtype
/// (`tests/data/scripts/tolist.py`): an int tensor's list breaks as a data-dependent
/// operator, a float tensor's as `tolist()` on a non-integer tensor, and the resume
/// function computes with the list, values PyTorch's. Two differences from the record
/// (`tolist.eager.txt`) are Tailor's, and not compared: forward's frame recompiles on an
/// argument its graph before the break never read (Dynamo guards only what it reads), and
/// a list of another length makes a resume function of its own rather than failing the
/// `len(___stack0) == 2` guard.
#[test]
fn tolist_in_forward_breaks_the_graph_as_pytorch_does() {
    assert_prints_close_to_what_pytorch_printed("tolist");
    let headline = |line: &str| {
        [
            "Data dependent operator",
            "Tensor.tolist() with non-integer tensor",
        ]
        .into_iter()
        .find(|headline| line.ends_with(&format!("[__graph_breaks] {headline}")))
    };
    let distinct = |text: &str| {
        let mut seen: Vec<&str> = Vec::new();
        for found in text.lines().filter_map(headline) {
            if seen.last() != Some(&found) {
                seen.push(found);
            }
        }
        seen
    };
    let recorded = data("tests/data/pytorch/tolist.eager.txt");
    let (theirs, _) = recorded.split_once("---- stdout\n").expect("both parts");
    let path = "tests/data/scripts/tolist.py";
    let run = run_script_at(path, &data(path), "recompiles,graph_breaks");
    assert!(run.error.is_none(), "{:?}", run.error);
    let ours = run.text(&[Stream::Log]);
    assert_eq!(distinct(&ours), distinct(theirs));
    assert_eq!(
        distinct(theirs),
        [
            "Data dependent operator",
            "Tensor.tolist() with non-integer tensor"
        ]
    );
}

/// A graph break inside a submodule's forward after an einops call in it
/// (`tests/data/scripts/einops_breaks.py`, ponder-transformer's halting check): the import
/// einops makes inside `rearrange` runs Python's import machinery, which is library code,
/// so forward's graph ends at the submodule's call and its resume function recompiles where
/// PyTorch's does (PyTorch's frames 0 and 3; its frames 1 and 2, the submodule's `forward`
/// compiled on its own, Tailor runs eagerly), with PyTorch's values.
#[test]
fn a_break_after_an_einops_call_in_a_submodule_ends_forwards_graph_at_the_call() {
    assert_prints_close_to_what_pytorch_printed("einops_breaks");
    assert_forwards_frames_log_what_pytorch_logged("einops_breaks", &[("0", "0"), ("3", "1")]);
}

/// Powers of integer tensors are integers (`tests/data/scripts/int_pow.py`,
/// token-shift-gpt's `(2 ** torch.arange(n)).tolist()`), negative bases to whole powers
/// keep their sign (`(-1) ** k`), 0 ** 0 is 1, and an integer tensor to a negative power is
/// PyTorch's RuntimeError: values and dtypes as PyTorch printed them, eagerly and compiled.
#[test]
fn powers_of_integers_are_integers_as_in_pytorch() {
    assert_prints_close_to_what_pytorch_printed("int_pow");
}

/// Keyword arguments to a compiled call are bound to the function's parameters by name
/// (`tests/data/scripts/keyword_calls.py`: `compiled(x, y=...)`, `compiled(y=..., x=...)`),
/// and a call Python would refuse is its TypeError in its words.
#[test]
fn keyword_arguments_of_a_compiled_call_bind_as_in_python() {
    assert_prints_what_pytorch_printed("keyword_calls");
}
