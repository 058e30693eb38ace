//! Fusion decisions: which graph nodes are computed together in one kernel.
//!
//! In: a `Graph` and a [`FusionPolicy`]. Out: `Fusion` — a kind per node (leaf, view, member
//! of a group) and the groups in launch order, each a root op followed by the elementwise
//! chain fused into it.
//! Invariants: only a group's last member (its tail) is ever read outside the group, so
//! only tails are stored; an elementwise node joins a group only when it has the group's
//! output shape, its producer has no other user, and every other operand it reads comes
//! from an earlier group, and a group holds at most `MAX_FUSED_OPS` ops; a BatchNorm folds
//! into a convolution only when all the values
//! involved are parameters known at compile time. Under `FusionPolicy::PerOp` nothing joins
//! or folds: every group is one op. Views launch nothing under either policy, except a copy
//! where one is returned or read as a convolution's weights.

use crate::graph::{Graph, NodeId, Op};

/// How elementwise ops are grouped into kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FusionPolicy {
    /// What `torch.compile` does: an elementwise op joins the kernel that produces its input
    /// when the module invariants allow, and a BatchNorm after a convolution folds into the
    /// convolution's weights.
    Fused,
    /// What eager PyTorch does: every compute or elementwise op is its own kernel, one
    /// library call per op, and no BatchNorm is folded.
    PerOp,
}

/// How a node is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// An input, parameter or constant: a buffer the caller or the compiler fills.
    Leaf,
    /// A view (reshape, permute, slice, select, pad, linear upsampling): index arithmetic
    /// on its input, read where it is used.
    View,
    /// Computed by group `group`.
    Member {
        /// The group's position.
        group: usize,
    },
    /// The graph's `Output` marker.
    Output,
}

/// Nodes computed by one kernel (or, for `cat`, one kernel per joined tensor).
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    /// The root op first, then the fused elementwise chain; the last one is stored.
    pub members: Vec<NodeId>,
    /// A BatchNorm folded into the root convolution's weights.
    pub folded: Option<NodeId>,
}

impl Group {
    /// The node that starts the group.
    pub fn root(&self) -> NodeId {
        self.members[0]
    }

    /// The node whose value the group stores.
    pub fn tail(&self) -> NodeId {
        *self.members.last().expect("a group has a root")
    }
}

/// The fusion decisions for a whole graph.
#[derive(Clone, Debug, PartialEq)]
pub struct Fusion {
    /// Per node.
    pub kinds: Vec<NodeKind>,
    /// In launch order.
    pub groups: Vec<Group>,
}

impl Fusion {
    /// The group that must run before `node` can be read (`None` for leaves).
    fn producer(&self, graph: &Graph, node: NodeId) -> Option<usize> {
        match self.kinds[node.index()] {
            NodeKind::Member { group } => Some(group),
            NodeKind::View => self.producer(graph, graph.node(node).inputs[0]),
            NodeKind::Leaf | NodeKind::Output => None,
        }
    }

    /// The open group whose tail is `node`, if `node` has no other user.
    fn open_tail(&self, node: NodeId, users: &[usize]) -> Option<usize> {
        match self.kinds[node.index()] {
            NodeKind::Member { group }
                if self.groups[group].tail() == node && users[node.index()] == 1 =>
            {
                Some(group)
            }
            _ => None,
        }
    }
}

/// The most ops one fused kernel computes, Inductor's `max_fusion_size`: a longer chain
/// (a loop that adds a thousand times) starts a new kernel, so a kernel's expression, which
/// code generation and the CPU backend walk recursively, stays shallow.
pub const MAX_FUSED_OPS: usize = 64;

/// Whether values of `node` are known at compile time.
fn is_known(graph: &Graph, node: NodeId) -> bool {
    matches!(graph.node(node).op, Op::Param { .. } | Op::Constant { .. })
}

