//! Unit tests of lowering: index arithmetic, fusion decisions and the memory plan, each
//! checked on the smallest program that shows it.

use super::print::rename_syms;
use super::*;
use crate::cache::{CompileConfig, DynamicMode};
use crate::symbolic::Bindings;

/// Lowers `forward` (the body of a module with `init`) compiled with `dynamic=True` at `x`.
fn schedule(init: &str, forward: &str, x: &str) -> Schedule {
    let source = format!(
        "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        {init}\n    def forward(self, x):\n        {forward}\n"
    );
    let mut cache = crate::load(&source, None).expect("loads");
    let call = crate::spec::parse_shapes(x, &cache.entry_point().inputs).expect("shapes");
    let config = CompileConfig {
        dynamic: DynamicMode::True,
        ..CompileConfig::default()
    };
    let id = cache
        .call(0, &config, &call, &Default::default(), &|| 0.0)
        .entry
        .expect("compiles");
    let entry = cache.entry(id).expect("entry");
    lower(&entry.graph, &|sym| entry.env.range(sym)).expect("lowers")
}

fn kernel_names(schedule: &Schedule) -> Vec<&str> {
    schedule.kernels.iter().map(|k| k.name.as_str()).collect()
}

#[test]
fn unravel_inverts_ravel() {
    let shape = [Expr::int(3), Expr::int(4), Expr::int(5)];
    let flat = Expr::sym(Sym(0));
    let back = ravel(&unravel(&flat, &shape), &shape);
    for value in 0..60 {
        let bindings: Bindings = [(Sym(0), value)].into_iter().collect();
        assert_eq!(back.eval(&bindings), Some(value));
    }
}

#[test]
fn rename_touches_whole_symbol_tokens_only() {
    let renamed = rename_syms("s10 + s1*xs1 + s1", &|n| {
        (n == 1).then(|| "row".to_string())
    });
    assert_eq!(renamed, "s10 + row*xs1 + row");
}

#[test]
fn elementwise_of_two_producers_joins_the_later_one() {
    let schedule = schedule(
        "self.a = nn.Linear(4, 4)\n        self.b = nn.Linear(4, 4)",
        "return self.a(x) + self.b(x)",
        "x=3,4",
    );
    assert_eq!(kernel_names(&schedule), ["k0_linear", "k1_linear_1_add"]);
}

#[test]
fn a_value_read_twice_is_stored_not_fused() {
    let schedule = schedule(
        "self.fc = nn.Linear(4, 4)",
        "y = self.fc(x)\n        return torch.relu(y), y",
        "x=3,4",
    );
    assert_eq!(kernel_names(&schedule), ["k0_linear", "k1_relu"]);
}

#[test]
fn memory_plan_reuses_dead_temporaries() {
    let schedule = schedule(
        "self.fc = nn.Linear(4, 4)",
        "return self.fc(self.fc(self.fc(self.fc(x))))",
        "x=3,4",
    );
    let temps: Vec<&str> = schedule
        .placements
        .iter()
        .map(|p| schedule.buffer(p.buffer).name.as_str())
        .collect();
    assert_eq!(temps, ["t0", "t1", "t0", "out0"]);
}

#[test]
fn views_cost_no_kernel() {
    let schedule = schedule(
        "self.fc = nn.Linear(6, 2)",
        "return self.fc(x.transpose(0, 1)[:, 1:])",
        "x=7,5",
    );
    assert_eq!(kernel_names(&schedule), ["k0_linear"]);
}
