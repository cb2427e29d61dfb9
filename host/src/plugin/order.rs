//! Ordering constraints: a pass may declare passes it must run `before` or
//! `after`. The policy's list is the order; this checks it honours every
//! constraint between passes the list contains, and names the passes of a
//! cycle or of a constraint the stages make impossible.

use std::collections::BTreeMap;

use aarchx_pass::Stage;
use petgraph::algo::{astar, toposort};
use petgraph::graphmap::DiGraphMap;

/// A policy's pass list that breaks an ordering constraint.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OrderError {
    #[error("ordering constraints form a cycle: {}", names(.0))]
    Cycle(Vec<String>),
    #[error(
        "`{first}` must run before `{then}` (declared by `{declared_by}`), but `{first}` is a {first_stage}-stage \
         pass and `{then}` a {then_stage}-stage one"
    )]
    Impossible { first: String, then: String, declared_by: String, first_stage: &'static str, then_stage: &'static str },
    #[error("`{first}` must run before `{then}` (declared by `{declared_by}`), but the policy lists it after")]
    Violated { first: String, then: String, declared_by: String },
}

fn names(cycle: &[String]) -> String {
    cycle.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(" before ")
}

/// One pass of the list as the check sees it.
pub struct Entry<'a> {
    pub name: &'a str,
    pub stage: Stage,
    pub before: &'a [String],
    pub after: &'a [String],
}

/// A "`first` runs before `then`" constraint, declared by one of them.
struct Edge<'a> {
    first: &'a str,
    then: &'a str,
    declared_by: &'a str,
}

/// Checks the list `passes` (in policy order) against its constraints:
/// first for cycles, then for constraints no order could meet (across
/// stages), then for ones this order breaks.
pub fn check(passes: &[Entry<'_>]) -> Result<(), OrderError> {
    // Positions of each name (a pass may be listed more than once).
    let mut at: BTreeMap<&str, (usize, usize, Stage)> = BTreeMap::new();
    for (i, p) in passes.iter().enumerate() {
        at.entry(p.name).and_modify(|e| e.1 = i).or_insert((i, i, p.stage));
    }
    let mut edges = Vec::new();
    for p in passes {
        for b in p.before.iter().filter(|b| at.contains_key(b.as_str())) {
            edges.push(Edge { first: p.name, then: b, declared_by: p.name });
        }
        for a in p.after.iter().filter(|a| at.contains_key(a.as_str())) {
            edges.push(Edge { first: a, then: p.name, declared_by: p.name });
        }
    }
    if let Some(cycle) = find_cycle(&edges) {
        return Err(OrderError::Cycle(cycle));
    }
    for e in &edges {
        let (first, then) = (at[e.first], at[e.then]);
        if first.2 > then.2 {
            return Err(OrderError::Impossible {
                first: e.first.to_string(),
                then: e.then.to_string(),
                declared_by: e.declared_by.to_string(),
                first_stage: first.2.name(),
                then_stage: then.2.name(),
            });
        }
        if first.1 >= then.0 {
            return Err(OrderError::Violated {
                first: e.first.to_string(),
                then: e.then.to_string(),
                declared_by: e.declared_by.to_string(),
            });
        }
    }
    Ok(())
}

/// A cycle of the "runs before" graph, as the names along it with the first
/// repeated at the end, starting at its least name (so the message does
/// not depend on the search). petgraph's topological sort finds a pass on
/// a cycle; the shortest way back to it from one of its successors closes
/// the cycle.
fn find_cycle(edges: &[Edge<'_>]) -> Option<Vec<String>> {
    let graph: DiGraphMap<&str, ()> = DiGraphMap::from_edges(edges.iter().map(|e| (e.first, e.then)));
    let start = toposort(&graph, None).err()?.node_id();
    let back = graph.neighbors(start).find_map(|s| astar(&graph, s, |n| n == start, |_| 1, |_| 0))?.1;
    let mut cycle: Vec<&str> = std::iter::once(start).chain(back).collect();
    cycle.pop();
    let least = (0..cycle.len()).min_by_key(|&i| cycle[i]).unwrap_or(0);
    cycle.rotate_left(least);
    cycle.push(cycle[0]);
    Some(cycle.into_iter().map(String::from).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry<'a>(name: &'a str, stage: Stage, before: &'a [String], after: &'a [String]) -> Entry<'a> {
        Entry { name, stage, before, after }
    }

    #[test]
    fn constraints() {
        let none: Vec<String> = vec![];
        let b_mo = vec!["memory-order".to_string()];
        let a_dec = vec!["decode".to_string()];
        let ok = [
            entry("decode", Stage::Decode, &none, &none),
            entry("x", Stage::Transform, &b_mo, &a_dec),
            entry("memory-order", Stage::Lowering, &none, &none),
        ];
        assert_eq!(check(&ok), Ok(()));
        // Constraints on passes the policy does not list are ignored.
        assert_eq!(check(&ok[1..2]), Ok(()));

        let before_y = vec!["y".to_string()];
        let wrong = [entry("y", Stage::Transform, &none, &none), entry("x", Stage::Transform, &before_y, &none)];
        assert_eq!(
            check(&wrong).unwrap_err().to_string(),
            "`x` must run before `y` (declared by `x`), but the policy lists it after"
        );
        let late =
            [entry("memory-order", Stage::Lowering, &none, &none), entry("late", Stage::Transform, &none, &b_mo)];
        assert!(check(&late).unwrap_err().to_string().starts_with(
            "`memory-order` must run before `late` (declared by `late`), but `memory-order` is a lowering-stage"
        ));
    }

    #[test]
    fn cycles() {
        let b = vec!["b".to_string()];
        let c = vec!["c".to_string()];
        let a = vec!["a".to_string()];
        let none: Vec<String> = vec![];
        let cyc = [
            entry("a", Stage::Transform, &b, &none),
            entry("b", Stage::Transform, &c, &none),
            entry("c", Stage::Transform, &a, &none),
        ];
        assert_eq!(
            check(&cyc).unwrap_err().to_string(),
            "ordering constraints form a cycle: `a` before `b` before `c` before `a`"
        );
        let cyc = [entry("a", Stage::Transform, &b, &none), entry("b", Stage::Transform, &a, &none)];
        assert_eq!(check(&cyc), Err(OrderError::Cycle(vec!["a".into(), "b".into(), "a".into()])));
        // A pass that must run before itself.
        let own = [entry("a", Stage::Transform, &a, &none)];
        assert_eq!(check(&own), Err(OrderError::Cycle(vec!["a".into(), "a".into()])));
        // A cycle beside passes that are on none.
        let d = vec!["d".to_string()];
        let side = [
            entry("d", Stage::Transform, &none, &none),
            entry("e", Stage::Transform, &d, &none),
            entry("c", Stage::Transform, &b, &none),
            entry("b", Stage::Transform, &c, &none),
        ];
        assert_eq!(check(&side), Err(OrderError::Cycle(vec!["b".into(), "c".into(), "b".into()])));
    }
}
