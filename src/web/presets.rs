//! The page's example models: the files in `models/`, embedded once, with the input shapes
//! and call sequences the page starts from.
//!
//! Input: nothing (compile-time data). Output: `PRESETS`, serialised to JS by `Tailor.presets()`.
//! Invariant: every preset's `shapes` compiles under every mode (the e2e tests pick each one),
//! and `vary` names dims that exist in `shapes`.

use serde::Serialize;

/// One example model and how the page exercises it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Preset {
    /// Stable id, used in URLs and by tests (`simplenet`, `bert_block`, …).
    pub id: &'static str,
    /// The file under `models/` it comes from.
    pub file: &'static str,
    /// The model's source text.
    pub source: &'static str,
    /// The first call's input shapes (`x=8,64`).
    pub shapes: &'static str,
    /// The dims that change between calls: (input, dim). All take the same value.
    pub vary: &'static [(&'static str, usize)],
    /// Values of the varying dims for the cache lab, from the material's scenarios.
    pub sequence: &'static [i64],
    /// Slider range for the varying dims: (min, max, step).
    pub slider: (i64, i64, i64),
}

/// The presets in the order the page lists them; the first is the default.
pub(super) const PRESETS: &[Preset] = &[
    Preset {
        id: "simplenet",
        file: "models/simplenet.py",
        source: crate::session::SIMPLENET_SOURCE,
        shapes: "x=8,64",
        vary: &[("x", 0)],
        // The material's demo: `sizes = [8, 16, 32, 16, 8, 64, 16, 8]`.
        sequence: &[8, 16, 32, 16, 8, 64, 16, 8],
        slider: (1, 64, 1),
    },
    Preset {
        id: "bert_block",
        file: "models/bert_block.py",
        source: include_str!("../../models/bert_block.py"),
        shapes: "x=2,128,64",
        vary: &[("x", 1)],
        // NLP token lengths between 8 and 512 (the material's sentence-embedding case).
        sequence: &[8, 16, 32, 64, 128, 256, 512, 77, 300],
        slider: (2, 512, 1),
    },
    Preset {
        id: "yolo_stack",
        file: "models/yolo_stack.py",
        source: include_str!("../../models/yolo_stack.py"),
        shapes: "image=1,3,320,320",
        vary: &[("image", 2), ("image", 3)],
        // The material's CV resolutions.
        sequence: &[320, 416, 640, 320, 416],
        slider: (32, 640, 32),
    },
    Preset {
        id: "conv1d",
        file: "models/conv1d.py",
        source: include_str!("../../models/conv1d.py"),
        shapes: "x=1,4,50",
        vary: &[("x", 2)],
        sequence: &[50, 61, 8, 100, 3],
        slider: (3, 256, 1),
    },
    Preset {
        id: "tagger",
        file: "models/tagger.py",
        source: include_str!("../../models/tagger.py"),
        // Token ids are int64: the dtype is part of TENSOR_MATCH.
        shapes: "ids=2,12:int64",
        vary: &[("ids", 1)],
        // Sentence lengths up to the position table's 64.
        sequence: &[12, 20, 7, 33, 12, 64],
        slider: (1, 64, 1),
    },
    Preset {
        id: "add_one",
        file: "models/add_one.py",
        source: include_str!("../../models/add_one.py"),
        shapes: "x=3",
        vary: &[("x", 0)],
        // pytorch-semantics.md §9 scenario 5: 0 and 1 are specialised even when dynamic.
        sequence: &[3, 4, 5, 2, 1, 0],
        slider: (0, 64, 1),
    },
    Preset {
        id: "break_net",
        file: "models/break_net.py",
        source: include_str!("../../models/break_net.py"),
        shapes: "x=8,64",
        vary: &[("x", 0)],
        // The demo's first batches: the second recompiles forward and both resume
        // functions, each dynamic then (automatic dynamic), so the rest hit in all three.
        sequence: &[8, 16, 32, 16, 8],
        slider: (1, 64, 1),
    },
];