/// Groups the nodes of `graph` under `policy` (see the module invariants).
pub fn fuse(graph: &Graph, policy: FusionPolicy) -> Fusion {
    let fused = policy == FusionPolicy::Fused;
    let mut users = vec![0usize; graph.nodes.len()];
    for node in &graph.nodes {
        for input in &node.inputs {
            users[input.index()] += 1;
        }
    }
    let mut fusion = Fusion {
        kinds: Vec::with_capacity(graph.nodes.len()),
        groups: Vec::new(),
    };
    for node in &graph.nodes {
        let kind = match &node.op {
            Op::Input { .. } | Op::Param { .. } | Op::Constant { .. } => NodeKind::Leaf,
            op if op.is_view() => NodeKind::View,
            Op::Output => NodeKind::Output,
            Op::BatchNorm { .. } if fused && foldable(graph, &fusion, node.id, &users) => {
                let group = fusion
                    .open_tail(node.inputs[0], &users)
                    .expect("foldable checked the tail");
                fusion.groups[group].members.push(node.id);
                fusion.groups[group].folded = Some(node.id);
                NodeKind::Member { group }
            }
            op if op.is_elementwise() || matches!(op, Op::BatchNorm { .. }) => {
                let joined = fused
                    .then(|| joinable_group(graph, &fusion, node.id, &users))
                    .flatten();
                match joined {
                    Some(group) => {
                        fusion.groups[group].members.push(node.id);
                        NodeKind::Member { group }
                    }
                    None => start_group(&mut fusion, node.id),
                }
            }
            Op::Conv { .. } | Op::ConvTranspose { .. } => {
                copy_viewed_weights(graph, &mut fusion, node.inputs[1]);
                start_group(&mut fusion, node.id)
            }
            _ => start_group(&mut fusion, node.id),
        };
        fusion.kinds.push(kind);
    }
    // A returned input, parameter or view still needs its own contiguous copy.
    for &output in graph.outputs() {
        if matches!(
            fusion.kinds[output.index()],
            NodeKind::Leaf | NodeKind::View
        ) && !fusion.groups.iter().any(|g| g.root() == output)
        {
            fusion.groups.push(Group {
                members: vec![output],
                folded: None,
            });
        }
    }
    fusion
}

/// A convolution reads its weights as stored, element after element: weights that are a
/// view (a 3-d convolution's plane `w[:, :, k]`) get a copy of their own, launched before
/// it. A reshape of a stored tensor keeps its elements in order and is read in place.
fn copy_viewed_weights(graph: &Graph, fusion: &mut Fusion, weight: NodeId) {
    let node = graph.node(weight);
    let in_place = matches!(node.op, Op::Reshape)
        && !matches!(fusion.kinds[node.inputs[0].index()], NodeKind::View);
    if matches!(fusion.kinds[weight.index()], NodeKind::View)
        && !in_place
        && !fusion.groups.iter().any(|g| g.root() == weight)
    {
        fusion.groups.push(Group {
            members: vec![weight],
            folded: None,
        });
    }
}

fn start_group(fusion: &mut Fusion, node: NodeId) -> NodeKind {
    fusion.groups.push(Group {
        members: vec![node],
        folded: None,
    });
    NodeKind::Member {
        group: fusion.groups.len() - 1,
    }
}

/// The latest open group an elementwise node can extend, if any.
fn joinable_group(graph: &Graph, fusion: &Fusion, node: NodeId, users: &[usize]) -> Option<usize> {
    let this = graph.node(node);
    let group = this
        .inputs
        .iter()
        .filter_map(|&input| fusion.open_tail(input, users))
        .filter(|&group| *graph.shape(fusion.groups[group].tail()) == this.shape)
        .filter(|&group| fusion.groups[group].members.len() < MAX_FUSED_OPS)
        .max()?;
    let tail = fusion.groups[group].tail();
    let others_ready = this
        .inputs
        .iter()
        .filter(|&&input| input != tail)
        .all(|&input| fusion.producer(graph, input).is_none_or(|g| g < group));
    others_ready.then_some(group)
}

/// Whether a BatchNorm can fold into the convolution it normalises.
fn foldable(graph: &Graph, fusion: &Fusion, node: NodeId, users: &[usize]) -> bool {
    let this = graph.node(node);
    let conv = this.inputs[0];
    let conv_node = graph.node(conv);
    matches!(conv_node.op, Op::Conv { .. })
        && fusion.open_tail(conv, users).is_some()
        && fusion.groups.iter().any(|g| g.members == [conv])
        && this.inputs[1..].iter().all(|&p| is_known(graph, p))
        && conv_node.inputs[1..].iter().all(|&p| is_known(graph, p))
}
