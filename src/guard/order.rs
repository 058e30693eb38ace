//! The order in which an entry's guards are checked, as Dynamo's guard tree keeps it.
//!
//! Input: the arguments' guards and the module attributes a trace read. Output: the tree's
//! children in check order — at the root one accessor per argument and one for `L['self']`;
//! under `L['self']` one node per attribute and one per `_modules` level and submodule —
//! and, after a failed check, the same tree re-sorted as PyTorch re-sorts it.
//! Invariant: siblings start in the order PyTorch installs guards (by the length of their
//! source, then the source: `L['self'].scale` before `L['self']._modules` before
//! `L['self'].training`); a failed check adds one failure to every node on the failing
//! path, and a node whose failing child was not its first stably re-sorts its children by
//! failures, most first (the C++ `GuardManager`'s fail-fast order, which decides which
//! failure a recompile reason names).

use super::AttributePath;

/// One node under `L['self']`: an attribute (a leaf with its guard's index), a module's
/// `_modules` dict, or a submodule.
#[derive(Clone, Debug)]
pub(super) struct AttributeNode {
    /// PyTorch's source of the node, whose length and text order it at creation.
    source: String,
    /// For a leaf, the index of its guard in `GuardSet::attributes`.
    guard: Option<usize>,
    children: Vec<AttributeNode>,
    fails: u32,
}

impl AttributeNode {
    /// The tree of `paths` (`paths[i]` is guard `i`), rooted at `L['self']`.
    pub(super) fn tree(paths: &[&AttributePath]) -> AttributeNode {
        let mut root = AttributeNode::new("L['self']".to_string(), None);
        for (index, path) in paths.iter().enumerate() {
            let mut node = &mut root;
            for module in &path.modules {
                let modules = format!("{}._modules", node.source);
                node = node.child(modules, None);
                let submodule = format!("{}['{module}']", node.source);
                node = node.child(submodule, None);
            }
            node.child(path.source(), Some(index));
        }
        root
    }

    fn new(source: String, guard: Option<usize>) -> AttributeNode {
        AttributeNode {
            source,
            guard,
            children: Vec::new(),
            fails: 0,
        }
    }

    /// The child with `source`, made (in creation order) if there is none yet.
    fn child(&mut self, source: String, guard: Option<usize>) -> &mut AttributeNode {
        let position = match self.children.iter().position(|c| c.source == source) {
            Some(position) => position,
            None => {
                let at = self
                    .children
                    .iter()
                    .position(|c| install_key(&c.source) > install_key(&source))
                    .unwrap_or(self.children.len());
                self.children.insert(at, AttributeNode::new(source, guard));
                at
            }
        };
        &mut self.children[position]
    }

    /// The first failing leaf in check order (its guard's index) and the path of child
    /// indices down to it; `fails(guard)` says whether a leaf's guard fails.
    pub(super) fn first_failure(
        &self,
        fails: &dyn Fn(usize) -> bool,
    ) -> Option<(usize, Vec<usize>)> {
        if let Some(guard) = self.guard {
            if fails(guard) {
                return Some((guard, Vec::new()));
            }
        }
        self.children.iter().enumerate().find_map(|(i, child)| {
            child.first_failure(fails).map(|(guard, mut path)| {
                path.insert(0, i);
                (guard, path)
            })
        })
    }

    /// Counts a failure along `path` (from `first_failure`) and re-sorts where the failing
    /// child was not the first.
    pub(super) fn count_failure(&mut self, path: &[usize]) {
        self.fails += 1;
        let Some((&first, rest)) = path.split_first() else {
            return;
        };
        self.children[first].count_failure(rest);
        if first > 0 {
            sort_by_failures(&mut self.children, |child| child.fails);
        }
    }
}

/// Where Dynamo installs a guard-tree child among its siblings: shorter sources first, then
/// by text.
pub(super) fn install_key(source: &str) -> (usize, &str) {
    (source.len(), source)
}

/// Stably sorts `items` by their failures, most first (ties keep their order).
pub(super) fn sort_by_failures<T>(items: &mut [T], fails: impl Fn(&T) -> u32) {
    items.sort_by_key(|item| std::cmp::Reverse(fails(item)));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(modules: &[&str], name: &str) -> AttributePath {
        AttributePath::of_module(modules.iter().map(ToString::to_string).collect(), name)
    }

    fn order(node: &AttributeNode) -> Vec<String> {
        node.children.iter().map(|c| c.source.clone()).collect()
    }

    /// Siblings start by source length, then text, as measured on PyTorch 2.15 (`a`, `b`,
    /// `scale`, `_modules`, `training` under `L['self']`; `bn`, `fc1`, `drop` under
    /// `_modules`), whatever the reading order.
    #[test]
    fn siblings_start_in_pytorchs_install_order() {
        let paths = [
            path(&["drop"], "training"),
            path(&[], "training"),
            path(&["bn"], "training"),
            path(&[], "scale"),
            path(&["fc1"], "training"),
            path(&[], "a"),
        ];
        let refs: Vec<&AttributePath> = paths.iter().collect();
        let tree = AttributeNode::tree(&refs);
        assert_eq!(
            order(&tree),
            [
                "L['self'].a",
                "L['self'].scale",
                "L['self']._modules",
                "L['self'].training"
            ]
        );
        assert_eq!(
            order(&tree.children[2]),
            [
                "L['self']._modules['bn']",
                "L['self']._modules['fc1']",
                "L['self']._modules['drop']"
            ]
        );
    }

    /// A failure moves the failing branch to the front at every level where it was not
    /// first, and a later failure elsewhere keeps the more-failed branch ahead.
    #[test]
    fn failures_move_a_branch_forward() {
        let paths = [
            path(&[], "scale"),
            path(&["bn"], "training"),
            path(&[], "training"),
        ];
        let refs: Vec<&AttributePath> = paths.iter().collect();
        let mut tree = AttributeNode::tree(&refs);
        let (guard, at) = tree.first_failure(&|g| g == 2).expect("training fails");
        assert_eq!((guard, at.as_slice()), (2, &[2usize][..]));
        tree.count_failure(&at);
        assert_eq!(order(&tree)[0], "L['self'].training");
        let (guard, at) = tree.first_failure(&|g| g != 2).expect("scale and bn fail");
        assert_eq!(guard, 0, "scale is ahead of _modules");
        tree.count_failure(&at);
        assert_eq!(
            order(&tree),
            [
                "L['self'].training",
                "L['self'].scale",
                "L['self']._modules"
            ],
            "one failure each: ties keep their order"
        );
    }
}
