//! The parts of a query lioscope does not run, refused with the construct and where it is
//! written, before anything is planned.

use super::*;

pub(super) fn reject_unsupported_select_parts(select: &ast::Select) -> Result<()> {
    let unsupported_part = |name: &str| Err(Error::unsupported(name.to_owned()));
    if select.top.is_some() {
        return unsupported_part("TOP");
    }
    if select.into.is_some() {
        return unsupported_part("SELECT ... INTO");
    }
    if !select.lateral_views.is_empty()
        || select.prewhere.is_some()
        || !select.cluster_by.is_empty()
        || !select.distribute_by.is_empty()
    {
        return unsupported_part("LATERAL VIEW / PREWHERE / CLUSTER BY / DISTRIBUTE BY");
    }
    if !select.sort_by.is_empty()
        || !select.named_window.is_empty()
        || select.qualify.is_some()
        || select.value_table_mode.is_some()
    {
        return unsupported_part("SORT BY / WINDOW / QUALIFY / AS VALUE");
    }
    if select.exclude.is_some() || select.select_modifiers.is_some() {
        return unsupported_part("select modifiers");
    }
    for from in &select.from {
        if let ast::TableFactor::Table {
            sample,
            with_hints,
            version,
            partitions,
            json_path,
            index_hints,
            with_ordinality,
            ..
        } = &from.relation
        {
            if sample.is_some() {
                return unsupported_part("SAMPLE");
            }
            if !with_hints.is_empty()
                || version.is_some()
                || !partitions.is_empty()
                || json_path.is_some()
                || !index_hints.is_empty()
                || *with_ordinality
            {
                return Err(Error::unsupported(format!("table clause in FROM {}", from.relation)));
            }
        }
    }
    Ok(())
}

pub(super) fn reject_unsupported_query_parts(query: &ast::Query) -> Result<()> {
    if !query.locks.is_empty() {
        return Err(Error::unsupported("FOR UPDATE"));
    }
    if query.for_clause.is_some()
        || query.settings.is_some()
        || query.format_clause.is_some()
        || !query.pipe_operators.is_empty()
    {
        return Err(Error::unsupported(format!("clause of {query}")));
    }
    Ok(())
}

pub(super) fn unsupported(construct: String, at: &impl Spanned) -> Error {
    Error::Unsupported { construct, position: position_of(at) }
}
