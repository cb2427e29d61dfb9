//! The walk the forwarding passes share: blocks in an order where a
//! block's single predecessor comes before it, each block starting from
//! the state its single predecessor ended with (a value defined there
//! dominates the block), or from the default state when it has several
//! predecessors or none.

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
