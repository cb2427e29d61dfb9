//! The walks the passes share: blocks in an order where a block's single
//! predecessor comes before it, each block starting from the state its
//! single predecessor ended with (a value defined there dominates the
//! block), or from the default state when it has several predecessors or
//! none; the same order as a scoped walk, for a state too large to copy
//! into each block; and the dominance that single-predecessor links give,
//! for the passes that move code down into branches.

use aarchx_ir::Region;

/// Visits every block reachable from the entry once. `visit(region, b,
/// state)` gets the state to start block `b` from and leaves in it the
/// state at the block's end.
pub fn extended_blocks<S: Clone + Default>(region: &mut Region, mut visit: impl FnMut(&mut Region, usize, &mut S)) {
    let n = region.blocks.len();
    if n == 0 {
        return;
    }
    let preds = region.predecessor_counts();
    let mut start: Vec<Option<S>> = vec![None; n];
    let mut seen = vec![false; n];
    let mut work = vec![0usize];
    seen[0] = true;
    while let Some(b) = work.pop() {
        let mut state = start[b].take().unwrap_or_default();
        visit(region, b, &mut state);
        let succs: Vec<usize> = region.blocks[b]
            .insts
            .last()
            .map(|v| region.inst(*v).successors().iter().map(|s| *s as usize).collect())
            .unwrap_or_default();
        for s in succs {
            if !seen[s] {
                seen[s] = true;
                if preds[s] == 1 {
                    start[s] = Some(state.clone());
                }
                work.push(s);
            }
        }
    }
}

/// What [`scoped_blocks`] tells its visitor.
pub enum Scope {
    /// Block `block` starts; `fresh` when nothing is known at its start
    /// (the entry, or a block with several predecessors), else it starts
    /// from the state its single predecessor ended with.
    Enter { block: usize, fresh: bool },
    /// The blocks `block` dominates through single-predecessor links are
    /// done: what they added to the state goes.
    Leave,
}

/// Visits the blocks [`extended_blocks`] visits, depth first through
/// single-predecessor links, telling `visit` where each block's scope
/// starts and ends, so one state with an undo log serves every block.
pub fn scoped_blocks(region: &mut Region, mut visit: impl FnMut(&mut Region, Scope)) {
    enum Step {
        Enter(usize, bool),
        Leave,
    }
    let n = region.blocks.len();
    if n == 0 {
        return;
    }
    let preds = region.predecessor_counts();
    let mut seen = vec![false; n];
    seen[0] = true;
    let mut roots = vec![0usize];
    let mut next_root = 0;
    while let Some(&root) = roots.get(next_root) {
        next_root += 1;
        let mut stack = vec![Step::Enter(root, true)];
        while let Some(step) = stack.pop() {
            let Step::Enter(b, fresh) = step else {
                visit(region, Scope::Leave);
                continue;
            };
            visit(region, Scope::Enter { block: b, fresh });
            stack.push(Step::Leave);
            let Some(&last) = region.blocks[b].insts.last() else { continue };
            for &s in region.inst(last).successors() {
                let s = s as usize;
                if !seen[s] {
                    seen[s] = true;
                    if preds[s] == 1 {
                        stack.push(Step::Enter(s, false));
                    } else {
                        roots.push(s);
                    }
                }
            }
        }
    }
}

/// The blocks of `region` reachable from the entry, each after its single
/// predecessor (depth-first preorder), and each block's dominating parent
/// (its predecessor when it has exactly one, and not itself).
pub fn preorder(region: &Region) -> (Vec<usize>, Vec<Option<usize>>) {
    let n = region.blocks.len();
    let preds = region.predecessor_counts();
    let mut parent = vec![None; n];
    let mut order = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    let mut work = vec![0usize];
    while let Some(b) = work.pop() {
        if b >= n || seen[b] {
            continue;
        }
        seen[b] = true;
        order.push(b);
        let Some(&last) = region.blocks[b].insts.last() else { continue };
        for &s in region.inst(last).successors().iter().rev() {
            let s = s as usize;
            if preds[s] == 1 && s != b && s != 0 {
                parent[s] = Some(b);
            }
            work.push(s);
        }
    }
    (order, parent)
}

/// Whether block `u` is `s` or dominated by it through single-predecessor
/// links (an index past the blocks is in none).
pub fn below(parent: &[Option<usize>], mut u: usize, s: usize) -> bool {
    if u >= parent.len() {
        return false;
    }
    for _ in 0..parent.len() {
        if u == s {
            return true;
        }
        match parent[u] {
            Some(p) => u = p,
            None => return false,
        }
    }
    false
}
