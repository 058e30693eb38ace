//! The memory plan: which physical buffer holds each stored tensor.
//!
//! In: the logical buffers and kernels built by lowering (one logical buffer per stored
//! tensor). Out: the final `Schedule`, whose temporaries share buffers when their lifetimes
//! (first writer to last reader, in launch order) do not overlap; a shared buffer is as
//! long as its largest tenant (a symbolic `Max`). Inputs, parameters and outputs keep their
//! own buffers. Invariant (checked by `verify`): no kernel reads the buffer it writes, every
//! read buffer was filled before, and tenants of one buffer are never live at once.

use super::kernel::{Buffer, BufferId, Kernel, Placement, Role, Schedule};
use crate::graph::Graph;
use crate::symbolic::{Expr, Sym, ValueRange};
use std::collections::BTreeMap;

/// Lifetime of a logical buffer in kernel positions.
#[derive(Clone, Copy, Debug)]
struct Life {
    first: usize,
    last: Option<usize>,
}

#[expect(clippy::too_many_arguments, reason = "the parts of a Schedule, named")]
pub fn plan(
    logical: Vec<Buffer>,
    mut kernels: Vec<Kernel>,
    stored: &[Option<crate::lower::BufferId>],
    graph: &Graph,
    inputs: Vec<BufferId>,
    outputs: Vec<BufferId>,
    ranges: BTreeMap<Sym, ValueRange>,
    first_index_sym: u32,
    notes: Vec<String>,
) -> Schedule {
    let mut lives: Vec<Option<Life>> = vec![None; logical.len()];
    for kernel in &kernels {
        let life = lives[kernel.output.index()].get_or_insert(Life {
            first: kernel.id,
            last: None,
        });
        life.first = life.first.min(kernel.id);
        for read in kernel.reads() {
            if let Some(life) = &mut lives[read.index()] {
                life.last = Some(life.last.map_or(kernel.id, |l| l.max(kernel.id)));
            }
        }
    }
    let range = |sym: Sym| {
        ranges
            .get(&sym)
            .copied()
            .unwrap_or_else(ValueRange::unbounded)
    };

    // Physical order: inputs, parameters, outputs, then the shared temporaries.
    let mut remap: Vec<Option<BufferId>> = vec![None; logical.len()];
    let mut buffers: Vec<Buffer> = Vec::new();
    let rank = |role: &Role| match role {
        Role::Input(n) => (0, *n),
        Role::Param(_) => (1, 0),
        Role::Output(n) => (2, *n),
        Role::Temp => (3, 0),
    };
    let mut order: Vec<usize> = (0..logical.len()).collect();
    order.sort_by_key(|&i| (rank(&logical[i].role), i));
    for &i in order.iter().filter(|&&i| logical[i].role != Role::Temp) {
        remap[i] = Some(BufferId(buffers.len() as u32));
        buffers.push(logical[i].clone());
    }
    let mut temps: Vec<usize> = order
        .iter()
        .copied()
        .filter(|&i| logical[i].role == Role::Temp)
        .collect();
    temps.sort_by_key(|&i| lives[i].map_or(usize::MAX, |l| l.first));
    // (physical id, busy until kernel) per shared buffer.
    let mut slots: Vec<(BufferId, Option<usize>)> = Vec::new();
    for i in temps {
        let life = lives[i].expect("every temporary is written by a kernel");
        let len = &logical[i].len_elems;
        let free = slots
            .iter_mut()
            .find(|(_, busy)| busy.is_none_or(|b| b < life.first));
        let id = match free {
            Some((id, busy)) => {
                *busy = Some(life.last.unwrap_or(life.first));
                let buffer = &mut buffers[id.index()];
                buffer.len_elems = Expr::max(&buffer.len_elems, len).simplify_in(&range);
                *id
            }
            None => {
                let id = BufferId(buffers.len() as u32);
                buffers.push(Buffer {
                    name: format!("t{}", slots.len()),
                    role: Role::Temp,
                    len_elems: len.clone(),
                });
                slots.push((id, Some(life.last.unwrap_or(life.first))));
                id
            }
        };
        remap[i] = Some(id);
    }

    let map = |id: BufferId| remap[id.index()].expect("every buffer is placed");
    for kernel in &mut kernels {
        kernel.output = map(kernel.output);
        kernel
            .body
            .visit_values_mut(&mut |value| value.map_buffers(&map));
    }
    let placements = graph
        .nodes
        .iter()
        .filter_map(|node| {
            let id = stored[node.id.index()]?;
            let life = lives[id.index()]?;
            Some(Placement {
                node: node.id,
                node_name: node.name.clone(),
                buffer: map(id),
                len_elems: logical[id.index()].len_elems.clone(),
                first_kernel: life.first,
                last_kernel: life.last,
            })
        })
        .collect();
    Schedule {
        buffers,
        kernels,
        inputs: inputs.into_iter().map(map).collect(),
        input_shapes: graph
            .inputs
            .iter()
            .map(|&i| graph.shape(i).clone())
            .collect(),
        int_inputs: graph.int_inputs.iter().map(|(_, e)| e.clone()).collect(),
        lifted: graph
            .lifted
            .iter()
            .map(|lifted| (graph.shape(lifted.node).clone(), lifted.sizes.clone()))
            .collect(),
        outputs: outputs.into_iter().map(map).collect(),
        output_shapes: graph
            .outputs()
            .iter()
            .map(|&o| graph.shape(o).clone())
            .collect(),
        placements,
        ranges,
        first_index_sym,
        notes,
    }
}

/// Checks the schedule invariants (module doc); `Err` names the first violation.
pub fn verify(schedule: &Schedule) -> Result<(), String> {
    let mut written = vec![false; schedule.buffers.len()];
    for kernel in &schedule.kernels {
        for read in kernel.reads() {
            let buffer = schedule.buffer(read);
            if read == kernel.output {
                return Err(format!(
                    "{} reads the buffer it writes ({})",
                    kernel.name, buffer.name
                ));
            }
            let filled =
                matches!(buffer.role, Role::Input(_) | Role::Param(_)) || written[read.index()];
            if !filled {
                return Err(format!(
                    "{} reads {} before any kernel writes it",
                    kernel.name, buffer.name
                ));
            }
        }
        written[kernel.output.index()] = true;
    }
    for (i, a) in schedule.placements.iter().enumerate() {
        for b in &schedule.placements[i + 1..] {
            let end = |p: &Placement| p.last_kernel.unwrap_or(p.first_kernel);
            let overlap = a.first_kernel <= end(b) && b.first_kernel <= end(a);
            if a.buffer == b.buffer && overlap {
                return Err(format!(
                    "{} and {} share {} while both are live",
                    a.node_name,
                    b.node_name,
                    schedule.buffer(a.buffer).name
                ));
            }
        }
    }
    Ok(())
}
