//! EXPLAIN's text: a plan tree formatted as DBMS_XPLAN shows it, rows and cost as
//! Oracle writes them.

use super::*;

/// Formats a plan tree as DBMS_XPLAN shows it: the nodes from the root down (their
/// position is the Id), indented by depth, with each one's estimated rows and cost
/// (blank where the optimizer made no estimate), then the predicates by Id and the notes.
pub fn format_plan(tree: &PlanTree, notes: &[String]) -> Vec<String> {
    let order = tree.pre_order();
    let nodes: Vec<&PlanNode> = order.iter().map(|&(id, _)| tree.node(id)).collect();
    let ops: Vec<String> =
        order.iter().zip(&nodes).map(|(&(_, depth), n)| format!("{}{}", " ".repeat(depth), n.operation)).collect();
    let rows: Vec<String> =
        nodes.iter().map(|n| n.estimate.map_or_else(String::new, |e| oracle_count(e.rows))).collect();
    let costs: Vec<String> =
        nodes.iter().map(|n| n.estimate.map_or_else(String::new, |e| format!("{:.0}", e.cost.ceil()))).collect();
    let op_w = ops.iter().map(String::len).max().unwrap_or(9).max(9);
    let name_w = nodes.iter().map(|n| n.object.len()).max().unwrap_or(4).max(4);
    let rows_w = rows.iter().map(String::len).max().unwrap_or(0).max(4);
    let cost_w = costs.iter().map(String::len).max().unwrap_or(0).max(4);
    let rule = "-".repeat(op_w + name_w + rows_w + cost_w + 19);
    let mut out = vec![
        rule.clone(),
        format!("| Id  | {:<op_w$} | {:<name_w$} | {:>rows_w$} | {:>cost_w$} |", "Operation", "Name", "Rows", "Cost"),
        rule.clone(),
    ];
    for (id, (n, op)) in nodes.iter().zip(&ops).enumerate() {
        let star = if n.predicates.is_empty() { ' ' } else { '*' };
        out.push(format!(
            "|{star}{id:>3} | {op:<op_w$} | {:<name_w$} | {:>rows_w$} | {:>cost_w$} |",
            n.object, rows[id], costs[id]
        ));
    }
    out.push(rule);
    let predicates: Vec<String> = nodes
        .iter()
        .enumerate()
        .flat_map(|(id, n)| n.predicates.iter().map(move |p| format!("{id:>4} - {p}")))
        .collect();
    if !predicates.is_empty() {
        out.push(String::new());
        out.push("Predicate Information (identified by operation id):".into());
        out.push("---------------------------------------------------".into());
        out.extend(predicates);
    }
    if !notes.is_empty() {
        out.push(String::new());
        out.push("Note".into());
        out.push("-----".into());
        out.extend(notes.iter().map(|n| format!("   - {n}")));
    }
    out
}

/// A row count as DBMS_XPLAN prints it: whole, at least 1, with K or M past five digits.
pub(super) fn oracle_count(rows: f64) -> String {
    let n = rows.round().max(1.0) as u64;
    match n {
        0..=99_999 => n.to_string(),
        100_000..=99_999_999 => format!("{}K", n / 1000),
        _ => format!("{}M", n / 1_000_000),
    }
}
